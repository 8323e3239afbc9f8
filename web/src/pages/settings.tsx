// Settings: agent tokens and their scopes (create with labels chosen from those that exist, what each
// sees, revoke), the scope rules (which label opens which item kinds, edited in place) and embedding
// models (which one search uses).
import { useEffect, useState } from 'preact/hooks';
import { call, type Result } from '../api';
import { formatDate, Loading, Page, Status, useAction, useLoad, TableHead, type Loaded } from '../ui';

type Scopes = Result<'memex.scopes.get'>;

export function SettingsPage() {
  return (
    <Page title="Settings">
      <div class="columns">
        <Tokens />
        <Models />
      </div>
    </Page>
  );
}

/** What a set of labels opens under the rules: the kinds every session sees, then each label's. */
function opens(rules: Scopes['rules'], labels: string[]): string[] {
  return [...new Set(rules.filter((r) => r.when === '*' || labels.includes(r.when)).flatMap((r) => r.kinds))].sort();
}

/**
 * Agent tokens and their scopes: a new token's labels are chosen from the labels that exist (the
 * scope rules' labels, sources' and other tokens' labels) or typed; the form says what they will
 * let it see before it is made, and the table what each token sees.
 */
function Tokens() {
  const tokens = useLoad(() => call('memex.tokens.list', {}), []);
  const rules = useLoad(() => call('memex.scopes.get', {}), []);
  const sources = useLoad(() => call('memex.sources.list', {}), []);
  const [name, setName] = useState('');
  const [chosen, setChosen] = useState<string[]>([]);
  const [typed, setTyped] = useState('');
  const [made, setMade] = useState<{ token: string; labels: string[] } | null>(null);
  const [act, state] = useAction();
  const labels = [...new Set([...chosen, ...typed.split(/[\s,]+/).filter(Boolean)])].sort();
  const known = [
    ...new Set([
      ...(rules.data?.rules ?? []).map((r) => r.when).filter((when) => when !== '*'),
      ...(sources.data?.sources ?? []).flatMap((source) => source.settings?.labels ?? []),
      ...(tokens.data?.tokens ?? []).flatMap((token) => token.labels),
    ]),
  ].sort();
  const toggle = (label: string, on: boolean) => setChosen(on ? [...chosen, label] : chosen.filter((l) => l !== label));
  const reload = async (seq: number) => {
    await call('memex.tokens.list', { min_seq: seq });
    await Promise.all([tokens.reload(), rules.reload()]);
  };
  const create = (event: Event) => {
    event.preventDefault();
    void act(async () => {
      const answer = await call('memex.tokens.create', { name, labels });
      setMade({ token: answer.token, labels: answer.labels });
      setName('');
      setChosen([]);
      setTyped('');
      await reload(answer.seq);
    });
  };
  const revoke = (id: string) => act(async () => reload((await call('memex.tokens.revoke', { id })).seq), 'Revoked.');
  const kindsOf = (id: string) => rules.data?.tokens.find((t) => t.id === id)?.kinds ?? [];
  return (
    <section aria-labelledby="tokens-title">
      <h2 id="tokens-title">Agent tokens and scopes</h2>
      <form onSubmit={create}>
        <label>
          Name <input id="token-name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <fieldset>
          <legend>Labels</legend>
          {known.map((label) => (
            <label key={label} class="check">
              <input
                type="checkbox"
                checked={chosen.includes(label)}
                onChange={(e) => toggle(label, e.currentTarget.checked)}
              />{' '}
              {label}
            </label>
          ))}
          <label>
            Other labels{' '}
            <input
              id="token-labels"
              value={typed}
              placeholder="client:acme"
              onInput={(e) => setTyped(e.currentTarget.value)}
            />
          </label>
        </fieldset>
        {rules.data && (
          <p class="hint" aria-live="polite">
            It will see: {opens(rules.data.rules, labels).join(', ')}
            {labels.length ? ` — items labelled ${labels.join(' or ')}, or with no label` : ' — items with no label'}.
          </p>
        )}
        <button type="submit" disabled={state.busy}>
          Create token
        </button>
      </form>
      {made && (
        <p class="notice" role="status">
          The new token (shown once): <code class="secret">{made.token}</code>. Its labels:{' '}
          {made.labels.length ? made.labels.join(', ') : 'none'}.
        </p>
      )}
      <Status {...state} />
      <Loading loaded={tokens}>
        {({ tokens: list }) => (
          <table aria-labelledby="tokens-title">
            <TableHead columns={['Name', 'Labels', 'Sees', 'Created', '']} />
            <tbody>
              {list.map((t) => (
                <tr key={t.id}>
                  <td>{t.name || t.id}</td>
                  <td>{t.labels.join(', ') || '—'}</td>
                  <td>{t.revoked_at ? <span class="muted">nothing</span> : kindsOf(t.id).join(', ')}</td>
                  <td>{formatDate(t.created_at)}</td>
                  <td>
                    {t.revoked_at ? (
                      <span class="muted">revoked {formatDate(t.revoked_at)}</span>
                    ) : (
                      <button
                        type="button"
                        class="link danger"
                        onClick={() => revoke(t.id)}
                        aria-label={`Revoke ${t.name || t.id}`}
                      >
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Loading>
      <ScopeRules scopes={rules} />
    </section>
  );
}

/** One rule as the editor holds it: the kinds as typed. */
interface DraftRule {
  when: string;
  kinds: string;
}

const WHERE_FROM: Record<Scopes['from'], string> = {
  set: 'set here',
  file: 'read from $MEMEX_HOME/scopes.json until they are saved here',
  defaults: 'the defaults until they are saved here',
};

/**
 * The scope rules, edited in place: a label (or * for every token) and the item kinds it opens.
 * Saving replaces them all (memex.scopes.set, logged, so a replay keeps them); every token's
 * calls follow at once, and the tokens table above says what each now sees.
 */
function ScopeRules({ scopes }: { scopes: Loaded<Scopes> }) {
  const [draft, setDraft] = useState<DraftRule[]>([]);
  const [act, state] = useAction();
  useEffect(() => {
    setDraft((scopes.data?.rules ?? []).map((rule) => ({ when: rule.when, kinds: rule.kinds.join(', ') })));
  }, [scopes.data]);
  const edit = (i: number, change: Partial<DraftRule>) =>
    setDraft(draft.map((rule, j) => (j === i ? { ...rule, ...change } : rule)));
  const save = (event: Event) => {
    event.preventDefault();
    void act(async () => {
      const rules = draft.map((rule) => ({
        when: rule.when.trim(),
        kinds: rule.kinds.split(/[\s,]+/).filter(Boolean),
      }));
      const { seq } = await call('memex.scopes.set', { rules });
      await call('memex.scopes.get', { min_seq: seq });
      await scopes.reload();
    }, 'Scope rules saved.');
  };
  const name = (rule: DraftRule, i: number) =>
    rule.when.trim() === '*' ? 'every token' : rule.when.trim() || `rule ${i + 1}`;
  return (
    <Loading loaded={scopes}>
      {({ from }) => (
        <form onSubmit={save} aria-labelledby="rules-title">
          <h3 id="rules-title">Scope rules</h3>
          <table class="scope-rules">
            <TableHead columns={['Label', 'Opens (item kinds)', '']} />
            <tbody>
              {draft.map((rule, i) => (
                <tr key={i}>
                  <td>
                    <input
                      value={rule.when}
                      required
                      aria-label={`Label of rule ${i + 1}`}
                      onInput={(e) => edit(i, { when: e.currentTarget.value })}
                    />
                  </td>
                  <td>
                    <input
                      value={rule.kinds}
                      aria-label={`Kinds ${name(rule, i)} opens`}
                      onInput={(e) => edit(i, { kinds: e.currentTarget.value })}
                    />
                  </td>
                  <td>
                    <button
                      type="button"
                      class="link danger"
                      aria-label={`Remove the rule for ${name(rule, i)}`}
                      onClick={() => setDraft(draft.filter((_, j) => j !== i))}
                    >
                      Remove
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <div class="row">
            <button type="button" onClick={() => setDraft([...draft, { when: '', kinds: '' }])}>
              Add rule
            </button>
            <button type="submit" disabled={state.busy}>
              Save rules
            </button>
          </div>
          <Status {...state} />
          <p class="hint">
            These rules are {WHERE_FROM[from]}. A label of <code>*</code> opens its kinds to every token; a token sees
            an item of a kind its labels open when the item has no label or shares one with the token, and never spam.
            Kinds are separated by commas (<code>email, attachment</code>).
          </p>
        </form>
      )}
    </Loading>
  );
}

function Models() {
  const models = useLoad(() => call('memex.models.list', {}), []);
  const [act, state] = useAction();
  const use = (space: string) =>
    act(async () => {
      const { seq } = await call('memex.models.use', { space });
      await call('memex.models.list', { min_seq: seq });
      await models.reload();
    }, `Search will use ${space} once it is filled.`);
  return (
    <section aria-labelledby="models-title">
      <h2 id="models-title">Embedding models</h2>
      <Status {...state} />
      <Loading loaded={models}>
        {({ active, chosen, models: list }) => (
          <table>
            <TableHead columns={['Space', 'Kind', 'Filled', 'State', '']} />
            <tbody>
              {list.map((m) => (
                <tr key={m.space}>
                  <td>
                    {m.space}
                    {m.space === active && ' (active)'}
                    {m.space === chosen && m.space !== active && ' (chosen)'}
                  </td>
                  <td>{m.kind}</td>
                  <td>
                    {m.embedded_items}/{m.total_items}
                  </td>
                  <td>{m.state}</td>
                  <td>
                    {m.space !== chosen && (
                      <button type="button" class="link" onClick={() => use(m.space)}>
                        Use
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Loading>
      <p class="hint">
        Add a model with <code>memex models add &lt;path or URL&gt;</code>.
      </p>
    </section>
  );
}

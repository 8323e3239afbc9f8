// Settings: agent tokens (create with labels, revoke) and embedding models (which one search uses).
import { useState } from 'preact/hooks';
import { call } from '../api';
import { formatDate, Loading, Page, Status, useAction, useLoad, TableHead } from '../ui';

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

function Tokens() {
  const tokens = useLoad(() => call('memex.tokens.list', {}), []);
  const [name, setName] = useState('');
  const [labels, setLabels] = useState('');
  const [made, setMade] = useState<{ token: string; labels: string[] } | null>(null);
  const [act, state] = useAction();
  const create = (event: Event) => {
    event.preventDefault();
    void act(async () => {
      const answer = await call('memex.tokens.create', {
        name,
        labels: labels.split(/[\s,]+/).filter(Boolean),
      });
      setMade({ token: answer.token, labels: answer.labels });
      setName('');
      setLabels('');
      await call('memex.tokens.list', { min_seq: answer.seq });
      await tokens.reload();
    });
  };
  const revoke = (id: string) =>
    act(async () => {
      const { seq } = await call('memex.tokens.revoke', { id });
      await call('memex.tokens.list', { min_seq: seq });
      await tokens.reload();
    }, 'Revoked.');
  return (
    <section aria-labelledby="tokens-title">
      <h2 id="tokens-title">Agent tokens</h2>
      <form onSubmit={create} class="row">
        <label>
          Name <input id="token-name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Labels{' '}
          <input
            id="token-labels"
            value={labels}
            placeholder="mail, client:acme"
            onInput={(e) => setLabels(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={state.busy}>
          Create token
        </button>
      </form>
      {made && (
        <p class="notice" role="status">
          The new token (shown once): <code class="secret">{made.token}</code>. Its scope:{' '}
          {made.labels.length
            ? `the labels ${made.labels.join(', ')} (what each lets it see is in $MEMEX_HOME/scopes.json)`
            : 'no labels'}
          .
        </p>
      )}
      <Status {...state} />
      <Loading loaded={tokens}>
        {({ tokens: list }) => (
          <table>
            <TableHead columns={['Name', 'Labels', 'Created', '']} />
            <tbody>
              {list.map((t) => (
                <tr key={t.id}>
                  <td>{t.name || t.id}</td>
                  <td>{t.labels.join(', ') || '—'}</td>
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
    </section>
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

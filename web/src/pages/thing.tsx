// A thing's card: facts with their sources, aliases, timeline by month, related things; the
// owner corrects it in place (retract or add a link, merge into another thing, split a merge).
import { useState } from 'preact/hooks';
import { call, type Card, type Fact, type Session } from '../api';
import { navigate, paths } from '../router';
import { EndLink, formatDate, ItemLink, Loading, Page, Status, ThingLink, useAction, useLoad } from '../ui';
import { ThingInput } from './thing-input';
import { AddToTrail } from './trails';

export function ThingPage({ entityKey, session }: { entityKey: string; session: Session }) {
  const card = useLoad(() => call('memex.entity.get', { key: entityKey, timeline_limit: 30 }), [entityKey]);
  const owner = session.kind === 'owner';
  return (
    <Loading loaded={card}>
      {(c) => (
        <Page
          title={c.entity.name}
          actions={
            <div class="actions">
              <a class="button" href={paths.graph(c.entity.key)}>
                Graph
              </a>
              <AddToTrail target={c.entity.key} />
            </div>
          }
        >
          <p class="meta">
            <span class={`kind kind-${c.entity.kind}`}>{c.entity.kind}</span> <code>{c.entity.key}</code> ·{' '}
            {c.stats.items} items, {formatDate(c.stats.first_at)} – {formatDate(c.stats.last_at)}
            {c.resolved_from && ` · (was ${c.resolved_from})`}
          </p>
          {c.entity.aliases.length > 0 && <p>Also known as: {c.entity.aliases.join(', ')}</p>}
          {c.why && (
            <p class="why">
              <strong>Why an organization:</strong> {c.why}
            </p>
          )}
          {c.own_domains.length > 0 && (
            <p class="why">
              <strong>Own mail domains:</strong> {c.own_domains.join(', ')} (no organization: nobody else writes from
              them and nothing else names them one)
            </p>
          )}
          <div class="columns">
            <div>
              <Facts card={c} owner={owner} reload={card.reload} />
              {owner && <Corrections card={c} reload={card.reload} />}
            </div>
            <div>
              <MonthBars entityKey={c.entity.key} />
              <section aria-labelledby="timeline-title">
                <h2 id="timeline-title">Timeline</h2>
                <ol class="timeline">
                  {c.timeline.map((t) => (
                    <li key={t.item.id}>
                      <span class="muted">{formatDate(t.item.occurred_at as string | null)}</span>{' '}
                      <ItemLink item={t.item} /> <span class="muted">({t.rels.join(', ')})</span>
                    </li>
                  ))}
                </ol>
              </section>
              <Related entityKey={c.entity.key} />
            </div>
          </div>
        </Page>
      )}
    </Loading>
  );
}

function Facts({ card, owner, reload }: { card: Card; owner: boolean; reload: () => Promise<void> }) {
  const [act, state] = useAction();
  const retract = (fact: Fact) =>
    act(async () => {
      const { seq } = await call('memex.link.retract', { link_id: fact.link_id, reason: 'corrected in the web UI' });
      await call('memex.entity.get', { key: card.entity.key, min_seq: seq });
      await reload();
    }, 'Link retracted.');
  return (
    <section aria-labelledby="facts-title">
      <h2 id="facts-title">Facts</h2>
      <Status {...state} />
      <ul class="facts">
        {card.facts.map((fact) => (
          <li key={fact.link_id} class={`fact ${fact.basis}`}>
            <span class="rel">{fact.direction === 'out' ? fact.rel : `${fact.rel} ←`}</span>{' '}
            <EndLink end={fact.other} />
            <span class="muted">
              {' '}
              · {fact.basis}
              {fact.basis === 'inferred' && ` (${Math.round(fact.confidence * 100)}%)`} by {fact.made_by}
              {fact.confirmed && ' · confirmed'}
              {(fact.valid_from || fact.valid_to) && ` · ${formatDate(fact.valid_from)} – ${formatDate(fact.valid_to)}`}
            </span>
            {fact.evidence.length > 0 && (
              <span class="sources">
                {' '}
                sources:{' '}
                {fact.evidence.map((e, i) => (
                  <a key={i} href={paths.item(e.item.replace(/^item:/, ''))} title={e.quote ?? 'evidence'}>
                    [{i + 1}]
                  </a>
                ))}
              </span>
            )}
            {owner && (
              <button
                type="button"
                class="link danger"
                onClick={() => retract(fact)}
                aria-label={`Retract ${fact.rel} link`}
              >
                Retract
              </button>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

const RELS = ['works_at', 'knows', 'member_of', 'about', 'related_to', 'part_of'];

function Corrections({ card, reload }: { card: Card; reload: () => Promise<void> }) {
  const [rel, setRel] = useState('works_at');
  const [dst, setDst] = useState('');
  const [into, setInto] = useState('');
  const [act, state] = useAction();
  const key = card.entity.key;
  const addLink = (event: Event) => {
    event.preventDefault();
    void act(async () => {
      const { seq } = await call('memex.link.add', { src: key, rel, dst });
      await call('memex.entity.get', { key, min_seq: seq });
      setDst('');
      await reload();
    }, 'Link added.');
  };
  const merge = (event: Event) => {
    event.preventDefault();
    if (!confirm(`Merge ${card.entity.name} into ${into}? (A split undoes it.)`)) return;
    void act(async () => {
      const { seq } = await call('memex.entity.merge', { from: key, into });
      await call('memex.entity.get', { key: into, min_seq: seq });
      navigate(paths.thing(into));
    }, 'Merged.');
  };
  const split = (mergeId: string) =>
    act(async () => {
      const { seq } = await call('memex.entity.split', { merge_id: mergeId });
      await call('memex.entity.get', { key, min_seq: seq });
      await reload();
    }, 'Split.');
  return (
    <section aria-labelledby="corrections-title" class="corrections">
      <h2 id="corrections-title">Correct</h2>
      <form onSubmit={addLink} class="row">
        <label>
          Link
          <select value={rel} onChange={(e) => setRel(e.currentTarget.value)}>
            {RELS.map((r) => (
              <option key={r}>{r}</option>
            ))}
          </select>
        </label>
        <ThingInput id="link-dst" label="to" value={dst} onChange={setDst} />
        <button type="submit" disabled={!dst || state.busy}>
          Add link
        </button>
      </form>
      <form onSubmit={merge} class="row">
        <ThingInput id="merge-into" label="Merge into" value={into} onChange={setInto} />
        <button type="submit" disabled={!into || state.busy}>
          Merge
        </button>
      </form>
      {card.merged.length > 0 && (
        <ul>
          {card.merged.map((m) => (
            <li key={m.merge_id}>
              Merged from {m.name} <code>{m.key}</code>{' '}
              <button type="button" onClick={() => split(m.merge_id)}>
                Split
              </button>
            </li>
          ))}
        </ul>
      )}
      <Status {...state} />
    </section>
  );
}

function MonthBars({ entityKey }: { entityKey: string }) {
  const months = useLoad(() => call('memex.months', { key: entityKey }), [entityKey]);
  const rows = months.data?.months ?? [];
  const most = Math.max(1, ...rows.map((m) => m.items));
  if (!rows.length) return null;
  return (
    <section aria-labelledby="months-title">
      <h2 id="months-title">By month</h2>
      <ul class="months">
        {rows.slice(-24).map((m) => (
          <li key={m.month}>
            <span class="month">{m.month}</span>
            <span class="bar" style={{ width: `${(m.items / most) * 100}%` }} />
            <span class="count">{m.items}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}

function Related({ entityKey }: { entityKey: string }) {
  const related = useLoad(() => call('memex.entity.neighbors', { key: entityKey, limit: 12 }), [entityKey]);
  if (!related.data?.neighbors.length) return null;
  return (
    <section aria-labelledby="related-title">
      <h2 id="related-title">Related</h2>
      <ul>
        {related.data.neighbors.map((n) => (
          <li key={n.entity.key}>
            <ThingLink thing={n.entity} /> <span class="muted">{n.shared_items} shared</span>
          </li>
        ))}
      </ul>
    </section>
  );
}

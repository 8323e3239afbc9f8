// The review queue: merge suggestions and low-confidence links. j/k pick an entry, a accepts, r rejects.
import { useEffect, useState } from 'preact/hooks';
import { call, type Result } from '../api';
import { EndLink, Loading, Page, Status, ThingLink, useAction, useLoad } from '../ui';

type Entry = Result<'memex.review.list'>['items'][number];

export function ReviewPage() {
  const queue = useLoad(() => call('memex.review.list', { limit: 100 }), []);
  const [selected, setSelected] = useState(0);
  const [act, state] = useAction();
  const items = queue.data?.items ?? [];
  const decide = (entry: Entry, decision: 'accept' | 'reject') =>
    act(
      async () => {
        const { seq } = await call('memex.review.decide', { id: entry.id, decision });
        await call('memex.review.list', { limit: 1, min_seq: seq });
        await queue.reload();
      },
      decision === 'accept' ? 'Accepted.' : 'Rejected.',
    );
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if ((event.target as HTMLElement).matches('input, textarea, select') || !items.length) return;
      const entry = items[Math.min(selected, items.length - 1)]!;
      if (event.key === 'j') setSelected((i) => Math.min(i + 1, items.length - 1));
      else if (event.key === 'k') setSelected((i) => Math.max(i - 1, 0));
      else if (event.key === 'a') void decide(entry, 'accept');
      else if (event.key === 'r') void decide(entry, 'reject');
      else return;
      event.preventDefault();
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [items, selected]);
  return (
    <Page title="Review">
      <p class="hint">
        Keys: <kbd>j</kbd>/<kbd>k</kbd> move, <kbd>a</kbd> accept, <kbd>r</kbd> reject.
      </p>
      <Status {...state} />
      <Loading loaded={queue}>
        {({ items: list }) => (
          <ol class="review">
            {list.map((entry, i) => (
              <li
                key={entry.id}
                class={i === selected ? 'entry selected' : 'entry'}
                aria-current={i === selected ? 'true' : undefined}
              >
                <p>
                  <span class="kind">{entry.kind}</span> {entry.summary}
                </p>
                <p>
                  {entry.entities.map((e) => (
                    <span key={e.key} class="pill">
                      <ThingLink thing={e} />
                    </span>
                  ))}
                  {entry.fact && (
                    <span>
                      {entry.fact.rel} <EndLink end={entry.fact.other} /> ({Math.round(entry.fact.confidence * 100)}%)
                    </span>
                  )}
                </p>
                <button type="button" onClick={() => decide(entry, 'accept')} disabled={state.busy}>
                  Accept
                </button>{' '}
                <button type="button" class="secondary" onClick={() => decide(entry, 'reject')} disabled={state.busy}>
                  Reject
                </button>
              </li>
            ))}
            {list.length === 0 && <li class="muted">Nothing to review.</li>}
          </ol>
        )}
      </Loading>
    </Page>
  );
}

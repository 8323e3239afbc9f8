// Signals over the notes and the inferences minted from them (seed 001): dismiss or snooze a
// signal; inferences whose sources changed are marked stale, those whose sources are gone orphaned.
import { useState } from 'preact/hooks';
import { call } from '../api';
import { formatDate, ItemLink, Loading, Page, Status, useAction, useLoad } from '../ui';

const STATUSES = ['pending', 'all', 'dismissed', 'snoozed', 'minted'] as const;

export function SignalsPage() {
  const [status, setStatus] = useState<(typeof STATUSES)[number]>('pending');
  const signals = useLoad(() => call('memex.signals.list', { status, limit: 100 }), [status]);
  const inferences = useLoad(() => call('memex.inferences.list', { limit: 50 }), []);
  const [act, state] = useAction();
  const triage = (key: string, action: 'dismiss' | 'snooze' | 'reopen') =>
    act(
      async () => {
        const until = action === 'snooze' ? new Date(Date.now() + 7 * 86400_000).toISOString() : undefined;
        const { seq } = await call('memex.signals.triage', { signal: key, action, ...(until ? { until } : {}) });
        await call('memex.signals.list', { limit: 1, min_seq: seq });
        await signals.reload();
      },
      action === 'dismiss' ? 'Dismissed.' : action === 'snooze' ? 'Snoozed for a week.' : 'Reopened.',
    );
  return (
    <Page title="Signals">
      <div class="row">
        <label>
          Show{' '}
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value as typeof status)}>
            {STATUSES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
      </div>
      <Status {...state} />
      <Loading loaded={signals}>
        {({ signals: list, detection }) => (
          <>
            <p class="muted">
              Detection over {detection.notes} notes
              {detection.detected_at && `, last ${formatDate(detection.detected_at, true)}`}
              {detection.unembedded_notes > 0 && ` (${detection.unembedded_notes} not embedded yet)`}
            </p>
            <ul class="signals">
              {list.map((s) => (
                <li key={s.key} class="signal">
                  <p>
                    <span class="kind">{s.kind.replace('_', ' ')}</span> <span class="status-tag">{s.status}</span>
                    {!s.present && <span class="status-tag">no longer detected</span>} {s.text}
                  </p>
                  <p class="muted">
                    notes:{' '}
                    {s.notes.map((n, i) => (
                      <span key={i}>
                        <ItemLink item={{ id: n.id as string, kind: 'note', title: n.title as string }} />{' '}
                      </span>
                    ))}
                  </p>
                  {s.status !== 'dismissed' && (
                    <button type="button" onClick={() => triage(s.key, 'dismiss')}>
                      Dismiss
                    </button>
                  )}{' '}
                  {s.status === 'new' && (
                    <button type="button" class="secondary" onClick={() => triage(s.key, 'snooze')}>
                      Snooze a week
                    </button>
                  )}{' '}
                  {(s.status === 'dismissed' || s.status === 'snoozed') && (
                    <button type="button" class="secondary" onClick={() => triage(s.key, 'reopen')}>
                      Reopen
                    </button>
                  )}
                </li>
              ))}
              {list.length === 0 && <li class="muted">No signals here.</li>}
            </ul>
          </>
        )}
      </Loading>
      <h2>Inferences</h2>
      <Loading loaded={inferences}>
        {({ inferences: list }) => (
          <ul class="signals">
            {list.map((inf) => (
              <li key={inf.id} class={`inference ${inf.status}`}>
                <p>
                  <strong>{inf.title}</strong> <span class={`status-tag ${inf.status}`}>{inf.status}</span>{' '}
                  <span class="muted">
                    {Math.round(inf.confidence * 100)}% · {inf.model_id}
                  </span>
                </p>
                <p>{inf.summary}</p>
                <p class="muted">
                  sources:{' '}
                  {inf.sources.map((src, i) => (
                    <span
                      key={i}
                      title={src.mark === '~' ? 'changed since' : src.mark === '✗' ? 'deleted' : 'unchanged'}
                    >
                      {src.mark.trim()} {src.title as string}
                      {'; '}
                    </span>
                  ))}
                </p>
              </li>
            ))}
            {list.length === 0 && <li class="muted">No inferences.</li>}
          </ul>
        )}
      </Loading>
    </Page>
  );
}

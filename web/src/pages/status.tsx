// Sources and jobs: services' health and problems, projector lag, each source's state, last scan,
// counts, last error and the work its items wait for on the pipelines (each worker's items and
// whether it is reachable), the pipelines' queues and tier 2's budgets, jobs and photos that failed
// every retry, mail accounts, events that failed to project,
// kept live by the event stream (SSE): every event arriving refreshes the figures (at most every 2 s).
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { call } from '../api';
import { paths } from '../router';
import { formatDate, Loading, Page, Status, useAction, useLoad, TableHead } from '../ui';

interface Health {
  status: string;
  log: { last_seq: number | null };
  services: Array<{
    service: string;
    ready: boolean;
    error?: string;
    projector?: { name: string; checkpoint: number; lag: number; failures: number };
    problems?: string[];
  }>;
}
const REFRESH_MS = 2000;
/**
 * While some source's items wait on the pipelines, and for a while after events arrive, the
 * figures are read again this often: the sources service counts a backlog at most every 5 s, so
 * the count an event's refresh reads can be older than the event (a job queued, a job done).
 */
const BACKLOG_REFRESH_MS = 5000;

type SourceSummary = NonNullable<Awaited<ReturnType<typeof loadStatus>>['sources']>[number];

async function loadStatus() {
  const [health, jobs, failedJobs, failedMedia, accounts, failures, sources] = await Promise.all([
    fetch('/healthz').then((r) => r.json() as Promise<Health>),
    call('memex.jobs.status', {}).catch(() => null),
    call('memex.jobs.failed', { limit: 50 }).catch(() => null),
    call('memex.media.failed', { limit: 50 }).catch(() => null),
    call('memex.mail.accounts', {}).catch(() => null),
    call('memex.admin.failures', {}),
    call('memex.sources.list', {}).catch(() => null),
  ]);
  return {
    health,
    jobs,
    failedJobs,
    failedMedia,
    accounts,
    failures: failures.failures,
    sources: sources?.sources ?? null,
  };
}

export function StatusPage() {
  const status = useLoad(loadStatus, []);
  const [live, setLive] = useState<{ events: number; recent: string[]; connected: boolean }>({
    events: 0,
    recent: [],
    connected: false,
  });
  const lastRefresh = useRef(0);
  const startSeq = status.data?.health.log.last_seq;
  const lastEvent = useRef(0);
  useEffect(() => {
    const waiting = (status.data?.sources ?? []).some((source) => (source.pipeline_backlog ?? 0) > 0);
    if (!waiting && Date.now() - lastEvent.current > BACKLOG_REFRESH_MS + REFRESH_MS) return;
    const timer = setTimeout(status.reload, BACKLOG_REFRESH_MS);
    return () => clearTimeout(timer);
  }, [status.data]);
  const [act, retried] = useAction();
  const retry = () =>
    act(async () => {
      const { results } = await call('memex.admin.failures.retry', {});
      await status.reload();
      const fixed = results.reduce((n, r) => n + r.fixed.length, 0);
      const failing = results.reduce((n, r) => n + r.failing.length, 0);
      if (failing > 0) throw new Error(`${fixed} fixed; ${failing} still fail (reasons above)`);
    }, 'All fixed.');
  const [actOnJobs, jobsRetried] = useAction();
  const retryJobs = () =>
    actOnJobs(async () => {
      await call('memex.jobs.retry', {});
      await status.reload();
    }, 'Queued again; a job that fails again comes back here.');
  const [actOnMedia, mediaRetried] = useAction();
  const retryMedia = () =>
    actOnMedia(async () => {
      await call('memex.media.retry', {});
      await status.reload();
    }, 'Queued again; one that fails again comes back here.');
  useEffect(() => {
    if (startSeq === undefined) return;
    const source = new EventSource(`/api/v1/memex/events?from_seq=${(startSeq ?? 0) + 1}`);
    source.onopen = () => setLive((l) => ({ ...l, connected: true }));
    source.onerror = () => setLive((l) => ({ ...l, connected: false }));
    source.onmessage = () => undefined;
    const onEvent = (event: MessageEvent) => {
      lastEvent.current = Date.now();
      setLive((l) => ({
        connected: true,
        events: l.events + 1,
        recent: [`${event.lastEventId} ${event.type}`, ...l.recent].slice(0, 8),
      }));
      if (Date.now() - lastRefresh.current > REFRESH_MS) {
        lastRefresh.current = Date.now();
        setTimeout(status.reload, REFRESH_MS);
      }
    };
    // SSE events are named by type; listen to the ones worth counting here.
    const types = [
      'item.ingested',
      'item.deleted',
      'part.extracted',
      'embedding.computed',
      'links.inferred',
      'note.put',
      'mail.flags_changed',
      'signals.detected',
      'photo.analyzed',
      'video.analyzed',
      'faces.detected',
      'source.scanned',
      'location.unreachable',
      'location.reachable',
    ];
    for (const type of types) source.addEventListener(type, onEvent);
    return () => source.close();
  }, [startSeq === undefined]);
  return (
    <Page title="Sources & jobs">
      <p class="muted" role="status">
        Live: {live.connected ? 'connected' : 'connecting…'} · {live.events} events since this page opened
      </p>
      <Loading loaded={status}>
        {({ health, jobs, failedJobs, failedMedia, accounts, failures, sources }) => (
          <div class="columns">
            <section aria-labelledby="services-title">
              <h2 id="services-title">Services</h2>
              <p>
                Log: <strong>{health.log.last_seq ?? '—'}</strong> events · {health.status}
              </p>
              <table>
                <TableHead columns={['Service', 'State', 'Projector lag']} />
                <tbody>
                  {health.services.map((s) => (
                    <tr key={s.service}>
                      <td>{s.service}</td>
                      <td class={s.ready && !s.problems?.length ? 'ok' : 'bad'}>
                        {s.ready ? 'ready' : `not ready${s.error ? `: ${s.error}` : ''}`}
                        {s.problems?.map((p) => (
                          <div key={p}>{p}</div>
                        ))}
                      </td>
                      <td>
                        {s.projector
                          ? `${s.projector.lag} behind${s.projector.failures ? `, ${s.projector.failures} failed` : ''}`
                          : '—'}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </section>
            <section aria-labelledby="jobs-title">
              <h2 id="sources-title">Sources</h2>
              {sources === null ? (
                <p class="muted">The sources service is not answering.</p>
              ) : sources.length === 0 ? (
                <p class="muted">No sources (memex sources add a folder).</p>
              ) : (
                <table aria-labelledby="sources-title">
                  <TableHead columns={['Source', 'State', 'Last scan', 'Items', 'Pipelines']} />
                  <tbody>
                    {sources.map((source) => (
                      <tr key={source.id}>
                        <td>
                          {source.name} <span class="muted">({source.kind})</span>
                        </td>
                        <td class={source.state === 'active' ? 'ok' : 'bad'}>
                          {source.state}
                          {source.reason && <div>{source.reason}</div>}
                        </td>
                        <td>
                          {source.last_scan
                            ? `${formatDate(source.last_scan.finished_at, true)}: ${source.last_scan.files} files, ${source.last_scan.ingested} new, ${source.last_scan.failed} failed`
                            : 'not yet'}
                          {(source.last_scan?.passed_over ?? []).map((passed) => (
                            <div class="muted" key={passed.reason} title={passed.examples.join(', ')}>
                              {`${passed.count} passed over: ${passed.reason}`}
                            </div>
                          ))}
                        </td>
                        <td>{itemsText(source)}</td>
                        <td>{pipelinesText(source)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
              <h2 id="jobs-title">Pipeline backlog</h2>
              {jobs ? (
                <table>
                  <TableHead columns={['Priority', 'Waiting', 'In progress']} />
                  <tbody>
                    {jobs.queues.map((q) => (
                      <tr key={q.priority}>
                        <td>{q.priority}</td>
                        <td>{q.waiting}</td>
                        <td>{q.in_progress}</td>
                      </tr>
                    ))}
                  </tbody>
                  <caption>{jobs.workers} workers</caption>
                </table>
              ) : (
                <p class="muted">The pipelines service is not answering.</p>
              )}
              {jobs?.tier2 && (
                <>
                  <h2 id="tier2-title">Tier 2 (chat models)</h2>
                  <p>
                    {jobs.tier2.waiting} waiting, {jobs.tier2.in_progress} in progress, {jobs.tier2.done} done,{' '}
                    {jobs.tier2.failed} failed
                    {jobs.tier2.last_failure && <span class="bad"> · last failure: {jobs.tier2.last_failure}</span>}
                  </p>
                  <table aria-labelledby="tier2-title">
                    <TableHead columns={['Model', 'Spent today', 'Budget']} />
                    <tbody>
                      {jobs.tier2.models.map((m) => (
                        <tr key={m.model}>
                          <td>
                            {m.model} <span class="muted">({m.tasks.join(', ')})</span>
                          </td>
                          <td>
                            {m.spent_today.requests} requests, {m.spent_today.tokens} tokens, $
                            {m.spent_today.cost.toFixed(2)}
                          </td>
                          <td class={m.paused_until ? 'bad' : ''}>
                            {budgetText(m.budget)}
                            {m.paused_until && (
                              <div>
                                paused until {formatDate(m.paused_until, true)}: {m.paused_because}
                              </div>
                            )}
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </>
              )}
              <h2>Mail sources</h2>
              <ul>
                {(accounts?.accounts ?? []).map((a) => (
                  <li key={a.account}>
                    {a.account} <span class="muted">({a.origin})</span>: {a.messages} messages, {a.unread} unread
                  </li>
                ))}
                {!accounts?.accounts.length && <li class="muted">No mail accounts.</li>}
              </ul>
              <h2>Events that failed to project</h2>
              {failures.length === 0 ? (
                <p class="muted">None.</p>
              ) : (
                <FailedWork
                  columns={['Projector', 'Event', 'Why']}
                  items={failures}
                  row={(f) => ({
                    key: `${f.projector}-${f.seq}`,
                    cells: [
                      f.projector,
                      <>
                        #{f.seq} {f.event_type} <span class="muted">{f.subject ?? ''}</span>
                      </>,
                      <Why reason={f.error} details={`${f.attempts}×, ${formatDate(f.failed_at, true)}`} />,
                    ],
                  })}
                  retry={retry}
                  label="Retry them"
                />
              )}
              <Status {...retried} />
              <h2>Jobs that failed</h2>
              {!failedJobs || failedJobs.total === 0 ? (
                <p class="muted">{failedJobs ? 'None.' : 'The pipelines service is not answering.'}</p>
              ) : (
                <>
                  <p>
                    {failedJobs.total} failed every retry and were set aside: their items miss passages, vectors or
                    tier-0 facts until they run again.
                  </p>
                  <FailedWork
                    columns={['Job', 'Item', 'Why']}
                    items={failedJobs.jobs}
                    row={(j) => ({
                      key: j.seq,
                      cells: [
                        <>
                          #{j.seq} {j.task} <span class="muted">({j.priority})</span>
                        </>,
                        j.item_id ? <a href={paths.item(j.item_id)}>{j.item_id}</a> : '—',
                        <Why
                          reason={j.reason}
                          details={`${j.attempts}×, ${j.worker}, ${formatDate(j.failed_at, true)}`}
                        />,
                      ],
                    })}
                    retry={retryJobs}
                    label="Run them again"
                  />
                </>
              )}
              <Status {...jobsRetried} />
              <h2>Photos and videos given up on</h2>
              {!failedMedia || failedMedia.total === 0 ? (
                <p class="muted">{failedMedia ? 'None.' : 'The media service is not answering.'}</p>
              ) : (
                <>
                  <p>
                    The media pipeline gave up on {failedMedia.total} after its retries: they have no thumbnails, tags
                    or faces until they run again.
                  </p>
                  <FailedWork
                    columns={['Item', 'Why']}
                    items={failedMedia.items}
                    row={(m) => ({
                      key: m.item_id,
                      cells: [
                        <>
                          <a href={paths.item(m.item_id)}>{m.title}</a> <span class="muted">({m.kind})</span>
                        </>,
                        <Why reason={m.reason} details={`${m.attempts}×, ${formatDate(m.failed_at, true)}`} />,
                      ],
                    })}
                    retry={retryMedia}
                    label="Run them again"
                  />
                </>
              )}
              <Status {...mediaRetried} />
              <h2>Latest events</h2>
              <ul class="events">
                {live.recent.map((line, i) => (
                  <li key={i}>
                    <code>{line}</code>
                  </li>
                ))}
              </ul>
            </section>
          </div>
        )}
      </Loading>
    </Page>
  );
}

/**
 * Work that failed every retry (events, jobs, photos): a row each, with why, and a button to run it
 * all again (its outcome is shown after the list, which is gone once all of it is fixed).
 */
function FailedWork<T>({
  columns,
  items,
  row,
  retry,
  label,
}: {
  columns: string[];
  items: T[];
  row: (item: T) => { key: string | number; cells: ComponentChildren[] };
  retry: () => void;
  label: string;
}) {
  return (
    <>
      <table>
        <TableHead columns={columns} />
        <tbody>
          {items.map((item) => {
            const { key, cells } = row(item);
            return (
              <tr key={key}>
                {cells.map((cell, i) => (
                  <td key={i}>{cell}</td>
                ))}
              </tr>
            );
          })}
        </tbody>
      </table>
      <button type="button" onClick={retry}>
        {label}
      </button>
    </>
  );
}

/** Why something failed, with its attempts and when in grey. */
function Why({ reason, details }: { reason: string; details: string }) {
  return (
    <>
      {reason} <span class="muted">({details})</span>
    </>
  );
}

/** A source's items as a person reads them: a worker's with its failed files and whether it is reachable. */
function itemsText(source: SourceSummary): string {
  if (source.worker)
    return [
      `${source.counts.items} items`,
      source.counts.failed > 0 && `${source.counts.failed} files failed`,
      source.worker.reachable ? 'reachable' : 'unreachable',
    ]
      .filter(Boolean)
      .join(', ');
  return [
    `${source.counts.items} items`,
    source.counts.failed > 0 && `${source.counts.failed} files refused`,
    source.backlog > 0 && `${source.backlog} files waiting for ingest`,
  ]
    .filter(Boolean)
    .join(', ');
}

/** The work its items wait for (pipeline jobs, media's photos and videos; a worker's own queue); the accounts' is not counted. */
function pipelinesText(source: SourceSummary): string {
  if (source.pipeline_backlog === undefined) return '—';
  if (source.pipeline_backlog === 0) return 'nothing waiting';
  const onWorker = source.worker?.jobs_waiting ?? 0;
  return `${source.pipeline_backlog} waiting${onWorker > 0 ? ` (${onWorker} on the worker)` : ''}`;
}

/** A model's limits as a person reads them; none set is said so. */
function budgetText(budget: { requests_per_minute?: number; tokens_per_day?: number; cost_per_day?: number }): string {
  const parts = [
    budget.requests_per_minute !== undefined && `${budget.requests_per_minute} requests/min`,
    budget.tokens_per_day !== undefined && `${budget.tokens_per_day} tokens/day`,
    budget.cost_per_day !== undefined && `$${budget.cost_per_day}/day`,
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : 'no limits';
}

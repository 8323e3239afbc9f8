// Sources and jobs: services' health, the log, projector lag and pipeline backlog, mail accounts,
// kept live by the event stream (SSE): every event arriving refreshes the figures (at most every 2 s).
import { useEffect, useRef, useState } from 'preact/hooks';
import { call } from '../api';
import { Loading, Page, useLoad } from '../ui';

interface Health {
  status: string;
  log: { last_seq: number | null };
  services: Array<{ service: string; ready: boolean; error?: string }>;
}
const REFRESH_MS = 2000;

/** Projector lag from the gateway's Prometheus text: `memex_projector_lag{projector="x"} n`. */
async function projectorLag(): Promise<Array<[string, number]>> {
  const text = await (await fetch('/metrics')).text();
  return [...text.matchAll(/^memex_projector_lag\{projector="([^"]+)"\} (\d+)/gm)].map((m) => [m[1]!, Number(m[2])]);
}

async function loadStatus() {
  const [health, lag, jobs, accounts] = await Promise.all([
    fetch('/healthz').then((r) => r.json() as Promise<Health>),
    projectorLag(),
    call('memex.jobs.status', {}).catch(() => null),
    call('memex.mail.accounts', {}).catch(() => null),
  ]);
  return { health, lag, jobs, accounts };
}

export function StatusPage() {
  const status = useLoad(loadStatus, []);
  const [live, setLive] = useState<{ events: number; recent: string[]; connected: boolean }>({ events: 0, recent: [], connected: false });
  const lastRefresh = useRef(0);
  const startSeq = status.data?.health.log.last_seq;
  useEffect(() => {
    if (startSeq === undefined) return;
    const source = new EventSource(`/api/v1/memex/events?from_seq=${(startSeq ?? 0) + 1}`);
    source.onopen = () => setLive((l) => ({ ...l, connected: true }));
    source.onerror = () => setLive((l) => ({ ...l, connected: false }));
    source.onmessage = () => undefined;
    const onEvent = (event: MessageEvent) => {
      setLive((l) => ({ connected: true, events: l.events + 1, recent: [`${event.lastEventId} ${event.type}`, ...l.recent].slice(0, 8) }));
      if (Date.now() - lastRefresh.current > REFRESH_MS) {
        lastRefresh.current = Date.now();
        setTimeout(status.reload, REFRESH_MS);
      }
    };
    // SSE events are named by type; listen to the ones worth counting here.
    const types = ['item.ingested', 'item.deleted', 'part.extracted', 'embedding.computed', 'links.inferred', 'note.put', 'mail.flags_changed', 'signals.detected'];
    for (const type of types) source.addEventListener(type, onEvent);
    return () => source.close();
  }, [startSeq === undefined]);
  return (
    <Page title="Sources & jobs">
      <p class="muted" role="status">
        Live: {live.connected ? 'connected' : 'connecting…'} · {live.events} events since this page opened
      </p>
      <Loading loaded={status}>
        {({ health, lag, jobs, accounts }) => (
          <div class="columns">
            <section aria-labelledby="services-title">
              <h2 id="services-title">Services</h2>
              <p>
                Log: <strong>{health.log.last_seq ?? '—'}</strong> events · {health.status}
              </p>
              <table>
                <thead>
                  <tr>
                    <th scope="col">Service</th>
                    <th scope="col">State</th>
                    <th scope="col">Projector lag</th>
                  </tr>
                </thead>
                <tbody>
                  {health.services.map((s) => (
                    <tr key={s.service}>
                      <td>{s.service}</td>
                      <td class={s.ready ? 'ok' : 'bad'}>{s.ready ? 'ready' : `not ready${s.error ? `: ${s.error}` : ''}`}</td>
                      <td>{lag.find(([p]) => p === s.service)?.[1] ?? '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </section>
            <section aria-labelledby="jobs-title">
              <h2 id="jobs-title">Pipeline backlog</h2>
              {jobs ? (
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Priority</th>
                      <th scope="col">Waiting</th>
                      <th scope="col">In progress</th>
                    </tr>
                  </thead>
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
              <h2>Mail sources</h2>
              <ul>
                {(accounts?.accounts ?? []).map((a) => (
                  <li key={a.account}>
                    {a.account} <span class="muted">({a.origin})</span>: {a.messages} messages, {a.unread} unread
                  </li>
                ))}
                {!accounts?.accounts.length && <li class="muted">No mail accounts.</li>}
              </ul>
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

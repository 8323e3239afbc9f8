// Calendar: a week (or the next 30 days as an agenda) from memex.calendar.list, each event at its
// instant in this browser's zone and, when it was written in another zone, at its time there; an
// event's page shows its attendees and the meeting brief (memex.calendar.brief).
import { call, type Result } from '../api';
import { navigate, refPath, useLocation } from '../router';
import { Loading, Page, TableHead, useLoad } from '../ui';

type Instance = Result<'memex.calendar.list'>['instances'][number];
type Attendee = Instance['attendees'][number];

const DAY_MS = 86_400_000;

/** Monday 00:00 (this browser's zone) of the week holding `day`. */
function weekStart(day: Date): Date {
  const start = new Date(day.getFullYear(), day.getMonth(), day.getDate());
  start.setDate(start.getDate() - ((start.getDay() + 6) % 7));
  return start;
}

const isoDay = (d: Date) =>
  `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;

/** A time of day in a zone; a zone the browser does not know (a file's own name) shows nothing. */
function timeIn(iso: string, zone?: string): string {
  try {
    return new Date(iso).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', timeZone: zone });
  } catch {
    return '';
  }
}

function When({ event }: { event: Instance | Result<'memex.calendar.brief'> }) {
  if ('all_day' in event && event.all_day) return <span>all day</span>;
  const zone = 'time_zone' in event ? event.time_zone : null;
  const here = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const there = zone && zone !== here ? timeIn(event.start, zone) : '';
  return (
    <span>
      <time dateTime={event.start}>{timeIn(event.start)}</time>–<time dateTime={event.end}>{timeIn(event.end)}</time>
      {there && (
        <span class="muted">
          {' '}
          ({there} {zone})
        </span>
      )}
    </span>
  );
}

export function CalendarPage() {
  const { query } = useLocation();
  const agenda = query.get('view') === 'agenda';
  const week = weekStart(query.get('week') ? new Date(`${query.get('week')}T00:00:00`) : new Date());
  const from = agenda ? new Date(new Date().setHours(0, 0, 0, 0)) : week;
  const to = new Date(from.getTime() + (agenda ? 30 : 7) * DAY_MS);
  const list = useLoad(
    () => call('memex.calendar.list', { from: from.toISOString(), to: to.toISOString() }),
    [from.getTime(), agenda],
  );
  const goWeek = (days: number) => navigate(`/calendar?week=${isoDay(new Date(week.getTime() + days * DAY_MS))}`);
  const days = Array.from({ length: agenda ? 30 : 7 }, (_, i) => new Date(from.getTime() + i * DAY_MS));
  return (
    <Page
      title={
        agenda
          ? 'Calendar: next 30 days'
          : `Calendar: week of ${from.toLocaleDateString(undefined, { dateStyle: 'medium' })}`
      }
      actions={
        <div class="row">
          {!agenda && (
            <>
              <button type="button" onClick={() => goWeek(-7)}>
                Previous week
              </button>
              <button type="button" onClick={() => goWeek(7)}>
                Next week
              </button>
            </>
          )}
          <a class="button" href={agenda ? '/calendar' : '/calendar?view=agenda'}>
            {agenda ? 'Week' : 'Agenda'}
          </a>
        </div>
      }
    >
      <Loading loaded={list}>
        {({ instances, truncated }) => (
          <>
            {truncated && <p class="notice">More events than shown: narrow the range.</p>}
            <ol class="agenda">
              {days.map((day) => {
                const mine = instances.filter((e) => onDay(e, day));
                if (agenda && mine.length === 0) return null;
                return (
                  <li key={day.getTime()}>
                    <h2>{day.toLocaleDateString(undefined, { weekday: 'long', month: 'short', day: 'numeric' })}</h2>
                    {mine.length === 0 ? (
                      <p class="muted">Nothing.</p>
                    ) : (
                      <ul>
                        {mine.map((e) => (
                          <li key={`${e.uid}-${e.start}`}>
                            <When event={e} />{' '}
                            <a href={`/calendar/${encodeURIComponent(e.uid)}`}>{e.summary || '(no title)'}</a>
                            {e.location && <span class="muted"> · {e.location}</span>}
                            {e.status === 'tentative' && <span class="muted"> · tentative</span>}
                          </li>
                        ))}
                      </ul>
                    )}
                  </li>
                );
              })}
            </ol>
            {agenda && instances.length === 0 && <p class="muted">Nothing in the next 30 days.</p>}
          </>
        )}
      </Loading>
    </Page>
  );
}

/** Whether an instance overlaps a day of this browser's calendar (all-day ones by their dates). */
function onDay(event: Instance, day: Date): boolean {
  if (event.all_day && event.start_date && event.end_date) {
    const d = isoDay(day);
    return d >= event.start_date && d < event.end_date;
  }
  const start = day.getTime();
  return Date.parse(event.start) < start + DAY_MS && Date.parse(event.end) > start;
}

/** A brief line as a person reads it: without its `fact: ` lead and the `[refs]` a model is given. */
const readable = (text: string) => text.replace(/^\w+: /, '').replace(/ \[[^\]]*\]$/, '');

export function CalendarEventPage({ uid }: { uid: string }) {
  const brief = useLoad(() => call('memex.calendar.brief', { uid }), [uid]);
  return (
    <Loading loaded={brief}>
      {(event) => (
        <Page title={event.summary || '(no title)'}>
          <p class="meta">
            {new Date(event.start).toLocaleDateString(undefined, { dateStyle: 'full' })} · <When event={event} />
            {event.location && ` · ${event.location}`}
          </p>
          <h2 id="attendees-title">Attendees</h2>
          {event.attendees.length === 0 ? (
            <p class="muted">No attendees.</p>
          ) : (
            <table aria-labelledby="attendees-title">
              <TableHead columns={['Who', 'Answer']} />
              <tbody>
                {event.attendees.map((a: Attendee) => (
                  <tr key={a.address}>
                    <td>
                      <a href={refPath(`person:${a.address}`)}>{a.name || a.address}</a>
                    </td>
                    <td>{a.status}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <h2 id="brief-title">Brief</h2>
          {event.brief.lines.length === 0 ? (
            <p class="muted">The memex knows nothing more about this meeting's people yet.</p>
          ) : (
            <ul class="brief" aria-labelledby="brief-title">
              {event.brief.lines.map((line, i) => (
                <li key={i}>
                  {readable(line.text)}{' '}
                  {line.refs
                    .filter((r) => r.startsWith('item:'))
                    .map((r) => (
                      <a key={r} href={refPath(r)}>
                        source
                      </a>
                    ))}
                  {line.inferred && <span class="muted"> (inferred)</span>}
                </li>
              ))}
            </ul>
          )}
          {event.brief.omitted > 0 && <p class="muted">{event.brief.omitted} more lines left out.</p>}
        </Page>
      )}
    </Loading>
  );
}

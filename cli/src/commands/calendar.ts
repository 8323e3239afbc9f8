import type { Command } from 'commander';
import {
  CalendarBrief,
  CalendarCreate,
  CalendarDelete,
  CalendarFreebusy,
  CalendarList,
  CalendarRsvp,
  CalendarSync,
  CalendarUpdate,
  ContactsCandidates,
  ContactsCandidatesDecide,
  ContactsSync,
  ContactsUpdate,
  type ResultOf,
} from '@memex/contracts';
import { client, output } from '../context.js';

type Instance = ResultOf<typeof CalendarList>['instances'][number];
export type CalendarView = 'day' | 'week' | 'month' | 'agenda';

/**
 * The range of a view around a day (`YYYY-MM-DD`, read in UTC): the day; the ISO week (Monday to
 * Monday) holding it; its month; or an agenda of `days` days from it.
 */
export function viewRange(view: CalendarView, day: string, days = 14): { from: string; to: string } {
  const start = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(start.getTime())) throw new Error(`not a day: ${JSON.stringify(day)} (expected YYYY-MM-DD)`);
  const end = new Date(start);
  if (view === 'day') end.setUTCDate(end.getUTCDate() + 1);
  if (view === 'agenda') end.setUTCDate(end.getUTCDate() + days);
  if (view === 'week') {
    start.setUTCDate(start.getUTCDate() - ((start.getUTCDay() + 6) % 7));
    end.setTime(start.getTime());
    end.setUTCDate(end.getUTCDate() + 7);
  }
  if (view === 'month') {
    start.setUTCDate(1);
    end.setTime(start.getTime());
    end.setUTCMonth(end.getUTCMonth() + 1);
  }
  return { from: start.toISOString(), to: end.toISOString() };
}

function when(instance: Instance, zone: string): string {
  if (instance.all_day) {
    const last = new Date(`${instance.end_date ?? instance.start_date}T00:00:00Z`);
    last.setUTCDate(last.getUTCDate() - 1);
    const lastDay = last.toISOString().slice(0, 10);
    return lastDay > (instance.start_date ?? '')
      ? `${instance.start_date} – ${lastDay}  all day`
      : `${instance.start_date}  all day`;
  }
  const format = new Intl.DateTimeFormat('sv-SE', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
  });
  const start = format.format(new Date(instance.start));
  const end = format.format(new Date(instance.end));
  return `${start} – ${end.slice(0, 10) === start.slice(0, 10) ? end.slice(11) : end}`;
}

export function formatInstances(instances: Instance[], zone: string): string {
  if (instances.length === 0) return 'no events';
  return instances
    .map((i) => {
      const flags = [
        i.status === 'tentative' ? 'tentative' : '',
        i.modified ? 'moved' : '',
        i.recurring ? 'repeats' : '',
      ].filter(Boolean);
      const people = i.attendees.map((a) => `${a.name || a.address} (${a.status})`).join(', ');
      return [
        `${when(i, zone)}  ${i.summary || '(no title)'}${flags.length ? `  [${flags.join(', ')}]` : ''}`,
        i.location ? `    at ${i.location}` : '',
        people ? `    with ${people}` : '',
      ]
        .filter(Boolean)
        .join('\n');
    })
    .join('\n');
}

interface CalendarOptions {
  view: CalendarView;
  day?: string;
  from?: string;
  to?: string;
  days: string;
  zone?: string;
  json?: boolean;
}

function rangeOf(options: CalendarOptions): { from: string; to: string } {
  if (options.from || options.to) {
    if (!options.from || !options.to) throw new Error('give both --from and --to');
    return { from: new Date(options.from).toISOString(), to: new Date(options.to).toISOString() };
  }
  return viewRange(options.view, options.day ?? new Date().toISOString().slice(0, 10), Number(options.days));
}

function written(result: { merged: boolean; seq: number; uid?: string }, uid?: string): string {
  const split =
    result.uid && result.uid !== uid ? `; the instances from there on are the new series ${result.uid}` : '';
  return `${result.merged ? 'done (the event had changed at Google: re-read and merged)' : 'done'}${split}`;
}

interface InstanceOptions {
  instance?: string;
  following?: boolean;
}

/** --instance/--following as memex.calendar.update/delete take them (one instance of a series, or it and all after). */
function instanceTarget(options: InstanceOptions): { recurrence_id?: string; following?: boolean } {
  if (options.following && !options.instance) throw new Error('--following needs --instance: where the series splits');
  return options.instance
    ? { recurrence_id: new Date(options.instance).toISOString(), ...(options.following ? { following: true } : {}) }
    : {};
}

/** The options that pick part of a recurring series. */
function withInstanceOptions(command: Command): Command {
  return command
    .option(
      '--instance <original-start>',
      'only this instance of a recurring series (its original start, as `memex calendar --json` shows recurrence_id)',
    )
    .option('--following', 'with --instance: that instance and every later one (the series is split)');
}

/** `memex calendar` (day, week, month, agenda views), `freebusy`, `brief`, `sync`, the writes to Google; `memex contacts sync`. */
export function registerCalendar(program: Command): void {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const calendar = program
    .command('calendar')
    .description('events from calendar files, invitations in mail and synced calendars: day, week, month or agenda')
    .option('--view <view>', 'day, week, month or agenda', 'agenda')
    .option('--day <YYYY-MM-DD>', 'the day the view is around (default: today)')
    .option('--days <n>', 'how many days the agenda shows', '14')
    .option('--from <time>', 'instead of a view: from this time (ISO 8601)')
    .option('--to <time>', 'to this time')
    .option('--zone <zone>', 'show times in this IANA zone', zone)
    .option('--json', 'print JSON')
    .action(async (options: CalendarOptions) => {
      if (!['day', 'week', 'month', 'agenda'].includes(options.view))
        throw new Error(`--view must be day, week, month or agenda, not ${options.view}`);
      const result = await client().call(CalendarList, rangeOf(options));
      output(
        Boolean(options.json),
        result,
        () =>
          formatInstances(result.instances, options.zone ?? zone) +
          (result.truncated ? '\n(more events: narrow the range)' : ''),
      );
    });
  calendar
    .command('freebusy')
    .description('busy time over every calendar in a range (default: this week)')
    .option('--from <time>', 'from (ISO 8601)')
    .option('--to <time>', 'to (ISO 8601)')
    .option('--zone <zone>', 'show times in this IANA zone', zone)
    .option('--json', 'print JSON')
    .action(async (options: { from?: string; to?: string; zone: string; json?: boolean }) => {
      const range =
        options.from && options.to
          ? { from: new Date(options.from).toISOString(), to: new Date(options.to).toISOString() }
          : viewRange('week', new Date().toISOString().slice(0, 10));
      const { busy } = await client().call(CalendarFreebusy, range);
      const format = new Intl.DateTimeFormat('sv-SE', {
        timeZone: options.zone,
        dateStyle: 'short',
        timeStyle: 'short',
      });
      output(Boolean(options.json), { busy }, () =>
        busy.length === 0
          ? 'free the whole time'
          : busy.map((b) => `busy ${format.format(new Date(b.start))} – ${format.format(new Date(b.end))}`).join('\n'),
      );
    });
  calendar
    .command('brief <uid>')
    .description('before a meeting: what the memex knows about its attendees')
    .option('--budget <bytes>', 'the most UTF-8 bytes of brief', '4096')
    .option('--json', 'print JSON')
    .action(async (uid: string, options: { budget: string; json?: boolean }) => {
      const result = await client().call(CalendarBrief, { uid, budget_bytes: Number(options.budget) });
      output(
        Boolean(options.json),
        result,
        () =>
          `${result.summary}  ${result.start} – ${result.end}${result.location ? `  at ${result.location}` : ''}\n\n${result.brief.text}`,
      );
    });
  calendar
    .command('sync [account]')
    .description('sync the Google calendars now (all accounts, or one)')
    .action(async (account: string | undefined) => {
      const result = await client().call(CalendarSync, account ? { account } : {});
      for (const a of result.accounts)
        for (const c of a.calendars) console.log(`${a.account} ${c.calendar_id}: ${c.mode}, ${c.changed} changed`);
      if (result.accounts.length === 0)
        console.log('no Google account with the calendar scope (memex accounts add google)');
    });
  calendar
    .command('rsvp <uid> <response>')
    .description('answer an invitation in a Google calendar: accepted, declined or tentative')
    .action(async (uid: string, response: string) => {
      if (!['accepted', 'declined', 'tentative'].includes(response))
        throw new Error(`the answer is accepted, declined or tentative, not ${response}`);
      console.log(
        written(
          await client().call(CalendarRsvp, { uid, response: response as 'accepted' | 'declined' | 'tentative' }),
        ),
      );
    });
  withInstanceOptions(
    calendar
      .command('move <uid>')
      .description('move a Google Calendar event, a series, or part of one (refused if someone moved it meanwhile)')
      .requiredOption('--start <time>', 'new start (ISO 8601)')
      .requiredOption('--end <time>', 'new end (ISO 8601)'),
  ).action(async (uid: string, options: { start: string; end: string } & InstanceOptions) => {
    const change = { start: new Date(options.start).toISOString(), end: new Date(options.end).toISOString() };
    console.log(written(await client().call(CalendarUpdate, { uid, ...instanceTarget(options), ...change }), uid));
  });
  withInstanceOptions(
    calendar
      .command('edit <uid>')
      .description('change the title or place of a Google Calendar event, a series, or part of one')
      .option('--summary <text>', 'new title')
      .option('--location <text>', 'new place'),
  ).action(async (uid: string, options: { summary?: string; location?: string } & InstanceOptions) => {
    const { summary, location } = options;
    const change = { ...(summary !== undefined ? { summary } : {}), ...(location !== undefined ? { location } : {}) };
    console.log(written(await client().call(CalendarUpdate, { uid, ...instanceTarget(options), ...change }), uid));
  });
  withInstanceOptions(
    calendar
      .command('delete <uid>')
      .description(
        'delete a Google Calendar event, one instance of a series, or it and all after (refused if it changed at Google meanwhile)',
      ),
  ).action(async (uid: string, options: InstanceOptions) =>
    console.log(written(await client().call(CalendarDelete, { uid, ...instanceTarget(options) }))),
  );
  calendar
    .command('create')
    .description('create an event in a Google calendar')
    .requiredOption('--account <address>', 'the Google account')
    .requiredOption('--summary <text>', 'title')
    .requiredOption('--start <time>', 'start (ISO 8601)')
    .requiredOption('--end <time>', 'end (ISO 8601)')
    .option('--calendar <id>', 'calendar id', 'primary')
    .option('--zone <zone>', 'IANA zone it is written in', zone)
    .option('--location <text>', 'place')
    .option('--attendee <address...>', 'invite these addresses')
    .action(
      async (options: {
        account: string;
        summary: string;
        start: string;
        end: string;
        calendar: string;
        zone: string;
        location?: string;
        attendee?: string[];
      }) => {
        const result = await client().call(CalendarCreate, {
          account: options.account,
          calendar_id: options.calendar,
          summary: options.summary,
          start: new Date(options.start).toISOString(),
          end: new Date(options.end).toISOString(),
          time_zone: options.zone,
          ...(options.location ? { location: options.location } : {}),
          ...(options.attendee ? { attendees: options.attendee } : {}),
        });
        console.log(`created ${result.uid}`);
      },
    );
  const contacts = program.command('contacts').description('Google contacts, mirrored as vCard items');
  contacts
    .command('edit <account> <resource-name>')
    .description("change a Google contact's name, phones or addresses at Google")
    .option('--name <text>', 'new name')
    .option('--phone <number...>', 'the phone numbers (replace them all)')
    .option('--address <text...>', 'the postal addresses (replace them all)')
    .action(
      async (
        account: string,
        resourceName: string,
        options: { name?: string; phone?: string[]; address?: string[] },
      ) => {
        const result = await client().call(ContactsUpdate, {
          account,
          resource_name: resourceName,
          ...(options.name ? { name: options.name } : {}),
          ...(options.phone ? { phones: options.phone } : {}),
          ...(options.address ? { addresses: options.address } : {}),
        });
        console.log(written(result));
      },
    );
  contacts
    .command('candidates <account>')
    .description(
      'people you wrote to from this account who are not its Google contacts (nothing is added until you accept)',
    )
    .option('--json', 'print JSON')
    .action(async (account: string, options: { json?: boolean }) => {
      const result = await client().call(ContactsCandidates, { account });
      output(Boolean(options.json), result, () =>
        result.candidates.length === 0
          ? `no one new among ${result.read} sent messages`
          : result.candidates
              .map((c) => `${c.address}  ${c.name || '-'}  ${c.sent} sent, last ${c.last_sent.slice(0, 10)}`)
              .join('\n'),
      );
    });
  contacts
    .command('accept <account> <address>')
    .description('add someone you wrote to as a Google contact (in the group memex)')
    .option('--name <text>', 'the name to give (default: the one your mail used)')
    .action(async (account: string, address: string, options: { name?: string }) => {
      const result = await client().call(ContactsCandidatesDecide, {
        account,
        address,
        accept: true,
        ...(options.name ? { name: options.name } : {}),
      });
      console.log(`added ${address} as ${result.resource_name}`);
    });
  contacts
    .command('decline <account> <address>')
    .description('do not offer this address as a contact again')
    .action(async (account: string, address: string) => {
      await client().call(ContactsCandidatesDecide, { account, address, accept: false });
      console.log(`${address} will not be offered again`);
    });
  contacts
    .command('sync [account]')
    .description('sync the Google contacts now (all accounts, or one)')
    .action(async (account: string | undefined) => {
      const result = await client().call(ContactsSync, account ? { account } : {});
      for (const a of result.accounts) console.log(`${a.account}: ${a.mode}, ${a.changed} changed`);
      if (result.accounts.length === 0)
        console.log('no Google account with the contacts scope (memex accounts add google)');
    });
}

import { Injectable } from '@nestjs/common';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import {
  CalendarEventSynced,
  CommitmentExtracted,
  CommitmentStatusSet,
  EntityMerged,
  EntityNamed,
  EntitySplitEvent,
  ItemDeleted,
  ItemIngested,
  ItemUnderstood,
  LinkAdded,
  LinkConfirmed,
  LinkRetracted,
  LinksInferred,
  MailSpamMarked,
  NotePut,
  PaperExtracted,
  PeopleSeen,
  PhotoAnalyzed,
  PhotoEventsFound,
  ReviewDismissed,
  StructureExtracted,
  TrailAppended,
  TrailCommented,
  TrailCreated,
  ThreadJoined,
  TrailReordered,
  VideoAnalyzed,
  makerString,
  type EventOf,
  type Place,
} from '@memex/contracts';
import { On, OnBatch, Projector, type LoggedOf } from '@memex/runtime';
import { linkId, normalizeKey, parseRef, pipelineOf, refString } from '../domain/keys.js';
import {
  calendarEventsOf,
  cardAddresses,
  contactCardsOf,
  meetingPairs,
  participantsOfEvent,
  syncedEventSource,
  syncedMeetingOf,
  type CalendarEventFacts,
} from '../domain/calendar.js';
import { knownTime, participantsOf, type Participant } from '../domain/mail.js';
import { domainWriterOf, type DomainWriter } from '../domain/orgs.js';
import { addOrgLinks, forgetDomainWriters, MAIL_STRUCTURE_MAKER } from './orgs.js';
import {
  ensureKeys,
  finishBulkLoad,
  KeyCounts,
  makerOf,
  merge,
  nameKey,
  nameKeys,
  noteVis,
  observe,
  ownLinkVis,
  prune,
  split,
  type Trx,
  type Vis,
} from './entities.js';
import { cardPhoneLink, cardPhones } from './contact-phones.js';
import { applyOwnerName } from './owner-names.js';
import { checkEvidence, dedupe, dropEvidence, dropLinks, recordVerdict, writeLinks, type LinkRow } from './links.js';
import { graphMigrations } from './migrations.js';
import type { GraphDatabase } from './schema.js';
import { applyPaper } from './papers.js';
import { applyPeopleSeen } from './people.js';
import { applyPhotoEvents } from './photo-events.js';
import { evidenceOf, FirstWrites, inferredRow, namesOf, ReadItems, type LinkInput } from './readings.js';
import { applyStructure, type StoredItem } from './signatures.js';
import { commitmentLinks, understoodLinks, writeCommitments } from './understanding.js';

/** A message's thread key as the graph keeps it: the key its thread was joined into, if it was. */
const joinedKey = (threadKey: RawBuilder<unknown>): RawBuilder<string | null> =>
  sql<string | null>`coalesce((select j.key from thread_joins j where j.merged = ${threadKey}), ${threadKey})`;

/** Who made the links read from calendar items (events, attendees, meetings): version 1 of these rules. */
export const CALENDAR_STRUCTURE_MAKER = 'calendar@1';
/** Who made the links read from contact cards (vCard items): version 1 of these rules. */
export const CONTACTS_STRUCTURE_MAKER = 'contacts@1';
const EXCERPT_CHARS = 1000;

/** The graph's copy of an item. */
interface ItemRow {
  id: string;
  kind: string;
  title: string;
  excerpt: string;
  vis: Vis;
  occurredAt: string | null;
  madeBy: string;
  threadKey: string | null;
  participants: Participant[] | null;
}

/** The events an import logs for each mail, which `firstWrites` takes together. */
type ImportEvent =
  EventOf<typeof ItemIngested> | EventOf<typeof StructureExtracted> | EventOf<typeof CommitmentExtracted>;

/** An item as `storedItem` (and `ReadItems`) will read it back once written. */
function storedOf(item: ItemRow): StoredItem & { made_by: string } {
  return {
    kind: item.vis.kind,
    labels: item.vis.labels,
    spam: item.vis.spam,
    occurred_at: item.occurredAt === null ? null : new Date(item.occurredAt),
    // As jsonb gives it back (no undefined fields).
    participants: item.participants === null ? null : (JSON.parse(JSON.stringify(item.participants)) as Participant[]),
    made_by: item.madeBy,
  };
}

/** What an `item.ingested` event writes when its item is new: the item, names seen in it, links. */
interface Ingest {
  item: ItemRow;
  names: KeyCounts;
  /** One per link id (a message naming one person twice is one link); works_at come from `writers`. */
  links: LinkRow[];
  /** Its people at domains that may be organizations' (`addOrgLinks` turns them into works_at). */
  writers: DomainWriter[];
}

/**
 * The graph read model from the log: items (for scopes and time), people and organizations from
 * mail headers, links with evidence, corrections, merges, trails. Deterministic: ids derive from
 * keys and events, times from events.
 */
@Injectable()
@Projector({
  name: 'graph',
  migrations: graphMigrations,
  // Only queries read these (timelines, @-mentions, briefs, review): a rebuild builds them after its load.
  dropIndexes: [
    'mention_prefixes_order',
    'mention_terms_prefix',
    'links_src',
    'links_dst',
    'links_things_src',
    'links_things_dst',
    'links_review',
    'links_commitments',
    'items_time',
    'items_notes',
    'entities_name',
    'entities_org_label',
  ],
  // A batch's cost is mostly per thing touched (refreshes, weights, tiers): larger batches touch each less often.
  // A 2,000-message import's log (14,204 events), load 20-36: 500 a batch 470 events/s, 5,000 730-1,630, 20,000 1,120.
  rebuildBatch: 5000,
})
export class GraphProjector {
  /** A rebuild's bulk load put the things' refreshes and @-mention prefixes off (`bulkLoading`): all of them, once. */
  async afterBulkLoad(db: Kysely<GraphDatabase>): Promise<void> {
    await finishBulkLoad(db);
  }

  /**
   * An import logs each mail's `item.ingested` and, a little behind, tier 0's two readings of it
   * (structure.extracted, commitment.extracted), interleaved: runs of these go through
   * `firstWrites`, a few multi-row statements for a whole batch; any other event is applied
   * alone, in its place.
   */
  @OnBatch(ItemIngested, StructureExtracted, CommitmentExtracted)
  async imported(
    trx: Trx,
    run: LoggedOf<typeof ItemIngested | typeof StructureExtracted | typeof CommitmentExtracted>[],
  ): Promise<void> {
    const events = run.map(({ event }) => event);
    for (let next = 0; next < events.length;) next = await this.firstWrites(trx, events, next);
  }

  /**
   * From `start` on, the events that write something for the first time — a new item, a first
   * reading of an item (`FirstWrites`) — together, with exactly the effect of each applied alone
   * in turn; then the first event that cannot join them (an item the graph has or had, or that
   * comes twice; a reading that replaces an earlier one or whose evidence is checked) alone, in
   * its place. Answers where the next group starts.
   */
  private async firstWrites(trx: Trx, events: ImportEvent[], start: number): Promise<number> {
    const known = await ReadItems.of(
      trx,
      events.slice(start).map((event) => (event.type === 'item.ingested' ? event.data.id : event.data.item_id)),
    );
    const items: Ingest[] = [];
    const group = new FirstWrites();
    // A task reading an item twice: the second reading replaces the first, so it goes alone.
    const read = new Set<string>();
    let next = start;
    for (; next < events.length; next++) {
      const event = events[next]!;
      if (event.type === 'item.ingested') {
        if (known.has(event.data.id)) break;
        const ingest = this.ingestOf(event);
        items.push(ingest);
        known.added(event.data.id, storedOf(ingest.item));
        // A message never changes (seed §4.5), so its people and links are read once. Spam makes none.
        if (ingest.links.length > 0) group.addItem(ingest.names, ingest.links);
        continue;
      }
      const once = `${event.type} ${event.data.item_id}`;
      if (read.has(once) || !group.add(event, known)) break;
      read.add(once);
    }
    await this.insertItems(trx, items);
    await group.write(trx, known);
    const alone = events[next];
    if (!alone) return next;
    if (alone.type === 'item.ingested') await this.itemIngested(trx, alone);
    else if (alone.type === 'structure.extracted') await this.structureExtracted(trx, alone);
    else await this.commitmentExtracted(trx, alone);
    return next + 1;
  }

  @On(LinkConfirmed)
  async linkConfirmed(trx: Trx, event: EventOf<typeof LinkConfirmed>): Promise<void> {
    await recordVerdict(trx, event.data.link_id, 'confirmed', event.occurred_at);
  }

  @On(EntityMerged)
  async entityMerged(trx: Trx, event: EventOf<typeof EntityMerged>): Promise<void> {
    const { merge_id, from, into } = event.data;
    await merge(trx, merge_id, normalizeKey(from), normalizeKey(into), event.occurred_at);
  }

  @On(EntityNamed)
  async entityNamed(trx: Trx, event: EventOf<typeof EntityNamed>): Promise<void> {
    await applyOwnerName(trx, normalizeKey(event.data.key), event.data.name);
  }

  @On(EntitySplitEvent)
  async entitySplit(trx: Trx, event: EventOf<typeof EntitySplitEvent>): Promise<void> {
    await split(trx, event.data.merge_id);
  }

  @On(ReviewDismissed)
  async reviewDismissed(trx: Trx, event: EventOf<typeof ReviewDismissed>): Promise<void> {
    await sql`insert into review_dismissed (suggestion) values (${event.data.suggestion}) on conflict do nothing`.execute(
      trx,
    );
  }

  private async isDeleted(trx: Trx, id: string): Promise<boolean> {
    return (await sql`select 1 from tombstones where id = ${id}`.execute(trx)).rows.length > 0;
  }

  /** Inserts or replaces the graph's copy of an item, keeping month counts in step. */
  private async putItem(trx: Trx, row: ItemRow): Promise<boolean> {
    const previous = (
      await sql<{ kind: string; labels: string[]; spam: boolean; occurred_at: Date | null }>`
        select kind, labels, spam, occurred_at from items where id = ${row.id}`.execute(trx)
    ).rows[0];
    if (previous) {
      await this.countMonth(trx, previous.occurred_at?.toISOString() ?? null, previous, -1);
      const changed =
        previous.kind !== row.vis.kind ||
        previous.spam !== row.vis.spam ||
        previous.labels.join('\n') !== row.vis.labels.join('\n');
      if (changed) await this.reclassify(trx, row.id, previous, row.vis);
    }
    await sql`
      insert into items (id, kind, title, excerpt, labels, spam, occurred_at, made_by, thread_key, participants)
      values (${row.id}, ${row.vis.kind}, ${row.title}, ${row.excerpt}, ${row.vis.labels}::text[], ${row.vis.spam}, ${row.occurredAt},
              ${row.madeBy}, ${joinedKey(sql`${row.threadKey}::text`)}, ${row.participants ? JSON.stringify(row.participants) : null}::jsonb)
      on conflict (id) do update set kind = excluded.kind, title = excluded.title, excerpt = excluded.excerpt, labels = excluded.labels,
        spam = excluded.spam, occurred_at = excluded.occurred_at, made_by = excluded.made_by, thread_key = excluded.thread_key,
        participants = coalesce(items.participants, excluded.participants)`.execute(trx);
    await this.countMonth(trx, row.occurredAt, row.vis, 1);
    return previous === undefined;
  }

  private async countMonth(trx: Trx, occurredAt: string | null, vis: Vis, n: number): Promise<void> {
    if (!occurredAt) return;
    await sql`
      insert into month_counts (month, kind, labels, spam, n)
      values (date_trunc('month', ${occurredAt}::timestamptz at time zone 'UTC')::date, ${vis.kind}, ${vis.labels}::text[], ${vis.spam}, ${n})
      on conflict (month, kind, labels, spam) do update set n = month_counts.n + excluded.n`.execute(trx);
    if (n < 0) await sql`delete from month_counts where n <= 0`.execute(trx);
  }

  /** An item's visibility changed (a document's new revision): its observations move class with it. */
  private async reclassify(trx: Trx, id: string, before: Vis, after: Vis): Promise<void> {
    const rows = await sql<{ src_key: string | null; dst_key: string | null }>`
      select l.src_key, l.dst_key from evidence ev join links l on l.id = ev.link where ev.item = ${id}`.execute(trx);
    const counts = new KeyCounts();
    for (const row of rows.rows) {
      for (const key of [row.src_key, row.dst_key]) {
        if (!key) continue;
        counts.add(key, before, -1);
        counts.add(key, after, 1);
      }
    }
    await observe(trx, counts);
  }

  private async itemIngested(trx: Trx, event: EventOf<typeof ItemIngested>): Promise<void> {
    if (await this.isDeleted(trx, event.data.id)) return;
    await this.applyIngest(trx, this.ingestOf(event));
  }

  /** Writes the item; when it is new, the names and links read from it. */
  private async applyIngest(trx: Trx, ingest: Ingest): Promise<void> {
    const fresh = await this.putItem(trx, ingest.item);
    // A message never changes (seed §4.5), so its people and links are read once. Spam makes none.
    if (!fresh || ingest.links.length === 0) return;
    await addOrgLinks(trx, [ingest]);
    await ensureKeys(
      trx,
      ingest.links.flatMap((l) => ('key' in l.src ? [l.src.key] : [])),
    );
    await nameKeys(trx, ingest.names);
    await writeLinks(trx, ingest.links);
  }

  /**
   * New items and their month counts in one statement, as `putItem` one after another would leave
   * them; the works_at links of their people (`addOrgLinks`) join their links, which `FirstWrites`
   * writes.
   */
  private async insertItems(trx: Trx, ingests: Ingest[]): Promise<void> {
    if (ingests.length === 0) return;
    const items = ingests.map(({ item }) => ({
      id: item.id,
      kind: item.vis.kind,
      title: item.title,
      excerpt: item.excerpt,
      labels: item.vis.labels,
      spam: item.vis.spam,
      occurred_at: item.occurredAt,
      made_by: item.madeBy,
      thread_key: item.threadKey,
      participants: item.participants,
    }));
    await sql`
      with rows as (
        select r.id, r.kind, r.title, r.excerpt, array(select jsonb_array_elements_text(r.labels)) as labels, r.spam,
               r.occurred_at, r.made_by, ${joinedKey(sql`r.thread_key`)} as thread_key, r.participants
        from jsonb_to_recordset(${JSON.stringify(items)}::jsonb) as r(id text, kind text, title text, excerpt text, labels jsonb,
          spam boolean, occurred_at timestamptz, made_by text, thread_key text, participants jsonb)),
      counted as (
        insert into month_counts (month, kind, labels, spam, n)
        select date_trunc('month', occurred_at at time zone 'UTC')::date, kind, labels, spam, count(*) from rows
        where occurred_at is not null group by 1, 2, 3, 4
        on conflict (month, kind, labels, spam) do update set n = month_counts.n + excluded.n)
      insert into items (id, kind, title, excerpt, labels, spam, occurred_at, made_by, thread_key, participants)
      select * from rows`.execute(trx);
    await addOrgLinks(
      trx,
      ingests.filter((i) => i.links.length > 0),
    );
  }

  /** What an `item.ingested` event writes if its item is new. */
  private ingestOf(event: EventOf<typeof ItemIngested>): Ingest {
    const data = event.data;
    const mail = data.kind === 'email' ? data.meta : null;
    const spam = event.spam ?? mail?.spam === true;
    const vis: Vis = { kind: data.kind, labels: [...event.labels].sort(), spam };
    const isMail = mail !== null;
    const participants = mail && !spam ? participantsOf(mail) : [];
    const meetings = spam ? [] : calendarEventsOf(data);
    const cards = spam ? [] : contactCardsOf(data);
    const at = knownTime(event);
    const item: ItemRow = {
      id: data.id,
      kind: data.kind,
      title: data.title,
      excerpt: '',
      vis,
      occurredAt: at,
      madeBy: makerOf(event.actor),
      threadKey: mail?.threadKey ?? null,
      participants: isMail ? participants : meetings.length > 0 || cards.length > 0 ? [] : null,
    };
    const names = new KeyCounts();
    const links: LinkRow[] = [];
    const writers: DomainWriter[] = [];
    const itemRef = { item: data.id };
    for (const p of participants) {
      // Keyed by address; by name when a list gateway left none (gmane's munged addresses).
      const person = p.key ?? `person:${p.address}`;
      if (p.name) names.add(nameKey(person, p.name), vis, 1);
      links.push(this.mailLink(person, p.rel, itemRef, at, data.id));
      const writer = domainWriterOf(p, data.id, at, mail!.mailingList);
      if (writer) writers.push(writer);
    }
    for (const meeting of meetings) this.meetingLinks(meeting, data.id, vis, names, links, item.participants!);
    // A contact card names the person of each of its addresses. Two addresses on one card are not
    // merged here: the same full name on two people is a merge the review queue asks about.
    for (const card of cards) {
      for (const address of cardAddresses(card)) {
        const person = `person:${address}`;
        if (card.fullName && card.fullName !== address) {
          names.add(nameKey(person, card.fullName), vis, 1);
          item.participants!.push({ rel: 'listed', address, name: card.fullName });
        }
        links.push(this.mailLink(person, 'appears_in', itemRef, at, data.id, CONTACTS_STRUCTURE_MAKER));
        for (const phone of cardPhones(card))
          links.push(cardPhoneLink(person, phone, data.id, at, CONTACTS_STRUCTURE_MAKER));
      }
    }
    return { item, names, links: dedupe(links), writers };
  }

  /**
   * A Google Calendar event (calendar-sync's reading) is a meeting as one in a calendar item is
   * (`meetingLinks`), resting on the synced event itself under its source id (`syncedEventSource`):
   * a change replaces what its earlier version said; a deletion at Google or a cancellation takes
   * it away. The same UID in an .ics file or an invitation is the same `event:<UID>` thing.
   */
  @On(CalendarEventSynced)
  async calendarEventSynced(trx: Trx, event: EventOf<typeof CalendarEventSynced>): Promise<void> {
    const { account, calendar_id, google_id, deleted } = event.data;
    const source = syncedEventSource(account, calendar_id, google_id);
    await this.forgetItem(trx, source);
    const meeting = deleted ? null : syncedMeetingOf(event.data.event);
    if (!meeting) return;
    const vis: Vis = { kind: 'event', labels: [...event.labels].sort(), spam: false };
    const item: ItemRow = {
      id: source,
      kind: 'event',
      title: meeting.summary,
      excerpt: '',
      vis,
      occurredAt: meeting.start,
      madeBy: makerOf(event.actor),
      threadKey: null,
      participants: [],
    };
    const names = new KeyCounts();
    const links: LinkRow[] = [];
    this.meetingLinks(meeting, source, vis, names, links, item.participants!);
    await this.applyIngest(trx, { item, names, links: dedupe(links), writers: [] });
  }

  /**
   * A calendar event as a thing: its people attended it (from start to end), it took place where
   * it says, and its people met with each other; the item is the evidence. The names it gives are
   * kept in the item's participants, so that deleting the item takes them back.
   */
  private meetingLinks(
    meeting: CalendarEventFacts,
    itemId: string,
    vis: Vis,
    names: KeyCounts,
    links: LinkRow[],
    named: Participant[],
  ): void {
    const event = { key: normalizeKey(`event:${meeting.uid}`), kind: 'event' };
    const link = (src: { key: string; kind: string }, rel: string, dst: { key: string; kind: string }): LinkRow => ({
      id: linkId(src.key, rel, dst.key, CALENDAR_STRUCTURE_MAKER),
      src,
      rel,
      dst,
      validFrom: meeting.start,
      validTo: meeting.end,
      confidence: 1,
      basis: 'observed',
      madeBy: CALENDAR_STRUCTURE_MAKER,
      vis: null,
      evidence: [{ item: itemId, part: '', quote: null }],
      via: itemId,
    });
    const name = (key: string, address: string, value: string) => {
      if (!value) return;
      names.add(nameKey(key, value), vis, 1);
      named.push({ rel: 'attended', address, name: value, key });
    };
    name(event.key, '', meeting.summary);
    const people = participantsOfEvent(meeting);
    for (const p of people) {
      const person = { key: `person:${p.address}`, kind: 'person' };
      name(person.key, p.address, p.name);
      links.push(link(person, 'attended', event));
    }
    if (meeting.location && !/^[a-z]+:\/\//i.test(meeting.location)) {
      links.push(
        link(event, 'located_at', { key: normalizeKey(`place:${meeting.location.toLowerCase()}`), kind: 'place' }),
      );
    }
    for (const [a, b] of meetingPairs(people)) {
      links.push(link({ key: `person:${a}`, kind: 'person' }, 'met_with', { key: `person:${b}`, kind: 'person' }));
    }
  }

  /** A person's observed link to an item that names them: a message (at its date), a contact card (from then on). */
  private mailLink(
    person: string,
    rel: string,
    item: { item: string },
    at: string | null,
    via: string,
    maker = MAIL_STRUCTURE_MAKER,
  ): LinkRow {
    return {
      id: linkId(person, rel, refString(item), maker),
      src: { key: person, kind: 'person' },
      rel,
      dst: item,
      validFrom: at,
      validTo: maker === MAIL_STRUCTURE_MAKER ? at : null,
      confidence: 1,
      basis: 'observed',
      madeBy: maker,
      vis: null,
      evidence: [{ item: item.item, part: '', quote: null }],
      via,
    };
  }

  @On(NotePut)
  async notePut(trx: Trx, event: EventOf<typeof NotePut>): Promise<void> {
    const { id, title, body } = event.data;
    if (await this.isDeleted(trx, id)) return;
    await this.putItem(trx, {
      id,
      kind: 'note',
      title,
      excerpt: body.slice(0, EXCERPT_CHARS),
      vis: noteVis(event.labels),
      occurredAt: event.occurred_at,
      madeBy: makerOf(event.actor),
      threadKey: null,
      participants: null,
    });
  }

  /** The item is gone for good: what rests on it goes, and a replay of its earlier events makes nothing. */
  @On(ItemDeleted)
  async itemDeleted(trx: Trx, { data: { id } }: EventOf<typeof ItemDeleted>): Promise<void> {
    await sql`insert into tombstones (id) values (${id}) on conflict do nothing`.execute(trx);
    await this.forgetItem(trx, id);
  }

  /** The graph's copy of an item: how it is seen, when, and the names it gave. */
  private async storedItem(trx: Trx, id: string) {
    return (
      await sql<{
        kind: string;
        labels: string[];
        spam: boolean;
        occurred_at: Date | null;
        participants: Participant[] | null;
      }>`
        select kind, labels, spam, occurred_at, participants from items where id = ${id}`.execute(trx)
    ).rows[0];
  }

  /**
   * Threads ingest found to be one: the messages of the merged threads, and keys already joined
   * into them, move to the surviving key.
   */
  @On(ThreadJoined)
  async threadJoined(trx: Trx, { data: { key, merged } }: EventOf<typeof ThreadJoined>): Promise<void> {
    const others = merged.filter((m) => m !== key);
    if (others.length === 0) return;
    await sql`update thread_joins set key = ${key} where key = any(${others}::text[])`.execute(trx);
    await sql`insert into thread_joins (merged, key) select unnest(${others}::text[]), ${key}
      on conflict (merged) do update set key = excluded.key`.execute(trx);
    // The survivor itself may have been joined into another before; it stays a thread of its own.
    await sql`delete from thread_joins where merged = ${key}`.execute(trx);
    await sql`update items set thread_key = ${key} where thread_key = any(${others}::text[])`.execute(trx);
  }

  /**
   * A stored message found to be spam later: the graph keeps it as it keeps mail that was spam
   * when it came — its row marked spam, no participants, nothing resting on it (no people,
   * names or links read from it) — so no agent reaches it through the graph.
   */
  @On(MailSpamMarked)
  async spamMarked(trx: Trx, { data: { id } }: EventOf<typeof MailSpamMarked>): Promise<void> {
    const item = await this.storedItem(trx, id);
    if (!item || item.spam) return;
    const touched = await this.dropObservations(trx, id, item);
    await sql`update items set spam = true, participants = '[]'::jsonb where id = ${id}`.execute(trx);
    const occurredAt = item.occurred_at?.toISOString() ?? null;
    await this.countMonth(trx, occurredAt, { kind: item.kind, labels: item.labels, spam: true }, 1);
    await prune(trx, [...touched].sort());
  }

  /** Everything that rests on the item goes: evidence, links left bare, names it gave, trail steps. */
  private async forgetItem(trx: Trx, id: string): Promise<void> {
    const item = await this.storedItem(trx, id);
    const touched = await this.dropObservations(trx, id, item);
    await sql`delete from refused_evidence where item = ${id}`.execute(trx);
    await sql`delete from papers where item = ${id}`.execute(trx);
    await sql`delete from commitment_status where id in (select id from commitments where item = ${id})`.execute(trx);
    await sql`delete from commitments where item = ${id}`.execute(trx);
    await sql`delete from trail_steps where target_item = ${id}`.execute(trx);
    await sql`delete from verdicts where src_item = ${id} or dst_item = ${id}`.execute(trx);
    await sql`delete from items where id = ${id}`.execute(trx);
    await prune(trx, [...touched].sort());
  }

  /** The item's evidence, the links that end on it, the names it gave and its month count go; answers the keys touched. */
  private async dropObservations(
    trx: Trx,
    id: string,
    item: Awaited<ReturnType<GraphProjector['storedItem']>>,
  ): Promise<Set<string>> {
    const touched = new Set<string>();
    for (const key of await dropEvidence(trx, { via: id })) touched.add(key);
    for (const key of await dropEvidence(trx, { item: id })) touched.add(key);
    await forgetDomainWriters(trx, id);
    const ended = (
      await sql<{ id: string }>`select id from links where src_item = ${id} or dst_item = ${id}`.execute(trx)
    ).rows.map((r) => r.id);
    for (const key of await dropLinks(trx, ended)) touched.add(key);
    if (item) {
      const names = new KeyCounts();
      const vis: Vis = { kind: item.kind, labels: item.labels, spam: item.spam };
      for (const p of item.participants ?? [])
        if (p.name) names.add(nameKey(p.key ?? `person:${p.address}`, p.name), vis, -1);
      await nameKeys(trx, names);
      for (const key of names.keys()) touched.add((JSON.parse(key) as [string])[0]);
      await this.countMonth(trx, item.occurred_at?.toISOString() ?? null, vis, -1);
    }
    return touched;
  }

  @On(PhotoAnalyzed)
  async photoAnalyzed(trx: Trx, { data }: EventOf<typeof PhotoAnalyzed>): Promise<void> {
    await this.locate(trx, data.item_id, data.pipeline, data.place);
  }

  @On(VideoAnalyzed)
  async videoAnalyzed(trx: Trx, { data }: EventOf<typeof VideoAnalyzed>): Promise<void> {
    await this.locate(trx, data.item_id, data.pipeline, data.place);
  }

  /**
   * A photo or video was taken at a GeoNames place (the media pipeline's reading of its GPS
   * position): the item is `located_at` the `place:geonames:<id>` thing (its name, and its country
   * and admin area as attrs) at its capture time, the item as evidence. What the pipeline said of
   * the item before (an earlier analysis) is replaced; the item's deletion takes it back.
   */
  private async locate(trx: Trx, itemId: string, pipeline: string, place: Place | null): Promise<void> {
    if (await this.isDeleted(trx, itemId)) return;
    const item = await this.storedItem(trx, itemId);
    if (!item) return;
    const vis: Vis = { kind: item.kind, labels: item.labels, spam: item.spam };
    const earlier = (
      await sql<{
        id: string;
      }>`select id from links where src_item = ${itemId} and pipeline = ${pipelineOf(pipeline)}`.execute(trx)
    ).rows.map((r) => r.id);
    const touched = await dropLinks(trx, earlier);
    const names = new KeyCounts();
    const named = (item.participants ?? []).filter((p) => {
      if (p.rel !== 'located_at') return true;
      if (p.name) names.add(nameKey(p.key!, p.name), vis, -1);
      return false;
    });
    const links: LinkRow[] = [];
    if (place) {
      const key = normalizeKey(place.key);
      const { geonames_id, country, admin1, latitude, longitude } = place;
      await sql`
        insert into places (key, geonames_id, country, admin1, latitude, longitude)
        values (${key}, ${geonames_id}, ${country}, ${admin1}, ${latitude}, ${longitude})
        on conflict (key) do update set geonames_id = excluded.geonames_id, country = excluded.country,
          admin1 = excluded.admin1, latitude = excluded.latitude, longitude = excluded.longitude`.execute(trx);
      await ensureKeys(trx, [key]);
      names.add(nameKey(key, place.name), vis, 1);
      named.push({ rel: 'located_at', address: '', name: place.name, key });
      const at = item.occurred_at?.toISOString() ?? null;
      const src = { item: itemId };
      links.push({
        id: linkId(refString(src), 'located_at', key, pipeline),
        src,
        rel: 'located_at',
        dst: { key, kind: 'place' },
        validFrom: at,
        validTo: at,
        confidence: 1,
        basis: 'observed',
        madeBy: pipeline,
        vis: null,
        evidence: [{ item: itemId, part: '', quote: null }],
        via: itemId,
      });
    }
    await sql`update items set participants = ${JSON.stringify(named)}::jsonb where id = ${itemId}`.execute(trx);
    await nameKeys(trx, names);
    await writeLinks(trx, links);
    await prune(trx, touched.sort());
  }

  @On(LinkAdded)
  async linkAdded(trx: Trx, event: EventOf<typeof LinkAdded>): Promise<void> {
    const data = event.data;
    const src = parseRef(data.src);
    const dst = parseRef(data.dst);
    const checked = await checkEvidence(trx, data.evidence, data.basis === 'inferred');
    // An agent's link is an inference: with no evidence that stands, it is not made.
    if (data.basis === 'inferred' && checked.accepted.length === 0) {
      await this.refuse(trx, data.link_id, data.made_by, '', checked.refused);
      return;
    }
    await this.giveNames(trx, data.names, ownLinkVis(event.labels));
    await writeLinks(trx, [
      {
        id: data.link_id,
        src,
        rel: data.rel,
        dst,
        validFrom: data.valid_from ?? null,
        validTo: data.valid_to ?? null,
        confidence: data.confidence,
        basis: data.basis,
        madeBy: data.made_by,
        vis: checked.accepted.length > 0 ? null : ownLinkVis(event.labels),
        labels: event.labels,
        evidence: checked.accepted,
        via: '',
      },
    ]);
    await this.refuse(trx, data.link_id, data.made_by, '', checked.refused);
    if (data.made_by === 'user') await recordVerdict(trx, data.link_id, 'confirmed', event.occurred_at);
  }

  private async giveNames(trx: Trx, names: Record<string, string> | undefined, vis: Vis): Promise<void> {
    const given = namesOf(names, vis);
    await ensureKeys(trx, given.keys);
    await nameKeys(trx, given.counts);
  }

  private async refuse(
    trx: Trx,
    link: string,
    madeBy: string,
    via: string,
    refused: { evidence: string; item: string; reason: string }[],
  ): Promise<void> {
    for (const r of refused) {
      await sql`
        insert into refused_evidence (link, made_by, item, evidence, reason) values (${link}, ${madeBy}, ${r.item || via}, ${r.evidence}, ${r.reason})
        on conflict (link, evidence) do update set reason = excluded.reason`.execute(trx);
    }
  }

  @On(LinkRetracted)
  async linkRetracted(trx: Trx, event: EventOf<typeof LinkRetracted>): Promise<void> {
    await sql`update links set status = 'retracted' where id = ${event.data.link_id}`.execute(trx);
    // The owner's retraction is a correction of the claim, whoever states it (seed §3.3).
    if (event.actor.kind === 'user') await recordVerdict(trx, event.data.link_id, 'rejected', event.occurred_at);
  }

  /** A pipeline's links from one item replace what the same pipeline inferred from it before. */
  @On(LinksInferred)
  async linksInferred(trx: Trx, event: EventOf<typeof LinksInferred>): Promise<void> {
    await this.inferred(trx, event.data.item_id, event.data.made_by, event.labels, event.data);
  }

  /**
   * Tier 2's topics, entities and claims (`understoodLinks`): inferred links from the item that
   * replace what the same task said of it before, whatever model or version said it. A summary
   * makes no link.
   */
  @On(ItemUnderstood)
  async itemUnderstood(trx: Trx, event: EventOf<typeof ItemUnderstood>): Promise<void> {
    if (event.data.task === 'summary') return;
    const madeBy = makerString(event.data.made_by);
    await this.inferred(trx, event.data.item_id, madeBy, event.labels, understoodLinks(event.data));
  }

  /** Commitments, by tier 0's rules or a model: `committed_to` links and the commitments read model. */
  private async commitmentExtracted(trx: Trx, event: EventOf<typeof CommitmentExtracted>): Promise<void> {
    if (await this.isDeleted(trx, event.data.item_id)) return;
    await writeCommitments(trx, event.data);
    await this.inferred(trx, event.data.item_id, event.data.made_by, event.labels, commitmentLinks(event.data));
  }

  /** The owner's open/done/dropped: kept by the commitment's id, so the maker's re-runs keep it. */
  @On(CommitmentStatusSet)
  async commitmentStatusSet(trx: Trx, event: EventOf<typeof CommitmentStatusSet>): Promise<void> {
    const { commitment_id: id, status } = event.data;
    await sql`insert into commitment_status (id, status, set_at) values (${id}, ${status}, ${event.occurred_at})
      on conflict (id) do update set status = excluded.status, set_at = excluded.set_at`.execute(trx);
  }

  /** Links a maker read in one item, replacing what the same maker's task read there before. */
  private async inferred(
    trx: Trx,
    itemId: string,
    madeBy: string,
    labels: string[],
    read: { links: LinkInput[]; names?: Record<string, string> | undefined },
  ): Promise<void> {
    if (await this.isDeleted(trx, itemId)) return;
    const pipeline = pipelineOf(madeBy);
    const touched = await dropEvidence(trx, { via: itemId, pipeline });
    await sql`delete from refused_evidence where item = ${itemId} and split_part(made_by, '@', 1) = ${pipeline}`.execute(
      trx,
    );
    await this.giveNames(trx, read.names, noteVis(labels));
    const rows: LinkRow[] = [];
    for (const link of read.links) {
      const checked = await checkEvidence(trx, evidenceOf(link, itemId), true);
      const row = inferredRow(link, madeBy, itemId, checked.accepted);
      await this.refuse(trx, row.id, madeBy, itemId, checked.refused);
      if (checked.accepted.length > 0) rows.push(row);
    }
    await writeLinks(trx, dedupe(rows));
    await prune(trx, touched.sort());
  }

  /** Tier 0's signature facts on the sender's person (`applyStructure`). */
  private async structureExtracted(trx: Trx, event: EventOf<typeof StructureExtracted>): Promise<void> {
    await applyStructure(trx, event, await this.storedItem(trx, event.data.item_id));
  }

  /** Tier 0's reading of a paper: the paper, its authors and what it cites (`applyPaper`). */
  @On(PaperExtracted)
  async paperExtracted(trx: Trx, event: EventOf<typeof PaperExtracted>): Promise<void> {
    await applyPaper(trx, event, await this.storedItem(trx, event.data.item_id));
  }

  @On(PeopleSeen)
  async peopleSeen(trx: Trx, event: EventOf<typeof PeopleSeen>): Promise<void> {
    await applyPeopleSeen(trx, event, await this.storedItem(trx, event.data.item_id));
  }

  @On(PhotoEventsFound)
  async photoEventsFound(trx: Trx, event: EventOf<typeof PhotoEventsFound>): Promise<void> {
    await applyPhotoEvents(trx, event);
  }

  @On(TrailCreated)
  async trailCreated(trx: Trx, event: EventOf<typeof TrailCreated>): Promise<void> {
    const { trail_id, name, description } = event.data;
    await sql`
      insert into trails (id, name, description, labels, made_by, created_at)
      values (${trail_id}, ${name}, ${description}, ${[...event.labels].sort()}::text[], ${makerOf(event.actor)}, ${event.occurred_at})
      on conflict (id) do nothing`.execute(trx);
  }

  @On(TrailAppended)
  async trailAppended(trx: Trx, event: EventOf<typeof TrailAppended>): Promise<void> {
    const { trail_id, step_id, target, comment } = event.data;
    const ref = parseRef(target);
    if ('item' in ref && (await this.isDeleted(trx, ref.item))) return;
    const entity = 'key' in ref ? (await ensureKeys(trx, [ref.key])).get(ref.key)! : null;
    await sql`
      insert into trail_steps (step_id, trail_id, ordinal, target_key, target_entity, target_item, comment)
      select ${step_id}, ${trail_id}, coalesce(max(ordinal), 0) + 1, ${'key' in ref ? ref.key : null}, ${entity}, ${'item' in ref ? ref.item : null}, ${comment ?? null}
      from trail_steps where trail_id = ${trail_id}
      on conflict (step_id) do nothing`.execute(trx);
  }

  @On(TrailCommented)
  async trailCommented(trx: Trx, event: EventOf<typeof TrailCommented>): Promise<void> {
    const { trail_id, step_id, comment } = event.data;
    if (step_id) {
      await sql`update trail_steps set comment = ${comment} where step_id = ${step_id} and trail_id = ${trail_id}`.execute(
        trx,
      );
      return;
    }
    await sql`
      insert into trail_comments (id, trail_id, comment, made_by, at)
      values (${event.id}, ${trail_id}, ${comment}, ${makerOf(event.actor)}, ${event.occurred_at}) on conflict (id) do nothing`.execute(
      trx,
    );
  }

  /**
   * The step goes right after `after_step_id` (first when null) and the trail is numbered 1..n
   * again. A step gone by then (its item deleted) leaves the order as it is.
   */
  @On(TrailReordered)
  async trailReordered(trx: Trx, event: EventOf<typeof TrailReordered>): Promise<void> {
    const { trail_id, step_id, after_step_id } = event.data;
    const order = (
      await sql<{
        step_id: string;
      }>`select step_id from trail_steps where trail_id = ${trail_id} order by ordinal`.execute(trx)
    ).rows.map((r) => r.step_id);
    if (!order.includes(step_id) || (after_step_id !== null && !order.includes(after_step_id))) return;
    const rest = order.filter((id) => id !== step_id);
    rest.splice(after_step_id === null ? 0 : rest.indexOf(after_step_id) + 1, 0, step_id);
    // (trail_id, ordinal) is unique and checked row by row: out of the way first, then into place.
    await sql`update trail_steps set ordinal = -ordinal where trail_id = ${trail_id}`.execute(trx);
    await sql`
      update trail_steps s set ordinal = n.ordinal
      from unnest(${rest}::text[]) with ordinality as n(step_id, ordinal)
      where s.trail_id = ${trail_id} and s.step_id = n.step_id`.execute(trx);
  }
}

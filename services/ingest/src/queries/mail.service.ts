import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely, type Selectable, type SelectQueryBuilder } from 'kysely';
import {
  MailAccounts,
  MailFlags,
  MailFlagsChanged,
  MailList,
  type MailSummary,
  MailThread,
  MemexError,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import type { Static } from '@sinclair/typebox';
import { draftOf, EventPublisher, type Drafted } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import { visibleTo } from '@memex/db';
import { CONFIG, DATABASE, RpcMethod, ServiceHost, type CallContext } from '@memex/runtime';
import type { IngestDatabase, MessagesTable } from '../projection/schema.js';

type MessageRow = Selectable<MessagesTable>;
type Query = SelectQueryBuilder<IngestDatabase, 'messages', object>;

/** A position in a view: the last message of a page, by (date, id) descending. */
function encodeCursor(row: Pick<MessageRow, 'date' | 'item_id'>): string {
  return Buffer.from(`${row.date.toISOString()}|${row.item_id}`).toString('base64url');
}

function decodeCursor(cursor: string): { date: Date; id: string } {
  const [date, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const parsed = new Date(date ?? '');
  if (!id || Number.isNaN(parsed.getTime()))
    throw new MemexError('invalid_params', 'params.cursor: not a cursor from memex.mail.list');
  return { date: parsed, id };
}

function summary(row: MessageRow): Static<typeof MailSummary> {
  return {
    id: row.item_id,
    account: row.account,
    thread_key: row.thread_key,
    subject: row.subject,
    from: row.from,
    to: row.to,
    date: row.date.toISOString(),
    snippet: row.snippet,
    read: row.read,
    starred: row.starred,
    inbox: row.inbox,
    trashed: row.trashed,
    spam: row.spam,
    labels: row.mail_labels,
    attachments: row.attachments,
  };
}

/** The message is the newest of its conversation, not counting drafts (a Gmail draft is a message labelled DRAFT). */
const LAST_OF_THREAD = sql<boolean>`not ('DRAFT' = any(mail_labels)) and not exists (select 1 from messages later where later.thread_key = messages.thread_key and (later.date, later.item_id) > (messages.date, messages.item_id) and not ('DRAFT' = any(later.mail_labels)))`;

/** The views' filters (see MailView in contracts/src/api/mail.ts); `mine`: the connected accounts' addresses. */
function inView(query: Query, params: ParamsOf<typeof MailList>, mine: string[]): Query {
  switch (params.view) {
    case 'inbox':
      return query.where('inbox', '=', true).where('trashed', '=', false).where('spam', '=', false);
    case 'label':
      if (!params.label) throw new MemexError('invalid_params', 'params.label: the label view needs a label');
      return query.where(sql<boolean>`${params.label} = any(mail_labels)`).where('trashed', '=', false);
    case 'starred':
      return query.where('starred', '=', true).where('trashed', '=', false).where('spam', '=', false);
    case 'unread':
      return query.where('read', '=', false).where('trashed', '=', false).where('spam', '=', false);
    case 'spam':
      return query.where('spam', '=', true).where('trashed', '=', false);
    case 'trash':
      return query.where('trashed', '=', true);
    case 'all':
      return query.where('trashed', '=', false).where('spam', '=', false);
    case 'needs_reply':
      return query
        .where('trashed', '=', false)
        .where('spam', '=', false)
        .where(LAST_OF_THREAD)
        .where(sql<boolean>`coalesce(lower("from"->0->>'address'), '') <> all(${mine}::text[])`)
        .where(
          sql<boolean>`exists (select 1 from jsonb_array_elements("to" || cc) a where lower(a->>'address') = any(${mine}::text[]))`,
        );
    case 'waiting':
      return query
        .where('trashed', '=', false)
        .where(LAST_OF_THREAD)
        .where(sql<boolean>`lower("from"->0->>'address') = any(${mine}::text[])`)
        .where('date', '<', new Date(Date.now() - (params.waiting_days ?? 3) * 86_400_000));
    default:
      throw new MemexError('invalid_params', `params.view: unknown view ${JSON.stringify(params.view)}`);
  }
}

/** The mail views over the `messages` read model, and flag changes as events (seed §6.3, §4.5). */
@Injectable()
export class MailService {
  constructor(
    @Inject(DATABASE) private readonly db: Kysely<IngestDatabase>,
    @Inject(CONFIG) private readonly config: MemexConfig,
    private readonly publisher: EventPublisher,
    private readonly host: ServiceHost,
  ) {}

  @RpcMethod(MailAccounts)
  async accounts(_params: ParamsOf<typeof MailAccounts>, call: CallContext): Promise<ResultOf<typeof MailAccounts>> {
    const rows = await this.db
      .selectFrom('messages')
      .select((eb) => [
        'account',
        eb.fn.min('origin').as('origin'),
        eb.fn.countAll<number>().as('messages'),
        sql<number>`count(*) filter (where not read and not trashed and not spam)::int`.as('unread'),
      ])
      .where(visibleTo(call.scope))
      .groupBy('account')
      .orderBy('account')
      .execute();
    return {
      accounts: rows.map((row) => ({
        account: row.account,
        origin: row.origin as 'imported' | 'mirrored',
        messages: Number(row.messages),
        unread: row.unread,
      })),
    };
  }

  @RpcMethod(MailList)
  async list(params: ParamsOf<typeof MailList>, call: CallContext): Promise<ResultOf<typeof MailList>> {
    const limit = params.limit ?? 50;
    let query = inView(this.db.selectFrom('messages'), params, await this.myAddresses(params.view)).where(
      visibleTo(call.scope),
    );
    if (params.account) query = query.where('account', '=', params.account);
    if (params.label && params.view !== 'label') query = query.where(sql<boolean>`${params.label} = any(mail_labels)`);
    if (params.cursor) {
      const { date, id } = decodeCursor(params.cursor);
      query = query.where(sql<boolean>`(date, item_id) < (${date}, ${id})`);
    }
    const rows = await query
      .selectAll()
      .orderBy('date', 'desc')
      .orderBy('item_id', 'desc')
      .limit(limit + 1)
      .execute();
    const page = rows.slice(0, limit);
    return {
      messages: page.map(summary),
      next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1]!) : null,
    };
  }

  /** The addresses of the connected mail accounts (`gmail:<address>`, `imap:<address>`), for the needs-reply and waiting views. */
  private async myAddresses(view: string): Promise<string[]> {
    if (view !== 'needs_reply' && view !== 'waiting') return [];
    // The accounts one by one along the messages_account index (a loose index scan): a few
    // lookups, where `select distinct account` read every message (most of these views' time at 50,000).
    const { rows } = await sql<{ account: string }>`with recursive accounts as (
        select min(account) as account from messages
        union all
        select (select min(account) from messages where account > accounts.account) from accounts where account is not null
      ) select account from accounts where account like 'gmail:%' or account like 'imap:%'`.execute(this.db);
    return rows.map((row) => row.account.slice(row.account.indexOf(':') + 1).toLowerCase());
  }

  @RpcMethod(MailThread)
  async thread(params: ParamsOf<typeof MailThread>, call: CallContext): Promise<ResultOf<typeof MailThread>> {
    const start = await this.db
      .selectFrom('messages')
      .select('thread_key')
      .where('item_id', '=', params.id)
      .where(visibleTo(call.scope))
      .executeTakeFirst();
    if (!start) throw new MemexError('not_found', `no message ${params.id}`);
    const rows = await this.db
      .selectFrom('messages as m')
      .innerJoin('items as i', 'i.id', 'm.item_id')
      .selectAll('m')
      .select('i.text')
      .where('m.thread_key', '=', start.thread_key)
      .where(visibleTo(call.scope, { kind: 'm.kind', labels: 'm.labels', spam: 'm.spam' }))
      .orderBy('m.date')
      .orderBy('m.item_id')
      .execute();
    return {
      thread_key: start.thread_key,
      messages: rows.map((row) => ({ ...summary(row), message_id: row.message_id, cc: row.cc, text: row.text })),
    };
  }

  /** Each message whose state would change gets one `mail.flags_changed` with the changes. */
  @RpcMethod(MailFlags)
  async flags(params: ParamsOf<typeof MailFlags>, call: CallContext): Promise<ResultOf<typeof MailFlags>> {
    const { ids, read, starred, add_labels: added = [], remove_labels: removed = [], archived, trashed } = params;
    if ([read, starred, archived, trashed].every((v) => v === undefined) && added.length + removed.length === 0) {
      throw new MemexError(
        'invalid_params',
        'params: say what to change (read, starred, add_labels, remove_labels, archived, trashed)',
      );
    }
    // Messages just ingested are flagged too: decide on the read model once it has them.
    await this.host.projector!.caughtUp(this.config.minSeqTimeoutMs);
    const rows = await this.db
      .selectFrom('messages')
      .selectAll()
      .where('item_id', 'in', ids)
      .where(visibleTo(call.scope))
      .execute();
    const found = new Set(rows.map((row) => row.item_id));
    const missing = ids.find((id) => !found.has(id));
    if (missing) throw new MemexError('not_found', `no message ${missing}`);
    const drafts: Drafted<typeof MailFlagsChanged>[] = [];
    for (const row of rows) {
      const change = {
        ...(read !== undefined && read !== row.read ? { read } : {}),
        ...(starred !== undefined && starred !== row.starred ? { starred } : {}),
        ...(archived !== undefined && archived === row.inbox ? { archived } : {}),
        ...(trashed !== undefined && trashed !== row.trashed ? { trashed } : {}),
        ...(added.some((l) => !row.mail_labels.includes(l))
          ? { labels_added: added.filter((l) => !row.mail_labels.includes(l)) }
          : {}),
        ...(removed.some((l) => row.mail_labels.includes(l))
          ? { labels_removed: removed.filter((l) => row.mail_labels.includes(l)) }
          : {}),
      };
      if (Object.keys(change).length === 0) continue;
      drafts.push(
        draftOf(MailFlagsChanged, {
          subject: `item:${row.item_id}`,
          actor: call.caller,
          labels: row.labels,
          kind: row.kind,
          spam: row.spam,
          data: { id: row.item_id, ...change },
        }),
      );
    }
    const published = drafts.length > 0 ? await this.publisher.publishAll(drafts) : [];
    return { changed: drafts.length, seq: published.at(-1)?.seq ?? 0 };
  }
}

import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser';
import {
  ItemsContent,
  MailCancel,
  MailCompose,
  MailDraftDelete,
  MailDraftUpdate,
  MailThread,
  MemexError,
  OutgoingCancelled,
  OutgoingDraftDeleted,
  OutgoingDraftUpdated,
  OutgoingQueued,
  OWNER_SCOPE,
  rpcSubject,
  type Actor,
  type MethodDefinition,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { BlobStore } from '@memex/blobs';
import { callRpc, EventPublisher, newId, type Bus } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import { BUS, CONFIG, DATABASE, RpcMethod, type CallContext } from '@memex/runtime';
import { compose, formatted, type Composition } from '../domain/compose.js';
import type { MailSyncDatabase } from '../projection/schema.js';
import { Outbox } from '../sync/outbox.js';

/** A cancel this close to the send time is refused: the sender may already be handing the mail over. */
const CANCEL_MARGIN_MS = 500;

type Attachment = { filename: string; content: Buffer; contentType: string };
/** Everything a mail's MIME is built from. */
type MailFields = Composition & { bcc: string[]; attachments: Attachment[] };

/** A parsed header's addresses as `"Name" <address>` strings. */
function addresses(field: AddressObject | AddressObject[] | undefined): string[] {
  return (field ? [field].flat() : []).flatMap((group) =>
    group.value.flatMap((a) => (a.address ? [formatted({ name: a.name, address: a.address })] : [])),
  );
}

/** The attachments of a parsed message (parts shown inline in its HTML are not attachments). */
function attachmentsOf(parsed: ParsedMail): Attachment[] {
  return parsed.attachments
    .filter((a) => !a.related)
    .map((a) => ({ filename: a.filename ?? 'attachment', content: a.content, contentType: a.contentType }));
}

/** memex.mail.compose and memex.mail.cancel: mail written in the memex, as events. */
@Injectable()
export class OutgoingCommands {
  constructor(
    @Inject(DATABASE) private readonly db: Kysely<MailSyncDatabase>,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(CONFIG) private readonly config: MemexConfig,
    private readonly publisher: EventPublisher,
    private readonly blobs: BlobStore,
    private readonly outbox: Outbox,
  ) {}

  /**
   * Builds the MIME with nodemailer's MailComposer (threading headers, quoting, attachments from
   * memex items; a forward carries the original's attachments), keeps it as a blob and logs the
   * mail; the outbox sends it when it is due.
   */
  @RpcMethod(MailCompose)
  async compose(params: ParamsOf<typeof MailCompose>, call: CallContext): Promise<ResultOf<typeof MailCompose>> {
    return this.queue(params, call.caller, newId());
  }

  /**
   * Queues a mail under `id`. A second call with the same id (a retried approval) queues
   * nothing: the log refuses a second `outgoing.queued` for one outgoing.
   */
  async queue(params: ParamsOf<typeof MailCompose>, actor: Actor, id: string): Promise<ResultOf<typeof MailCompose>> {
    await this.outbox.caughtUp();
    const account = await this.db
      .selectFrom('accounts')
      .select(['account', 'status'])
      .where('account', '=', params.account)
      .executeTakeFirst();
    if (!account) throw new MemexError('not_found', `no connected account ${params.account} (memex accounts list)`);
    const mode = params.mode ?? 'new';
    if (mode !== 'new' && !params.message)
      throw new MemexError('invalid_params', `params.message: a ${mode} needs the message it answers`);
    const original = params.message ? await this.original(params.message) : undefined;
    const mail = compose(mode, params.account, params, original);
    if (mail.to.length + mail.cc.length + (params.bcc?.length ?? 0) === 0)
      throw new MemexError('invalid_params', 'params.to: a mail needs a recipient');
    const messageId = `<${id.toLowerCase()}.memex@${params.account.split('@')[1] ?? 'localhost'}>`;
    const attachments = await Promise.all((params.attachments ?? []).map((item) => this.content(item)));
    if (mode === 'forward' && params.message)
      attachments.unshift(...attachmentsOf(await simpleParser((await this.content(params.message)).content)));
    const sha = await this.build(params.account, messageId, { ...mail, bcc: params.bcc ?? [], attachments });
    // The undo window when the caller names none: MEMEX_MAIL_UNDO_SECONDS, default 10.
    const undo = (params.undo_seconds ?? Number(process.env.MEMEX_MAIL_UNDO_SECONDS || 10)) * 1000;
    const sendAt = params.draft
      ? null
      : new Date(Math.max(Date.now() + undo, params.send_at ? Date.parse(params.send_at) : 0));
    const threadId =
      params.message && mode !== 'forward'
        ? ((
            await this.db
              .selectFrom('gmail_messages')
              .select('thread_id')
              .where('item_id', '=', params.message)
              .executeTakeFirst()
          )?.thread_id ?? null)
        : null;
    const { seq } = await this.publisher.publish(OutgoingQueued, {
      subject: `outgoing:${id}`,
      actor,
      kind: 'email',
      expectFirst: true,
      data: {
        id,
        account: params.account,
        mime_sha256: sha,
        message_id: messageId,
        thread_id: threadId,
        subject: mail.subject,
        to: [...mail.to, ...mail.cc],
        send_at: sendAt?.toISOString() ?? null,
      },
    });
    this.outbox.wake(sendAt);
    return {
      id,
      message_id: messageId,
      state: sendAt ? 'scheduled' : 'draft',
      send_at: sendAt?.toISOString() ?? null,
      seq,
    };
  }

  /** Rebuilds a draft from its current MIME with the fields given replaced; same Message-ID and threading. */
  @RpcMethod(MailDraftUpdate)
  async updateDraft(
    params: ParamsOf<typeof MailDraftUpdate>,
    call: CallContext,
  ): Promise<ResultOf<typeof MailDraftUpdate>> {
    const draft = await this.draft(params.id);
    const old = await simpleParser(await this.blobs.get(draft.mime_sha256));
    const references = [old.references ?? []].flat();
    const mail: MailFields = {
      to: params.to ?? addresses(old.to),
      cc: params.cc ?? addresses(old.cc),
      bcc: params.bcc ?? addresses(old.bcc),
      subject: params.subject ?? old.subject ?? '',
      text: params.text ?? old.text ?? '',
      ...(old.inReplyTo ? { inReplyTo: old.inReplyTo, references } : {}),
      attachments: params.attachments
        ? await Promise.all(params.attachments.map((item) => this.content(item)))
        : attachmentsOf(old),
    };
    if (mail.to.length + mail.cc.length + mail.bcc.length === 0)
      throw new MemexError('invalid_params', 'params.to: a mail needs a recipient');
    const sha = await this.build(draft.account, draft.message_id, mail);
    const { seq } = await this.publisher.publish(OutgoingDraftUpdated, {
      subject: `outgoing:${params.id}`,
      actor: call.caller,
      kind: 'email',
      data: { id: params.id, mime_sha256: sha, subject: mail.subject, to: [...mail.to, ...mail.cc] },
    });
    this.outbox.wake(null);
    return { seq };
  }

  @RpcMethod(MailDraftDelete)
  async deleteDraft(
    params: ParamsOf<typeof MailDraftDelete>,
    call: CallContext,
  ): Promise<ResultOf<typeof MailDraftDelete>> {
    await this.draft(params.id);
    const { seq } = await this.publisher.publish(OutgoingDraftDeleted, {
      subject: `outgoing:${params.id}`,
      actor: call.caller,
      data: { id: params.id },
    });
    this.outbox.wake(null);
    return { seq };
  }

  @RpcMethod(MailCancel)
  async cancel(params: ParamsOf<typeof MailCancel>, call: CallContext): Promise<ResultOf<typeof MailCancel>> {
    await this.outbox.caughtUp();
    const row = await this.db
      .selectFrom('outgoing')
      .select(['state', 'send_at'])
      .where('id', '=', params.id)
      .executeTakeFirst();
    if (!row) throw new MemexError('not_found', `no outgoing mail ${params.id}`);
    if (row.state !== 'scheduled' || (row.send_at && row.send_at.getTime() - Date.now() < CANCEL_MARGIN_MS)) {
      throw new MemexError(
        'conflict',
        `mail ${params.id} is ${row.state === 'scheduled' ? 'being sent' : row.state}: too late to undo`,
      );
    }
    const { seq } = await this.publisher.publish(OutgoingCancelled, {
      subject: `outgoing:${params.id}`,
      actor: call.caller,
      data: { id: params.id },
    });
    return { seq };
  }

  private ask<M extends MethodDefinition>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
    return callRpc<ResultOf<M>>(
      this.bus,
      rpcSubject(method),
      { method: method.name, params, scope: OWNER_SCOPE, caller: { kind: 'connector', id: 'mail-sync' } },
      this.config.rpcTimeoutMs,
    );
  }

  private async original(id: string) {
    const thread = await this.ask(MailThread, { id, min_seq: await this.bus.lastSeq() });
    const message = thread.messages.find((m) => m.id === id);
    if (!message) throw new MemexError('not_found', `no message ${id}`);
    return { message, thread: thread.messages };
  }

  /** A draft written here, still a draft (an edit or a deletion of anything else is a conflict). */
  private async draft(id: string) {
    await this.outbox.caughtUp();
    const row = await this.db.selectFrom('outgoing').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw new MemexError('not_found', `no outgoing mail ${id}`);
    if (row.state !== 'draft') throw new MemexError('conflict', `mail ${id} is ${row.state}, not a draft`);
    return row;
  }

  /** The MIME (nodemailer's MailComposer, never strings joined by hand), kept as a blob: its sha-256. */
  private async build(account: string, messageId: string, mail: MailFields): Promise<string> {
    const node = new MailComposer({
      from: account,
      to: mail.to,
      cc: mail.cc,
      bcc: mail.bcc,
      subject: mail.subject,
      // MIME lines end in CRLF, the text's too.
      text: mail.text.replace(/\r?\n/g, '\r\n'),
      messageId,
      date: new Date(),
      ...(mail.inReplyTo ? { inReplyTo: mail.inReplyTo, references: mail.references } : {}),
      attachments: mail.attachments,
    }).compile();
    // Gmail reads Bcc from the raw message and removes it before delivery.
    node.keepBcc = true;
    return this.blobs.put(await node.build());
  }

  /** A memex item's bytes, read in ranges. */
  private async content(id: string): Promise<Attachment> {
    const parts: Buffer[] = [];
    let offset: number | null = 0;
    let answer: ResultOf<typeof ItemsContent> | undefined;
    while (offset !== null) {
      answer = await this.ask(ItemsContent, { id, offset });
      parts.push(Buffer.from(answer.data, 'base64'));
      offset = answer.next_offset;
    }
    return { filename: answer!.filename ?? id, content: Buffer.concat(parts), contentType: answer!.content_type };
  }
}

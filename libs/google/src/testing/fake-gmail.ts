import { googleError, type FakeGoogleServer, type FakeRequest, type FakeResponse } from './fake-server.js';

/** A message as the fake Gmail holds it. */
export interface FakeGmailMessage {
  id: string;
  threadId: string;
  labelIds: Set<string>;
  raw: Buffer;
  internalDate: number;
  /** The mailbox history id of its last change. */
  historyId: number;
  messageId: string | undefined;
}

type MessageRef = { id: string; threadId: string; labelIds?: string[] };
interface HistoryRecord {
  id: number;
  messages: MessageRef[];
  messagesAdded?: Array<{ message: MessageRef }>;
  messagesDeleted?: Array<{ message: MessageRef }>;
  labelsAdded?: Array<{ message: MessageRef; labelIds: string[] }>;
  labelsRemoved?: Array<{ message: MessageRef; labelIds: string[] }>;
}

const SYSTEM_LABELS = [
  'INBOX',
  'UNREAD',
  'STARRED',
  'IMPORTANT',
  'SENT',
  'DRAFT',
  'TRASH',
  'SPAM',
  'CATEGORY_PERSONAL',
];

/** One user's mailbox with Gmail's history semantics: every change is a numbered record. */
export class FakeMailbox {
  readonly messages = new Map<string, FakeGmailMessage>();
  readonly labels = new Map<string, string>(SYSTEM_LABELS.map((id) => [id, id]));
  readonly drafts = new Map<string, { id: string; message: FakeGmailMessage }>();
  /** Messages sent through messages.send or drafts.send, in order. */
  readonly sent: FakeGmailMessage[] = [];
  historyId = 1000;
  /** History at or below this id has expired: history.list from it answers 404. */
  historyFloor = 0;
  private readonly history: HistoryRecord[] = [];
  private nextId = 0x18c0000000000;

  constructor(readonly email: string) {}

  newId(): string {
    return (this.nextId++).toString(16);
  }

  labelId(name: string): string {
    for (const [id, labelName] of this.labels) if (labelName === name) return id;
    const id = `Label_${this.labels.size}`;
    this.labels.set(id, name);
    return id;
  }

  /** A message arrives (or is written) in Gmail. */
  add(
    raw: Buffer,
    {
      labelIds = ['INBOX', 'UNREAD'],
      internalDate = Date.now(),
      threadId,
    }: { labelIds?: string[]; internalDate?: number; threadId?: string } = {},
  ): FakeGmailMessage {
    const header = (name: string) =>
      new RegExp(`^${name}:\\s*(<[^>\\r\\n]+>)`, 'im').exec(raw.toString('latin1').split(/\r?\n\r?\n/)[0] ?? '')?.[1];
    const messageId = header('Message-ID');
    const inReplyTo = header('In-Reply-To');
    const parent = inReplyTo ? [...this.messages.values()].find((m) => m.messageId === inReplyTo) : undefined;
    const id = this.newId();
    const message: FakeGmailMessage = {
      id,
      threadId: threadId ?? parent?.threadId ?? id,
      labelIds: new Set(labelIds),
      raw,
      internalDate,
      historyId: 0,
      messageId,
    };
    this.messages.set(id, message);
    this.record(message, { messagesAdded: [{ message: ref(message) }] });
    return message;
  }

  modify(id: string, add: string[] = [], remove: string[] = []): FakeGmailMessage | undefined {
    const message = this.messages.get(id);
    if (!message) return undefined;
    const added = add.filter((l) => !message.labelIds.has(l));
    const removed = remove.filter((l) => message.labelIds.has(l));
    for (const l of added) message.labelIds.add(l);
    for (const l of removed) message.labelIds.delete(l);
    if (added.length > 0) this.record(message, { labelsAdded: [{ message: ref(message), labelIds: added }] });
    if (removed.length > 0) this.record(message, { labelsRemoved: [{ message: ref(message), labelIds: removed }] });
    return message;
  }

  /** Deleted for good (not trashed). */
  delete(id: string): boolean {
    const message = this.messages.get(id);
    if (!message) return false;
    this.messages.delete(id);
    this.record(message, { messagesDeleted: [{ message: ref(message) }] });
    return true;
  }

  /** History so old Gmail no longer keeps it: the next history.list answers 404. */
  expireHistory(): void {
    this.historyFloor = this.historyId;
  }

  historySince(start: number): HistoryRecord[] | undefined {
    if (start < this.historyFloor) return undefined;
    return this.history.filter((record) => record.id > start);
  }

  private record(message: FakeGmailMessage, change: Omit<HistoryRecord, 'id' | 'messages'>): void {
    this.historyId += 1 + Math.floor(Math.random() * 3);
    message.historyId = this.historyId;
    this.history.push({ id: this.historyId, messages: [{ id: message.id, threadId: message.threadId }], ...change });
  }
}

function ref(message: FakeGmailMessage): MessageRef {
  return { id: message.id, threadId: message.threadId, labelIds: [...message.labelIds] };
}

function decodeRaw(raw: unknown): Buffer {
  if (typeof raw !== 'string' || raw === '') throw new Error('raw is required');
  return Buffer.from(raw, 'base64url');
}

const USERS = '^/gmail/v1/users/([^/]+)';

/**
 * Gmail v1's REST JSON for the messages, labels, history and drafts the sync uses, over
 * `FakeGoogleServer` (so every call needs a live access token and faults apply).
 */
export class FakeGmail {
  readonly mailboxes = new Map<string, FakeMailbox>();
  /** messages.send never answers: 'before' storing the message, or 'after' (a crash test kills the caller meanwhile). */
  holdSend: 'before' | 'after' | undefined;
  /** Sends held so far. */
  heldSends = 0;

  constructor(readonly server: FakeGoogleServer) {
    const r = (
      method: string,
      path: string,
      handler: (box: FakeMailbox, req: FakeRequest) => FakeResponse | Promise<FakeResponse>,
    ) =>
      server.route(method, new RegExp(`${USERS}${path}$`), (req) => {
        const user = req.params[0] === 'me' ? req.account : req.params[0]!;
        if (user !== req.account) return googleError(403, 'Delegation denied', 'forbidden');
        return handler(this.mailbox(user), { ...req, params: req.params.slice(1) });
      });
    r('GET', '/profile', (box) => ({
      status: 200,
      body: {
        emailAddress: box.email,
        messagesTotal: box.messages.size,
        threadsTotal: box.messages.size,
        historyId: String(box.historyId),
      },
    }));
    r('GET', '/labels', (box) => ({
      status: 200,
      body: {
        labels: [...box.labels].map(([id, name]) => ({
          id,
          name,
          type: SYSTEM_LABELS.includes(id) ? 'system' : 'user',
        })),
      },
    }));
    r('POST', '/labels', (box, req) => {
      const name = (req.body as { name?: string }).name ?? '';
      if ([...box.labels.values()].includes(name))
        return googleError(409, 'Label name exists or conflicts', 'duplicate');
      const id = box.labelId(name);
      return { status: 200, body: { id, name, type: 'user' } };
    });
    r('GET', '/messages', (box, req) => this.list(box, req));
    r('GET', '/messages/([^/]+)', (box, req) => {
      const message = box.messages.get(req.params[0]!);
      if (!message) return googleError(404, 'Requested entity was not found.', 'notFound');
      return { status: 200, body: resource(message, req.url.searchParams.get('format') ?? 'full') };
    });
    r('POST', '/messages/([^/]+)/modify', (box, req) => {
      const { addLabelIds, removeLabelIds } = req.body as { addLabelIds?: string[]; removeLabelIds?: string[] };
      const message = box.modify(req.params[0]!, addLabelIds, removeLabelIds);
      return message
        ? { status: 200, body: resource(message, 'minimal') }
        : googleError(404, 'Requested entity was not found.', 'notFound');
    });
    r('POST', '/messages/batchModify', (box, req) => {
      const {
        ids = [],
        addLabelIds,
        removeLabelIds,
      } = req.body as { ids?: string[]; addLabelIds?: string[]; removeLabelIds?: string[] };
      if (ids.length > 1000) return googleError(400, 'Too many ids', 'invalidArgument');
      for (const id of ids) box.modify(id, addLabelIds, removeLabelIds);
      return { status: 204 };
    });
    r('POST', '/messages/([^/]+)/trash', (box, req) => {
      const message = box.modify(req.params[0]!, ['TRASH'], ['INBOX']);
      return message
        ? { status: 200, body: resource(message, 'minimal') }
        : googleError(404, 'Requested entity was not found.', 'notFound');
    });
    r('POST', '/messages/([^/]+)/untrash', (box, req) => {
      const message = box.modify(req.params[0]!, [], ['TRASH']);
      return message
        ? { status: 200, body: resource(message, 'minimal') }
        : googleError(404, 'Requested entity was not found.', 'notFound');
    });
    r('POST', '/messages/send', (box, req) => {
      const { raw, threadId } = req.body as { raw?: string; threadId?: string };
      const hold = this.holdSend;
      if (hold) this.heldSends++;
      // A client that dies while waiting: 'before' Gmail took the message, or 'after'.
      if (hold === 'before') return new Promise<FakeResponse>(() => {});
      const message = box.add(decodeRaw(raw), { labelIds: ['SENT'], ...(threadId ? { threadId } : {}) });
      box.sent.push(message);
      if (hold === 'after') return new Promise<FakeResponse>(() => {});
      return { status: 200, body: resource(message, 'minimal') };
    });
    r('GET', '/history', (box, req) => this.historyList(box, req));
    r('GET', '/drafts', (box) => ({
      status: 200,
      body: {
        drafts: [...box.drafts.values()].map((d) => ({
          id: d.id,
          message: { id: d.message.id, threadId: d.message.threadId },
        })),
      },
    }));
    r('POST', '/drafts', (box, req) => this.putDraft(box, box.newId(), req));
    r('PUT', '/drafts/([^/]+)', (box, req) =>
      box.drafts.has(req.params[0]!)
        ? this.putDraft(box, req.params[0]!, req)
        : googleError(404, 'Requested entity was not found.', 'notFound'),
    );
    r('DELETE', '/drafts/([^/]+)', (box, req) => {
      const draft = box.drafts.get(req.params[0]!);
      if (!draft) return googleError(404, 'Requested entity was not found.', 'notFound');
      box.drafts.delete(draft.id);
      box.delete(draft.message.id);
      return { status: 204 };
    });
    r('POST', '/drafts/send', (box, req) => {
      const draft = box.drafts.get((req.body as { id?: string }).id ?? '');
      if (!draft) return googleError(404, 'Requested entity was not found.', 'notFound');
      box.drafts.delete(draft.id);
      const message = box.modify(draft.message.id, ['SENT'], ['DRAFT'])!;
      box.sent.push(message);
      return { status: 200, body: resource(message, 'minimal') };
    });
  }

  mailbox(email: string): FakeMailbox {
    let box = this.mailboxes.get(email);
    if (!box) this.mailboxes.set(email, (box = new FakeMailbox(email)));
    return box;
  }

  /** Newest first, like Gmail; `rfc822msgid:` and `in:sent` are the only search terms understood. */
  private list(box: FakeMailbox, req: FakeRequest): FakeResponse {
    const q = req.url.searchParams;
    const labelIds = q.getAll('labelIds');
    const includeSpamTrash = q.get('includeSpamTrash') === 'true';
    const msgid = /rfc822msgid:(\S+)/.exec(q.get('q') ?? '')?.[1];
    const all = [...box.messages.values()]
      .filter((m) => includeSpamTrash || !(m.labelIds.has('SPAM') || m.labelIds.has('TRASH')))
      .filter((m) => labelIds.every((l) => m.labelIds.has(l)))
      .filter((m) => !msgid || m.messageId === (msgid.startsWith('<') ? msgid : `<${msgid}>`))
      .sort((a, b) => b.internalDate - a.internalDate || (a.id < b.id ? 1 : -1));
    const start = Number(q.get('pageToken') ?? 0);
    const size = Math.min(Number(q.get('maxResults') ?? 100), 500);
    const page = all.slice(start, start + size);
    return {
      status: 200,
      body: {
        ...(page.length > 0 ? { messages: page.map((m) => ({ id: m.id, threadId: m.threadId })) } : {}),
        ...(start + size < all.length ? { nextPageToken: String(start + size) } : {}),
        resultSizeEstimate: all.length,
      },
    };
  }

  private historyList(box: FakeMailbox, req: FakeRequest): FakeResponse {
    const q = req.url.searchParams;
    const start = Number(q.get('startHistoryId'));
    if (!Number.isFinite(start) || start <= 0) return googleError(400, 'Invalid startHistoryId', 'invalidArgument');
    const records = box.historySince(start);
    if (!records) return googleError(404, 'Requested entity was not found.', 'notFound');
    const offset = Number(q.get('pageToken') ?? 0);
    const size = Math.min(Number(q.get('maxResults') ?? 100), 500);
    const page = records.slice(offset, offset + size);
    return {
      status: 200,
      body: {
        ...(page.length > 0 ? { history: page } : {}),
        ...(offset + size < records.length ? { nextPageToken: String(offset + size) } : {}),
        historyId: String(box.historyId),
      },
    };
  }

  private putDraft(box: FakeMailbox, id: string, req: FakeRequest): FakeResponse {
    const { message } = req.body as { message?: { raw?: string; threadId?: string } };
    const old = box.drafts.get(id);
    if (old) box.delete(old.message.id);
    const stored = box.add(decodeRaw(message?.raw), {
      labelIds: ['DRAFT'],
      ...(message?.threadId ? { threadId: message.threadId } : {}),
    });
    box.drafts.set(id, { id, message: stored });
    return { status: 200, body: { id, message: resource(stored, 'minimal') } };
  }
}

function resource(message: FakeGmailMessage, format: string): Record<string, unknown> {
  const base = {
    id: message.id,
    threadId: message.threadId,
    labelIds: [...message.labelIds],
    historyId: String(message.historyId),
    internalDate: String(message.internalDate),
    sizeEstimate: message.raw.length,
  };
  if (format === 'minimal') return base;
  if (format === 'raw') return { ...base, snippet: '', raw: message.raw.toString('base64url') };
  return { ...base, snippet: '', payload: { headers: [] } };
}

import type { INestApplicationContext } from '@nestjs/common';
import pg from 'pg';
import { simpleParser, type AddressObject, type EmailAddress } from 'mailparser';
import {
  agentScope,
  DEFAULT_SCOPE_RULES,
  OWNER_SCOPE,
  rpcSubject,
  type MethodDefinition,
  type ParamsOf,
  type ItemKind,
  type ResultOf,
  type Scope,
  noteMarkdownOf,
} from '@memex/contracts';
import { BlobStore, sha256 } from '@memex/blobs';
import { Bus, callRpc, EventPublisher, newId, type NamedDraft, bindDraft } from '@memex/bus';
import { ServiceHost, startService } from '@memex/runtime';
import { createTestEnv, itemMeta, type TestEnv } from '@memex/testing';
import { GraphModule } from '../graph.module.js';

/** The graph service in this process against a fresh TestEnv, fed events and called over NATS. */
export interface GraphHarness {
  env: TestEnv;
  bus: Bus;
  app: INestApplicationContext;
  publisher: EventPublisher;
  blobs: BlobStore;
  call<M extends MethodDefinition>(method: M, params: ParamsOf<M>, scope?: Scope): Promise<ResultOf<M>>;
  /** Publishes and waits until the projector has applied the last one; answers its seq. */
  publish(drafts: NamedDraft[]): Promise<number>;
  /** Waits until the projector has applied `seq`. */
  applied(seq: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startGraph(): Promise<GraphHarness> {
  const env = await createTestEnv();
  const app = await startService((config) => GraphModule.register(config), env.config);
  const bus = await Bus.connect(env.config.natsUrl, 'graph-test');
  const publisher = new EventPublisher(bus);
  const applied = (seq: number) => app.get(ServiceHost).projector!.waitFor(seq, 60_000);
  return {
    env,
    bus,
    app,
    publisher,
    blobs: new BlobStore(env.config.blobsDir),
    call: (method, params, scope = OWNER_SCOPE) =>
      callRpc(
        bus,
        rpcSubject(method),
        {
          method: method.name,
          params,
          scope,
          caller:
            scope.kind === 'owner' ? { kind: 'user', id: 'owner' } : { kind: 'session', id: `token:${scope.tokenId}` },
        },
        60_000,
      ),
    async publish(drafts) {
      const published = await publisher.publishAll(drafts.map((draft) => bindDraft(draft)));
      const last = published[published.length - 1]!.seq;
      await applied(last);
      return last;
    },
    applied,
    async stop() {
      await bus.close();
      await app.close();
      await env.stop();
    },
  };
}

/** An agent's scope under the default rules (mail only with the `mail` label). */
export function agent(labels: string[]): Scope {
  return agentScope(`agent-${labels.join('-') || 'none'}`, labels, DEFAULT_SCOPE_RULES);
}

function addresses(field: AddressObject | AddressObject[] | undefined): { name: string; address: string }[] {
  const out: { name: string; address: string }[] = [];
  const add = (entry: EmailAddress) => {
    if (entry.group) return entry.group.forEach(add);
    const address = (entry.address ?? '').trim().toLowerCase();
    const name = (entry.name ?? '').replace(/\s+/g, ' ').trim();
    if (address || name) out.push({ name, address });
  };
  for (const object of Array.isArray(field) ? field : field ? [field] : []) object.value.forEach(add);
  return out;
}

export interface MailOptions {
  labels?: string[];
  spam?: boolean;
  id?: string;
  /** The date when the message has none. */
  fallbackDate?: string;
  /** No date at all: as services/ingest publishes it, stamped with the import time, `dateSource: null`. */
  undated?: boolean;
}

/**
 * The `item.ingested` event services/ingest publishes for a message (meta as its mail handler
 * writes it), with the text and bytes stored as blobs first.
 */
export async function mailEvent(blobs: BlobStore, raw: Buffer, options: MailOptions = {}): Promise<NamedDraft> {
  const mail = await simpleParser(raw, {
    skipHtmlToText: true,
    skipTextToHtml: true,
    skipTextLinks: true,
    skipImageLinks: true,
  });
  const id = options.id ?? newId();
  const text = mail.text ?? '';
  const messageId = mail.messageId ? mail.messageId.replace(/^<|>$/g, '').toLowerCase() : null;
  const date = mail.date && !Number.isNaN(mail.date.getTime()) ? mail.date.toISOString() : null;
  const occurredAt = date ?? options.fallbackDate ?? '2000-01-01T00:00:00.000Z';
  const subject = (mail.subject ?? '').replace(/\s+/g, ' ').trim();
  const spam = options.spam ?? false;
  await blobs.put(raw);
  await blobs.put(Buffer.from(text));
  return {
    type: 'item.ingested',
    subject: `item:${id}`,
    actor: { kind: 'user', id: 'owner' },
    labels: options.labels ?? [],
    kind: 'email',
    spam,
    ...(options.undated ? {} : { occurred_at: occurredAt }),
    data: {
      id,
      kind: 'email',
      revision: 1,
      title: subject || '(no subject)',
      source: { kind: 'import:mbox', id: 'fixtures' },
      external_id: null,
      identity: messageId ? `message-id:${messageId}` : `mail-sha256:${sha256(raw)}`,
      origin: 'imported',
      content_type: 'message/rfc822',
      content_sha256: sha256(raw),
      size: raw.length,
      text_sha256: sha256(Buffer.from(text)),
      text_length: text.length,
      meta: {
        ...itemMeta('email').meta,
        messageId,
        threadKey: messageId ?? id,
        subject,
        from: addresses(mail.from),
        to: addresses(mail.to),
        cc: addresses(mail.cc),
        bcc: addresses(mail.bcc),
        replyTo: addresses(mail.replyTo),
        date,
        ...(options.undated ? { dateSource: null } : {}),
        mailingList: listId(mail.headerLines.find((line) => line.key === 'list-id')?.line),
        spam,
      },
    },
  };
}

/** List-Id as services/ingest keeps it: without angle brackets, lowercase. */
function listId(line: string | undefined): string | null {
  const match = line ? /<([^>]+)>/.exec(line) : null;
  return match ? match[1]!.toLowerCase() : null;
}

/** A generated message in RFC 822 form. */
export function message(headers: Record<string, string>, body = 'Hello.\r\n'): Buffer {
  return Buffer.from(
    `${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}`)
      .join('\r\n')}\r\n\r\n${body}`,
  );
}

/** Splits an mbox file into messages at its `From ` separator lines. */
export function splitMbox(mbox: Buffer): Buffer[] {
  const text = mbox.toString('latin1');
  return text
    .split(/^From .*\r?\n/m)
    .filter((part) => part.trim().length > 0)
    .map((part) => Buffer.from(part.replace(/^>From /gm, 'From '), 'latin1'));
}

export async function noteEvent(
  body: string,
  options: { labels?: string[]; actor?: NamedDraft['actor']; id?: string } = {},
): Promise<NamedDraft> {
  const id = options.id ?? newId();
  return {
    type: 'note.put',
    v: 2,
    subject: `item:${id}`,
    actor: options.actor ?? { kind: 'user', id: 'owner' },
    labels: options.labels ?? [],
    kind: 'note',
    data: { id, title: body.split('\n', 1)[0]!.slice(0, 120), body, markdown: noteMarkdownOf(body) },
  };
}

/** Every table of the graph's schema, rows sorted: what a replay must reproduce. */
export async function snapshot(url: string, schema = 'graph'): Promise<Record<string, string[]>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ table_name: string }>(
      `select table_name from information_schema.tables where table_schema = $1 and table_name not in ('schema_migrations', 'projector_checkpoint') order by 1`,
      [schema],
    );
    const out: Record<string, string[]> = {};
    for (const { table_name } of tables.rows) {
      out[table_name] = (await client.query(`select * from "${schema}"."${table_name}"`)).rows
        .map((r) => JSON.stringify(r))
        .sort();
    }
    return out;
  } finally {
    await client.end();
  }
}

/** The item.ingested event services/ingest publishes for an item of this kind, type and meta. */
export function itemEvent(
  id: string,
  kind: ItemKind,
  type: string,
  meta: Record<string, unknown>,
  occurredAt = '2026-03-18T09:00:00.000Z',
): NamedDraft {
  const sha = '0'.repeat(64);
  return {
    type: 'item.ingested',
    subject: `item:${id}`,
    actor: { kind: 'import', id: 'test' },
    labels: [],
    kind,
    occurred_at: occurredAt,
    data: {
      id,
      kind,
      revision: 1,
      title: kind,
      source: { kind: 'import:test', id: '' },
      external_id: null,
      identity: `sha256:${id}`,
      origin: 'imported',
      content_type: type,
      content_sha256: sha,
      size: 1,
      text_sha256: sha,
      text_length: 0,
      // What the handler writes for a plain item of the kind, with what the test says over it.
      meta: { ...itemMeta(kind).meta, ...meta },
    },
  };
}

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import {
  agentScope,
  apiCatalog,
  DEFAULT_SCOPE_RULES,
  grpcMethodName,
  Ingest,
  isVisible,
  ItemsGet,
  MemexError,
  NotesPut,
  PROTO_PATH,
  Search,
  TokensCreate,
  type MethodDefinition,
} from '@memex/contracts';
import { fromStruct, GrpcServer, toStruct, type ProtoStruct } from '@memex/gateway';
import { photographedSign } from '@memex/media/testing';
import { SERVICE_MODULES, startStack, type TestStack } from './stack.js';

/**
 * The scope matrix, generated from the contracts catalog: every method, called with agent tokens
 * of several label sets, with params that name what each token may not see (its id, a thing known
 * only from it, words only it holds). No answer, error or event on the stream may carry a trace of
 * it, and an error about something hidden must read as the same error about something absent.
 * A method added to the catalog is covered the day it is added. Every service runs, so no method
 * answers "unavailable"; each probe goes over HTTP and again over gRPC, and both event streams
 * (SSE and gRPC Subscribe) are read from the start of the log.
 */

interface Secret {
  id: string;
  /** Strings only this item holds: its id, words, the people only it names. */
  markers: string[];
  kind: string;
  labels: string[];
}

const TOKENS = [[], ['client:acme'], ['mail'], ['photos', 'client:secret']];
const ABSENT_ID = '01ZZZZZZZZZZZZZZZZZZZZZZZZ';
const ABSENT_PERSON = 'person:nobody@absent.example';

/** The parts of a method's JSON schema that params are made from. */
interface JsonSchema {
  type?: string;
  anyOf?: JsonSchema[];
  const?: unknown;
  enum?: unknown[];
  required?: string[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  minItems?: number;
  minimum?: number;
  format?: string;
  pattern?: string;
}

/** A value for one schema node: hidden refs where a param names something, else the plainest valid value. */
function valueFor(
  schema: JsonSchema,
  name: string,
  ref: { id: string; person: string; word: string },
  writes: boolean,
): unknown {
  if (schema.anyOf) return valueFor(schema.anyOf[0]!, name, ref, writes);
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  switch (schema.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const key of schema.required ?? []) out[key] = valueFor(schema.properties![key]!, key, ref, writes);
      return out;
    }
    case 'array':
      return schema.minItems ? [valueFor(schema.items!, name, ref, writes)] : [];
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return false;
    case 'string': {
      if (schema.format === 'date-time') return '2021-03-01T00:00:00Z';
      if (/(^|_)ids?$|^item$/.test(name)) return ref.id;
      if (/^(key|src|dst|from|into|target|entity)$/.test(name))
        return name === 'target' || name === 'src' ? `item:${ref.id}` : ref.person;
      if (schema.pattern) return new RegExp(schema.pattern).test(ref.id) ? ref.id : 'x';
      // A query's words are the hidden ones; a write's text stays plain so the agent never stores them itself.
      return writes ? 'x' : ref.word;
    }
    default:
      return null;
  }
}

type GrpcClient = grpc.Client & Record<string, (...args: unknown[]) => unknown>;

/** The gateway's gRPC face: unary calls with the token in the metadata, params and results as Structs. */
function grpcClient(stack: TestStack): GrpcClient {
  const definition = protoLoader.loadSync(PROTO_PATH, { keepCase: true, longs: Number, defaults: true, oneofs: true });
  const Memex = (grpc.loadPackageDefinition(definition) as any).memex.v1.Memex;
  return new Memex(`127.0.0.1:${stack.gateway.get(GrpcServer).port}`, grpc.credentials.createInsecure());
}

function bearer(token: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}

function grpcCall(client: GrpcClient, method: string, params: unknown, token: string): Promise<unknown> {
  return new Promise((resolve, reject) =>
    client[grpcMethodName(method)]!.call(
      client,
      toStruct(params as Record<string, unknown>),
      bearer(token),
      (error: grpc.ServiceError | null, value?: ProtoStruct) => (error ? reject(error) : resolve(fromStruct(value!))),
    ),
  );
}

/** What a stream sends within `ms`: the SSE body, or gRPC Subscribe's events. */
async function readFor(
  ms: number,
  start: (signal: AbortSignal, onText: (text: string) => void) => void,
): Promise<string> {
  const controller = new AbortController();
  let text = '';
  start(controller.signal, (chunk) => (text += chunk));
  await new Promise((resolve) => setTimeout(resolve, ms));
  controller.abort();
  return text;
}

describe('scope matrix: every catalog method, several agent label sets, nothing outside the scope', () => {
  let stack: TestStack;
  const secrets: Secret[] = [];
  before(async () => {
    // The photo's pixels are not the subject here (set before ingest's parse workers start).
    process.env['MEMEX_OCR'] = 'off';
    stack = await startStack(Object.keys(SERVICE_MODULES));
    const mail = `From: Zelda Hiddenperson <zelda@hidden.example>\nTo: Me <me@example.com>\nSubject: zqxmail budget\nDate: Tue, 02 Mar 2021 10:00:00 +0000\nMessage-ID: <zqx-1@hidden.example>\n\nThe zqxmail budget is 41.\n`;
    const ingested = await stack.owner.call(Ingest, {
      items: [
        { type: 'message/rfc822', text: mail, source: { kind: 'mbox', id: 'matrix' }, external_id: 'zqx-1' },
        {
          type: 'text/html',
          text: '<html><head><title>zqxacme page</title></head><body><p>The zqxacme budget.</p></body></html>',
          source: { kind: 'folder', id: 'matrix' },
          labels: ['client:acme'],
          attributes: { filename: 'zqxacme.html' },
        },
      ],
    });
    const [mailId, pageId] = ingested.results.map((r) => r.id!);
    secrets.push(
      { id: mailId!, markers: [mailId!, 'zqxmail', 'zelda', 'Hiddenperson'], kind: 'email', labels: [] },
      { id: pageId!, markers: [pageId!, 'zqxacme'], kind: 'document', labels: ['client:acme'] },
    );
    // A photo, a contact card (no agent rule shows contacts) and a calendar event of a client's.
    const card = `BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Quentin Zqxcard\r\nEMAIL:quentin@zqxcard.example\r\nEND:VCARD\r\n`;
    const invite = [
      'BEGIN:VCALENDAR',
      'VERSION:2.0',
      'PRODID:-//memex//matrix//EN',
      'BEGIN:VEVENT',
      'UID:zqxevent-1@matrix.example',
      'DTSTAMP:20210301T090000Z',
      'DTSTART:20210302T100000Z',
      'DTEND:20210302T110000Z',
      'SUMMARY:zqxevent budget review',
      'END:VEVENT',
      'END:VCALENDAR',
      '',
    ].join('\r\n');
    const more = await stack.owner.call(Ingest, {
      items: [
        {
          type: 'image/jpeg',
          data: (await photographedSign(['matrix'])).toString('base64'),
          source: { kind: 'folder', id: 'matrix' },
          external_id: 'zqxphoto',
          attributes: { filename: 'zqxphoto.jpg' },
        },
        { type: 'text/vcard', text: card, source: { kind: 'folder', id: 'matrix' }, external_id: 'zqxcard' },
        {
          type: 'text/calendar',
          text: invite,
          source: { kind: 'folder', id: 'matrix' },
          external_id: 'zqxevent',
          labels: ['client:acme'],
        },
      ],
    });
    const [photoId, cardId, eventId] = more.results.map((r) => {
      assert.ok(r.id, `ingested: ${JSON.stringify(r)}`);
      return r.id;
    });
    secrets.push(
      { id: photoId!, markers: [photoId!, 'zqxphoto'], kind: 'photo', labels: [] },
      { id: cardId!, markers: [cardId!, 'zqxcard', 'Quentin'], kind: 'contact', labels: [] },
      { id: eventId!, markers: [eventId!, 'zqxevent'], kind: 'event', labels: ['client:acme'] },
    );
    const note = await stack.owner.call(NotesPut, { body: 'zqxnote budget plans', labels: ['client:secret'] });
    secrets.push({ id: note.id, markers: [note.id, 'zqxnote'], kind: 'note', labels: ['client:secret'] });
    await stack.owner.call(NotesPut, { body: 'An open budget note everyone may read.' });
    // Everything projected and embedded before the probes.
    await stack.owner.call(ItemsGet, { id: note.id, min_seq: note.seq });
    for (let i = 0; i < 240 && (await stack.owner.call(Search, { q: 'zqxmail zqxnote zqxacme' })).hits.length < 3; i++)
      await new Promise((resolve) => setTimeout(resolve, 250));
  });
  after(async () => stack?.stop());

  // Every method × token × hidden thing, over HTTP and gRPC: past the 5-minute default on a loaded machine.
  test(
    'no answer, error or event carries what the token may not see; hidden reads as absent',
    { timeout: 900_000 },
    async () => {
      const methods = apiCatalog.list();
      assert.ok(methods.length > 30, `${methods.length} methods in the catalog`);
      const leaks: string[] = [];
      const unavailable = new Set<string>();
      const viaGrpc = grpcClient(stack);
      let calls = 0;
      let grpcAnswers = 0;
      for (const labels of TOKENS) {
        const created = await stack.owner.call(TokensCreate, { labels });
        const agent = stack.clientFor(created.token);
        const scope = agentScope('matrix', labels, DEFAULT_SCOPE_RULES);
        const hidden = secrets.filter((s) => !isVisible(scope, { kind: s.kind, labels: s.labels, spam: false }));
        const markers = hidden.flatMap((s) => s.markers);
        // A marker the caller sent itself (an id it asked about, echoed in "no item …") is no leak.
        const leaked = (text: string, sent = '') =>
          markers.filter(
            (m) => text.toLowerCase().includes(m.toLowerCase()) && !sent.toLowerCase().includes(m.toLowerCase()),
          );
        const answer = async (method: MethodDefinition, params: unknown) => {
          calls++;
          try {
            return { ok: true, text: JSON.stringify(await agent.call(method, params as never)) };
          } catch (error) {
            if (error instanceof MemexError && error.code === 'unavailable') unavailable.add(method.name);
            return { ok: false, text: error instanceof Error ? error.message : String(error) };
          }
        };
        const overGrpc = async (method: MethodDefinition, params: unknown) => {
          calls++;
          try {
            const result = JSON.stringify(await grpcCall(viaGrpc, method.name, params, created.token));
            grpcAnswers++;
            return result;
          } catch (error) {
            // The status code too: hidden and absent must fail with the same one.
            const { code, details } = error as grpc.ServiceError;
            return details === undefined ? String(error) : `${code}: ${details}`;
          }
        };
        for (const secret of hidden) {
          const word = secret.markers[1]!;
          const refs = { id: secret.id, person: 'person:zelda@hidden.example', word };
          const absent = { id: ABSENT_ID, person: ABSENT_PERSON, word: 'qqqabsentword' };
          for (const method of methods) {
            const writes = method.kind === 'command';
            const params = valueFor(method.params as unknown as JsonSchema, '', refs, writes);
            const got = await answer(method, params);
            const where = `${method.name} as [${labels.join(',')}] about hidden ${secret.kind}`;
            const found = leaked(got.text, JSON.stringify(params));
            if (found.length) leaks.push(`${where}: ${found.join(', ')} in ${got.text.slice(0, 300)}`);
            const gotViaGrpc = await overGrpc(method, params);
            const foundViaGrpc = leaked(gotViaGrpc, JSON.stringify(params));
            if (foundViaGrpc.length)
              leaks.push(`${where} over gRPC: ${foundViaGrpc.join(', ')} in ${gotViaGrpc.slice(0, 300)}`);
            // An error about the hidden thing must be the error about an absent one (named alike).
            const other = await answer(method, valueFor(method.params as unknown as JsonSchema, '', absent, writes));
            const normalize = (text: string, ref: typeof refs) =>
              text.replaceAll(ref.id, '<id>').replaceAll(ref.person, '<person>').replaceAll(ref.word, '<word>');
            if (!got.ok || !other.ok) {
              if (got.ok !== other.ok || normalize(got.text, refs) !== normalize(other.text, absent))
                leaks.push(
                  `${where}: hidden and absent differ: ${got.text.slice(0, 200)} | ${other.text.slice(0, 200)}`,
                );
              // The same over gRPC: one status and one message for hidden and absent.
              const otherViaGrpc = await overGrpc(
                method,
                valueFor(method.params as unknown as JsonSchema, '', absent, writes),
              );
              if (normalize(gotViaGrpc, refs) !== normalize(otherViaGrpc, absent))
                leaks.push(
                  `${where} over gRPC: hidden and absent differ: ${gotViaGrpc.slice(0, 200)} | ${otherViaGrpc.slice(0, 200)}`,
                );
            }
          }
        }
        // The event streams, from the start of the log.
        const sse = await readFor(1500, (signal, onText) => {
          void fetch(`${stack.url}/api/v1/memex/events?from_seq=1`, {
            headers: { authorization: `Bearer ${created.token}` },
            signal,
          })
            .then(async (stream) => {
              for await (const chunk of stream.body!) onText(Buffer.from(chunk).toString());
            })
            .catch(() => undefined); // aborted: the stream was read for long enough
        });
        assert.match(sse, /^data: /m, 'the SSE stream sent events');
        const subscribed = await readFor(1500, (signal, onText) => {
          const stream = viaGrpc.Subscribe!(
            { from_seq: 1, types: [] },
            bearer(created.token),
          ) as grpc.ClientReadableStream<{
            json: string;
          }>;
          stream.on('data', (event) => onText(`${event.json}\n`)).on('error', () => undefined);
          signal.addEventListener('abort', () => stream.cancel());
        });
        assert.ok(subscribed.length > 0, 'gRPC Subscribe sent events');
        for (const [name, text] of [
          ['SSE', sse],
          ['gRPC Subscribe', subscribed],
        ] as const) {
          const found = leaked(text);
          if (found.length) leaks.push(`${name} stream as [${labels.join(',')}]: ${found.join(', ')}`);
        }
      }
      viaGrpc.close();
      assert.ok(calls > methods.length * 8, `${calls} calls`);
      assert.ok(grpcAnswers > methods.length, `${grpcAnswers} answers over gRPC of ${calls} calls`);
      assert.deepEqual([...unavailable], [], 'every method is answered by a running service');
      assert.deepEqual(leaks, []);
    },
  );
});

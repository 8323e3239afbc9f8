import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  agentScope,
  apiCatalog,
  DEFAULT_SCOPE_RULES,
  Ingest,
  isVisible,
  ItemsGet,
  NotesPut,
  Search,
  TokensCreate,
  type MethodDefinition,
} from '@memex/contracts';
import { startStack, type TestStack } from './stack.js';

/**
 * The scope matrix, generated from the contracts catalog: every method, called with agent tokens
 * of several label sets, with params that name what each token may not see (its id, a thing known
 * only from it, words only it holds). No answer, error or event on the stream may carry a trace of
 * it, and an error about something hidden must read as the same error about something absent.
 * A method added to the catalog is covered the day it is added. Calls go over HTTP; gRPC answers
 * through the same router (surfaces.test checks it keeps the same auth) and is not called here.
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

describe('scope matrix: every catalog method, several agent label sets, nothing outside the scope', () => {
  let stack: TestStack;
  const secrets: Secret[] = [];
  before(async () => {
    stack = await startStack(['ingest', 'pipelines', 'search', 'graph', 'insights']);
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
    const note = await stack.owner.call(NotesPut, { body: 'zqxnote budget plans', labels: ['client:secret'] });
    secrets.push({ id: note.id, markers: [note.id, 'zqxnote'], kind: 'note', labels: ['client:secret'] });
    await stack.owner.call(NotesPut, { body: 'An open budget note everyone may read.' });
    // Everything projected and embedded before the probes.
    await stack.owner.call(ItemsGet, { id: note.id, min_seq: note.seq });
    for (let i = 0; i < 240 && (await stack.owner.call(Search, { q: 'zqxmail zqxnote zqxacme' })).hits.length < 3; i++)
      await new Promise((resolve) => setTimeout(resolve, 250));
  });
  after(async () => stack?.stop());

  test('no answer, error or event carries what the token may not see; hidden reads as absent', async () => {
    const methods = apiCatalog.list();
    assert.ok(methods.length > 30, `${methods.length} methods in the catalog`);
    const leaks: string[] = [];
    let calls = 0;
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
          return { ok: false, text: error instanceof Error ? error.message : String(error) };
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
          // An error about the hidden thing must be the error about an absent one (named alike).
          const other = await answer(method, valueFor(method.params as unknown as JsonSchema, '', absent, writes));
          const normalize = (text: string, ref: typeof refs) =>
            text.replaceAll(ref.id, '<id>').replaceAll(ref.person, '<person>').replaceAll(ref.word, '<word>');
          if (!got.ok || !other.ok) {
            if (got.ok !== other.ok || normalize(got.text, refs) !== normalize(other.text, absent))
              leaks.push(`${where}: hidden and absent differ: ${got.text.slice(0, 200)} | ${other.text.slice(0, 200)}`);
          }
        }
      }
      // The event stream, from the start of the log.
      const controller = new AbortController();
      const stream = await fetch(`${stack.url}/api/v1/memex/events?from_seq=1`, {
        headers: { authorization: `Bearer ${created.token}` },
        signal: controller.signal,
      });
      let sse = '';
      const reader = stream.body!.getReader();
      const stop = setTimeout(() => controller.abort(), 1500);
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          sse += Buffer.from(value).toString();
        }
      } catch {
        // aborted: the stream was read for long enough
      } finally {
        clearTimeout(stop);
      }
      assert.match(sse, /^data: /m, 'the stream sent events');
      const found = leaked(sse);
      if (found.length) leaks.push(`events stream as [${labels.join(',')}]: ${found.join(', ')}`);
    }
    assert.ok(calls > methods.length * 4, `${calls} calls`);
    assert.deepEqual(leaks, []);
  });
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  agentScope,
  apiCatalog,
  buildProto,
  DEFAULT_SCOPE_RULES,
  eventCatalog,
  isVisible,
  PROTO_PATH,
  renderApiDocs,
  safeFileName,
} from './index.js';

const valid = {
  id: '01JDZ6Q4X8N5V2W3Y4Z5A6B7C8',
  type: 'note.put',
  v: 1,
  subject: 'item:01JDZ6Q4X8N5V2W3Y4Z5A6B7C8',
  occurred_at: '2026-12-01T10:00:00.000Z',
  recorded_at: '2026-12-01T10:00:00.000Z',
  actor: { kind: 'user', id: 'owner' },
  labels: [],
  data: { id: '01JDZ6Q4X8N5V2W3Y4Z5A6B7C8', title: 't', body: 'b' },
};

test('a valid envelope passes', () => {
  assert.equal(eventCatalog.validate(valid).type, 'note.put');
});

test('malformed envelopes are rejected with an error naming what is wrong', () => {
  const cases: [unknown, RegExp][] = [
    [{ ...valid, id: 'not-a-ulid' }, /invalid event envelope: id: Expected string to match/],
    [{ ...valid, type: 'NotePut' }, /type: Expected string to match/],
    [{ ...valid, actor: { kind: 'robot', id: 'x' } }, /actor\.kind/],
    [{ ...valid, extra: 1 }, /extra/],
    [{ ...valid, occurred_at: 'yesterday' }, /occurred_at/],
    [{ ...valid, type: 'note.shredded' }, /unknown event type note\.shredded v1/],
    [{ ...valid, v: 7 }, /unknown event type note\.put v7/],
    [{ ...valid, data: { id: valid.id, title: 't' } }, /invalid note\.put v1 event: data\.body: is required/],
    [{ ...valid, data: { ...valid.data, body: 5 } }, /data\.body: Expected string, got 5/],
    ['{}', /invalid event envelope/],
  ];
  for (const [envelope, message] of cases) assert.throws(() => eventCatalog.validate(envelope), message);
});

test('scope rule: owner sees all; agents see allowed kinds whose labels they share, never spam', () => {
  const mail = agentScope('t1', ['mail'], DEFAULT_SCOPE_RULES);
  const plain = agentScope('t2', [], DEFAULT_SCOPE_RULES);
  const acme = agentScope('t3', ['client:acme'], DEFAULT_SCOPE_RULES);
  const email = { kind: 'email', labels: [] };
  assert.equal(isVisible({ kind: 'owner' }, { ...email, spam: true }), true);
  assert.equal(isVisible(mail, email), true);
  assert.equal(isVisible(mail, { ...email, spam: true }), false);
  assert.equal(isVisible(plain, email), false);
  assert.equal(isVisible(plain, { kind: 'note', labels: [] }), true);
  assert.equal(isVisible(plain, { kind: 'note', labels: ['client:acme'] }), false);
  assert.equal(isVisible(acme, { kind: 'note', labels: ['client:acme'] }), true);
  assert.equal(isVisible(acme, { kind: 'email', labels: ['client:acme'] }), false);
});

test('every query method accepts min_seq; method names are unique and routed to a service', () => {
  for (const method of apiCatalog.list()) {
    if (method.kind === 'query') assert.ok('min_seq' in method.params.properties, `${method.name} lacks min_seq`);
    assert.match(method.name, /^memex\./);
  }
});

test('the generated proto and API reference are up to date (npm run gen:api -w contracts)', () => {
  assert.equal(fs.readFileSync(PROTO_PATH, 'utf8'), buildProto(apiCatalog));
  const apiMd = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/api.md');
  assert.equal(fs.readFileSync(apiMd, 'utf8'), renderApiDocs());
});

test('safeFileName keeps the base name only, without what a file system would act on', () => {
  assert.equal(safeFileName('../../../../root/.ssh/authorized_keys'), 'authorized_keys');
  assert.equal(safeFileName('C:\\Users\\me\\report.pdf'), 'report.pdf');
  assert.equal(safeFileName('..'), null);
  assert.equal(safeFileName('.bashrc'), 'bashrc');
  assert.equal(safeFileName('a\u0000b\nc<d>.txt'), 'a_b_c_d_.txt');
  assert.equal(safeFileName('NUL.txt'), '_NUL.txt');
  assert.equal(safeFileName(`${'x'.repeat(300)}.docx`), `${'x'.repeat(195)}.docx`);
  assert.equal(safeFileName('Résumé (final).pdf'), 'Résumé (final).pdf');
  assert.equal(safeFileName(null), null);
});

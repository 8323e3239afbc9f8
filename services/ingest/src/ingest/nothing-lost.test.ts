import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ingest, ItemsGet } from '@memex/contracts';
import { ServiceHost } from '@memex/runtime';
import { message } from '../handlers/testing/build.js';
import { b64, startIngest, type IngestHarness } from '../testing/service.js';

/**
 * Before: a NUL in an external_id failed the whole batch with a 500 (good items included), and a
 * NUL in the text was answered `created` and then failed in the projectors, unreadable and
 * unsearchable, while health stayed green.
 */
describe('nothing lost silently: NUL characters', () => {
  let h: IngestHarness;
  before(async () => {
    h = await startIngest();
  });
  after(async () => h.stop());

  test('a NUL in an external_id rejects that item only; NULs in text are removed and the item projects', async () => {
    const good = message([['From', 'a@x.org'], ['Subject', 'Good'], ['Message-ID', '<good@x>'], ['Date', 'Mon, 1 Jun 2009 10:00:00 +0000']], 'Fine.\r\n');
    const nulBody = message([['From', 'a@x.org'], ['Subject', 'Nul body'], ['Message-ID', '<nul@x>'], ['Date', 'Mon, 1 Jun 2009 11:00:00 +0000']], 'a\0b\r\n');
    const answer = await h.call(Ingest, {
      items: [
        { type: 'message/rfc822', data: b64(good), source: { kind: 'mbox', id: 'nul' }, external_id: 'box#1' },
        { type: 'message/rfc822', data: b64(good), source: { kind: 'mbox', id: 'nul' }, external_id: 'box\0#2' },
        { type: 'text/markdown', text: '# No\0tes\n\nsome\0 text\n', source: { kind: 'folder', id: 'nul' }, external_id: 'notes.md' },
        { type: 'message/rfc822', data: b64(nulBody), source: { kind: 'mbox', id: 'nul' }, external_id: 'box#3' },
      ],
    });
    assert.deepEqual(answer.results.map((r) => r.status), ['created', 'rejected', 'created', 'created']);
    assert.match(answer.results[1]!.reason!, /external_id contains a NUL character/);
    const markdown = await h.call(ItemsGet, { id: answer.results[2]!.id!, min_seq: answer.seq });
    assert.equal(markdown.title, 'Notes');
    assert.match(markdown.text, /some text/);
    const mail = await h.call(ItemsGet, { id: answer.results[3]!.id!, min_seq: answer.seq });
    assert.match(mail.text, /ab/);
    assert.equal(await h.app.get(ServiceHost).projector!.failureCount(), 0);
  });
});

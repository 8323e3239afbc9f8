import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { sharedRoot } from '@memex/testing';
import { RejectedItem } from '../handler.js';
import { CORPUS_SKIP, fixture } from '../testing/build.js';
import { registry } from '../testing/parse.js';

/** Every message and mbox of the shared corpus's mail folder. */
const files = CORPUS_SKIP
  ? []
  : readdirSync(path.join(sharedRoot, 'corpus/mail'), { recursive: true, encoding: 'utf8' })
      .filter((f) => /\.(eml|mbox)$/.test(f))
      .map((f) => `mail/${f}`)
      .sort();

/** The only fixtures that are not messages: mime4j's "body without headers" cases. */
const NOT_MESSAGES = [
  'mail/mime4j-testmsgs/malformedHeader-noheader.eml',
  'mail/mime4j-testmsgs/malformedHeaderStartsBody-noheader.eml',
];

describe("mail: real-world messages from mail parsers' test suites", { skip: CORPUS_SKIP }, () => {
  it('has the fixtures', () => assert.ok(files.length > 150, `${files.length} fixtures`));

  it('parses every real message (however broken) and rejects only the ones without headers', async () => {
    const rejected: string[] = [];
    for (const file of files) {
      try {
        const item = await registry.parse({ type: 'message/rfc822', bytes: fixture(file) });
        assert.equal(item.kind, 'email', file);
        assert.doesNotThrow(() => JSON.stringify(item.meta), file);
      } catch (error) {
        assert.ok(error instanceof RejectedItem && !error.unexpected, `${file}: ${String(error)}`);
        rejected.push(file);
      }
    }
    assert.deepEqual(rejected, NOT_MESSAGES);
  });
});

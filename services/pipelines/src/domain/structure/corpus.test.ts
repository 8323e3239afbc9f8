import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { sharedFile, sharedSkip } from '@memex/testing';
import { mentionsIn } from './mentions.js';
import { signatureIn } from './signature.js';

const MAIL = 'corpus/mail';

/** A single-part plain-text message's body (after the header's blank line), as written. */
function body(file: string): string {
  const raw = fs.readFileSync(file, 'latin1').replace(/\r\n/g, '\n');
  return raw.slice(raw.indexOf('\n\n') + 2);
}

/** Every message file under a folder, smallest first, up to `limit`. */
function messages(dir: string, limit: number): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.eml')) out.push(full);
    }
  };
  walk(dir);
  return out
    .map((file) => ({ file, size: fs.statSync(file).size }))
    .sort((a, b) => a.size - b.size || a.file.localeCompare(b.file))
    .slice(0, limit)
    .map(({ file }) => file);
}

describe('tier 0 on real mail (the shared corpus)', { skip: sharedSkip(MAIL) }, () => {
  test('real signatures, labelled by hand: after `-- ` a name; a mailing list footer is no one', () => {
    // Labels from reading each file: the sender signs with their name (an address on the next line is not a field).
    const labelled: Array<[string, string[]]> = [
      ['spamassassin-testdata/nice/007.eml', ['name: Duncan Findlay']],
      ['spamassassin-testdata/nice/mailman_message.eml', ['name: Alexandre Julliard']],
      // The `--` block is majordomo's footer ("Visit the PC800 web page…"), not the sender's signature.
      ['mime-tools-testmsgs/jt-0498.eml', []],
    ];
    for (const [file, fields] of labelled) {
      const text = body(sharedFile(`${MAIL}/${file}`));
      const block = signatureIn(text, 'sender@example.org');
      assert.deepEqual(
        (block?.fields ?? []).map((f) => `${f.field}: ${f.value}`),
        fields,
        file,
      );
    }
  });

  test('the smallest 150 messages: no extractor throws, and every span is exactly its text', () => {
    const reference = new Date('2003-04-06T00:00:00Z');
    let found = 0;
    for (const file of messages(sharedFile(MAIL), 150)) {
      const text = body(file);
      for (const mention of mentionsIn(text, reference)) {
        assert.equal(text.slice(mention.start, mention.end), mention.text, `${file}: ${mention.kind}`);
        found++;
      }
      const block = signatureIn(text, 'sender@example.org');
      for (const f of block?.fields ?? []) assert.equal(text.slice(f.start, f.end), f.text, `${file}: ${f.field}`);
    }
    assert.ok(found > 0, 'real mail mentions something');
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { message } from '../testing/build.js';
import { encodedWord } from '../testing/encode.js';
import { parseEmail } from '../testing/parse.js';
import { isHiddenAddress } from './mail-handler.js';
import { spelledOutAddresses } from './repair.js';

/**
 * A message as Mailman's pipermail archives it (the `.txt` and `.txt.gz` of every list it has
 * served since 1998): `@` spelled out in every address, the name in a comment, attachments
 * scrubbed into a note with a URL.
 */
const pipermail = (from: string, extra: Array<[string, string]> = []) =>
  message(
    [
      ['From', from],
      ['Date', 'Mon, 05 Jan 2009 10:00:00 +0100'],
      ['Subject', '[Python-Dev] PEP 8 and tabs'],
      ['In-Reply-To', '<49620A1B.5040407@example.org>'],
      ['References', '<49620A1B.5040407@example.org>'],
      ['Message-ID', '<4962125C.1000608@example.net>'],
      ...extra,
    ],
    'Tabs are evil.\r\n-------------- next part --------------\r\nAn HTML attachment was scrubbed...\r\n',
  );

describe('mail from list archives that hide addresses', () => {
  it('reads pipermail\'s "alice at example.com (Alice Example)" as the address and the name', async () => {
    const item = await parseEmail(pipermail('alice.smith at mail.example.co.uk (Alice Smith)'));
    assert.deepEqual(item.meta.from, [{ name: 'Alice Smith', address: 'alice.smith@mail.example.co.uk' }]);
    assert.ok(
      item.warnings?.some((w) => /name at domain/.test(w)),
      JSON.stringify(item.warnings),
    );
    // The message's own ids were never hidden: threading is untouched.
    assert.equal(item.meta.inReplyTo, '49620a1b.5040407@example.org');
  });

  it('reads an encoded name, a name in angle brackets and several recipients the same way', async () => {
    const item = await parseEmail(
      pipermail(`${encodedWord('Zoë Ünal', 'utf-8', 'Q')} <zoe at example.org>`, [
        ['To', 'python-dev at python.org, "Bob" <bob at example.com>'],
        ['X-Original-From', 'carol at example.net (Carol)'],
      ]),
    );
    assert.deepEqual(item.meta.from, [{ name: 'Zoë Ünal', address: 'zoe@example.org' }]);
    assert.deepEqual(
      item.meta.to.map((a) => a.address),
      ['python-dev@python.org', 'bob@example.com'],
    );
  });

  it('leaves a field with a real address alone, and words that only look like one', () => {
    assert.equal(spelledOutAddresses('"Dinner at Joe.com" <joe@example.com>'), undefined);
    assert.equal(spelledOutAddresses('Meet at noon'), undefined);
    assert.equal(spelledOutAddresses('Sales team at ACME'), undefined);
    assert.equal(spelledOutAddresses('bob at localhost'), undefined);
    assert.equal(spelledOutAddresses('bob at example.com'), 'bob@example.com');
  });
});

describe('mail from converted archives that keep the names apart', () => {
  const enron = (xFrom: string, from = 'phillip.allen@enron.com') =>
    message([
      ['Message-ID', '<18782981.1075855378110.JavaMail.evans@thyme>'],
      ['Date', 'Mon, 14 May 2001 16:39:00 -0700 (PDT)'],
      ['From', from],
      ['To', 'tim.belden@enron.com'],
      ['Subject', ''],
      ['X-From', xFrom],
      ['X-To', 'Tim Belden <Tim Belden/Enron@EnronXGate>'],
      ['X-Folder', "\\Phillip_Allen_Jan2002_1\\Allen, Phillip K.\\'Sent Mail"],
    ]);

  it("names the Enron corpus's bare sender by X-From, without its Notes address", async () => {
    assert.deepEqual((await parseEmail(enron('Phillip K Allen'))).meta.from, [
      { name: 'Phillip K Allen', address: 'phillip.allen@enron.com' },
    ]);
    assert.deepEqual((await parseEmail(enron('Jeff Dasovich <Jeff Dasovich/NA/Enron@Enron>'))).meta.from, [
      { name: 'Jeff Dasovich', address: 'phillip.allen@enron.com' },
    ]);
  });

  it('keeps a name the From field gives, and takes no address for a name', async () => {
    assert.deepEqual((await parseEmail(enron('Someone Else', 'Phil Allen <phillip.allen@enron.com>'))).meta.from, [
      { name: 'Phil Allen', address: 'phillip.allen@enron.com' },
    ]);
    assert.deepEqual((await parseEmail(enron('ann@example.com'))).meta.from, [
      { name: '', address: 'phillip.allen@enron.com' },
    ]);
  });
});

describe('mail from archives that hide part of each address', () => {
  it("keeps Google Groups' j...@gmail.com and MHonArc's alice@xxxxxxx.xxx as who wrote, never as an address", async () => {
    const item = await parseEmail(
      message([
        ['From', 'j...@gmail.com'],
        ['To', '"Alice" <al...@example.com>, bob@xxxxxxx.xxx, carol@example.org'],
        ['Subject', 'hidden'],
      ]),
    );
    assert.deepEqual(item.meta.from, [{ name: 'j...@gmail.com', address: '' }]);
    assert.deepEqual(item.meta.to, [
      { name: 'Alice', address: '' },
      { name: 'bob@xxxxxxx.xxx', address: '' },
      { name: '', address: 'carol@example.org' },
    ]);
  });

  it('takes real addresses that only look odd', () => {
    for (const address of ['x@x.org', 'j.doe@example.com', 'xx@xerox.com', 'a..b@example.com'])
      assert.equal(isHiddenAddress(address), false, address);
    for (const address of ['j...@gmail.com', 'alice@xxxxxxx.xxx', 'al…@example.com'])
      assert.equal(isHiddenAddress(address), true, address);
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { sharedFile, sharedSkip } from '@memex/testing';
import type { ContactItem } from '../handler.js';
import { registry, rejection } from '../testing/parse.js';

const CORPUS = 'corpus/contacts';
const skip = sharedSkip(CORPUS);

async function parseVcf(bytes: Buffer | string, type = 'text/vcard'): Promise<ContactItem> {
  const item = await registry.parse({ type, bytes: Buffer.from(bytes) });
  assert.equal(item.kind, 'contact');
  return item as ContactItem;
}

function read(file: string): Buffer {
  return fs.readFileSync(sharedFile(`${CORPUS}/${file}`));
}

function corpusFiles(): string[] {
  if (skip) return [];
  const root = sharedFile(CORPUS);
  return fs
    .readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.vcf'))
    .map((f) => path.normalize(f))
    .sort();
}

/** The cards each file holds, counted by hand from its BEGIN:VCARD lines. */
const CARDS: Record<string, number> = {
  'ez-vcard/John_Doe_ANDROID.vcf': 6,
  'ez-vcard/gmail-list.vcf': 3,
  'ez-vcard/rfc2426-example.vcf': 2,
};

describe('contacts: the shared corpus', { skip }, () => {
  for (const file of corpusFiles()) {
    it(`${file} parses, every card named, every photo a JPEG child`, async () => {
      const item = await parseVcf(read(file), 'text/x-vcard');
      const text = read(file).toString('utf8');
      assert.equal(item.meta.cards.length, CARDS[file] ?? 1);
      assert.equal(item.meta.cards.length, (text.match(/^BEGIN:VCARD/gim) ?? []).length);
      for (const card of item.meta.cards) {
        assert.ok(card.fullName.length > 0);
        // Addresses are kept as written, lowercased (one Android card has "ÑÑÑ…" for an address).
        for (const email of card.emails) assert.equal(email.address, email.address.trim().toLowerCase());
        for (const photo of card.photos) {
          if (photo.child === null) continue;
          const child = item.children?.[photo.child];
          assert.ok(child?.contentBytes, 'photo child without bytes');
          // Every embedded photo in this corpus is a JPEG: the decoded bytes start with its marker.
          assert.deepEqual([...child.contentBytes.subarray(0, 2)], [0xff, 0xd8]);
        }
      }
    });
  }
});

describe('contacts: values read by hand from the files', { skip }, () => {
  it('vCard 2.1 (Outlook): bare parameters become types, quoted-printable is decoded across soft line breaks', async () => {
    const [card] = (await parseVcf(read('ez-vcard/outlook-2003.vcf'))).meta.cards;
    assert.equal(card?.fullName, 'John Doe III');
    assert.deepEqual(card?.name, { family: 'Doe', given: 'John', additional: '', prefix: 'Mr.', suffix: 'III' });
    assert.deepEqual(card?.phones[0], { number: 'BusinessPhone', e164: null, types: ['work', 'voice'] });
    assert.equal(card?.note, 'This is the note field!!\nSecond line\n\nThird line is empty');
    assert.equal(card?.organization, 'Company, The, TheDepartment');
  });

  it('vCard 2.1 (Android): UTF-8 quoted-printable names', async () => {
    const cards = (await parseVcf(read('ez-vcard/John_Doe_ANDROID.vcf'))).meta.cards;
    assert.equal(cards[2]?.fullName, 'Ñ Ñ Ñ Ñ Ñ');
    assert.deepEqual(cards[0]?.emails, [{ address: 'john.doe@company.com', types: ['pref'] }]);
    assert.equal(cards[0]?.fullName, 'john.doe@company.com', 'a card without a name is named by its address');
  });

  it('vCard 3.0 (RFC 2426 example): lowercase BEGIN, typed addresses, several cards', async () => {
    const cards = (await parseVcf(read('ez-vcard/rfc2426-example.vcf'))).meta.cards;
    assert.deepEqual(
      cards.map((c) => c.fullName),
      ['Frank Dawson', 'Tim Howes'],
    );
    assert.deepEqual(
      cards[0]?.emails.map((e) => e.address),
      ['frank_dawson@lotus.com', 'fdawson@earthlink.net'],
    );
    assert.equal(cards[0]?.organization, 'Lotus Development Corporation');
  });

  it('vCard 4.0 (RFC 6350 example): tel URIs and structured names', async () => {
    const [card] = (await parseVcf(read('ez-vcard/rfc6350-example.vcf'))).meta.cards;
    assert.equal(card?.fullName, 'Simon Perreault');
    assert.deepEqual(card?.name, {
      family: 'Perreault',
      given: 'Simon',
      additional: '',
      prefix: '',
      suffix: 'ing. jr,M.Sc.',
    });
    assert.equal(card?.phones[0]?.number, '+1-418-656-9254;ext=102');
  });

  it('keeps an embedded photo as a child item with its media type', async () => {
    const item = await parseVcf(read('ez-vcard/John_Doe_MS_OUTLOOK.vcf'));
    const [photo] = item.meta.cards[0]?.photos ?? [];
    assert.deepEqual(photo, { mediaType: 'image/jpeg', uri: null, child: 0 });
    assert.equal(item.children?.[0]?.kind, 'attachment');
    assert.equal(item.children?.[0]?.contentBytes?.length, 860);
  });
});

describe('contacts: generated', () => {
  it('vCard 2.1 quoted-printable soft line breaks, with or without a space after them (Android, Outlook)', async () => {
    const item = await parseVcf(
      'BEGIN:VCARD\r\nVERSION:2.1\r\nFN;CHARSET=UTF-8;ENCODING=QUOTED-PRINTABLE:=E5=BC=A0=E4=B8=89=\r\n=E6=9D=8E\r\n' +
        'NOTE;ENCODING=QUOTED-PRINTABLE:Line one=0D=0ALine two wraps in the=\r\n middle=\r\n of a word=\r\ns\r\nEND:VCARD\r\n',
    );
    assert.equal(item.meta.cards[0]!.fullName, '张三李');
    assert.equal(item.meta.cards[0]!.note, 'Line one\nLine two wraps in the middle of a words');
  });
});

describe('contacts: bad input', () => {
  it('rejects a file that is not a vCard, naming what it starts with', async () => {
    assert.match(
      (await rejection(parseVcf('BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n'))).reason,
      /not a vCard file: it starts with "BEGIN:VCALENDAR"/,
    );
  });

  it('rejects a card with no name and no address', async () => {
    assert.match(
      (await rejection(parseVcf('BEGIN:VCARD\r\nVERSION:3.0\r\nTEL:123\r\nEND:VCARD\r\n'))).reason,
      /card 1 has no name \(FN or N\) and no address/,
    );
  });
});

describe('address books exported as CSV', () => {
  it('a Google Contacts or Outlook export (windows-1252, as Outlook writes it) is contacts; another CSV stays a document', async () => {
    const outlook = Buffer.from(
      'First Name,Last Name,E-mail Address,Mobile Phone,Company,Notes\r\nJosé,Müller,jose@muller.example,+49 151 23456789,"Müller, Söhne",\r\n,,,,,\r\n,,,,,met once\r\n',
      'latin1',
    );
    const item = await parseVcf(outlook, 'text/csv');
    assert.equal(item.meta.format, 'csv');
    assert.equal(item.title, 'José Müller');
    assert.deepEqual(
      item.meta.cards[0]!.emails.map((e) => e.address),
      ['jose@muller.example'],
    );
    assert.equal(item.meta.cards[0]!.organization, 'Müller, Söhne');
    assert.equal(item.meta.cards.length, 1);
    assert.deepEqual(item.warnings, [
      'left out a row that names no one (no name, organization, e-mail or phone): row 4',
    ]);
    const table = await registry.parse({ type: 'text/csv', bytes: Buffer.from('date,amount\n2024-01-02,12.50\n') });
    assert.equal(table.kind, 'document');
  });
});

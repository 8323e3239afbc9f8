import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import sharp from 'sharp';
import { ItemsGet } from '@memex/contracts';
import { Bus, readLog } from '@memex/bus';
import { startStack, type TestStack } from '@memex/e2e';
import { xmpCoordinate } from '@memex/exports';
import { assertAccounted, importInto, labelledMessages, write } from './testing.js';

/** An XMP packet as Apple Photos writes it beside an exported original ("Export IPTC as XMP"). */
function xmp(fields: {
  title: string;
  description?: string;
  keywords: string[];
  created: string;
  latitude: string;
  longitude: string;
  people?: string[];
  faces?: string[];
}): string {
  const bag = (items: string[]) => `<rdf:Bag>${items.map((i) => `<rdf:li>${i}</rdf:li>`).join('')}</rdf:Bag>`;
  return `<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="XMP Core 6.0.0">
 <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
  <rdf:Description rdf:about=""
    xmlns:dc="http://purl.org/dc/elements/1.1/"
    xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/"
    xmlns:exif="http://ns.adobe.com/exif/1.0/"
    xmlns:Iptc4xmpExt="http://iptc.org/std/Iptc4xmpExt/2008-02-29/"
    xmlns:mwg-rs="http://www.metadataworkinggroup.com/schemas/regions/">
   <dc:title><rdf:Alt><rdf:li xml:lang="x-default">${fields.title}</rdf:li></rdf:Alt></dc:title>
   ${fields.description ? `<dc:description><rdf:Alt><rdf:li xml:lang="x-default">${fields.description}</rdf:li></rdf:Alt></dc:description>` : ''}
   <dc:subject>${bag(fields.keywords)}</dc:subject>
   <photoshop:DateCreated>${fields.created}</photoshop:DateCreated>
   <exif:GPSLatitude>${fields.latitude}</exif:GPSLatitude>
   <exif:GPSLongitude>${fields.longitude}</exif:GPSLongitude>
   ${fields.people ? `<Iptc4xmpExt:PersonInImage>${bag(fields.people)}</Iptc4xmpExt:PersonInImage>` : ''}
   ${
     fields.faces
       ? `<mwg-rs:RegionInfo rdf:parseType="Resource"><mwg-rs:RegionList><rdf:Bag>${fields.faces
           .map(
             (name) =>
               `<rdf:li rdf:parseType="Resource"><mwg-rs:Name>${name}</mwg-rs:Name><mwg-rs:Type>Face</mwg-rs:Type></rdf:li>`,
           )
           .join('')}</rdf:Bag></mwg-rs:RegionList></mwg-rs:RegionInfo>`
       : ''
   }
  </rdf:Description>
 </rdf:RDF>
</x:xmpmeta>
<?xpacket end="w"?>`;
}

const jpeg = (r: number, g: number, b: number) =>
  sharp({ create: { width: 48, height: 32, channels: 3, background: { r, g, b } } }).jpeg();

test('XMP GPS coordinates: degrees, minutes and seconds with a hemisphere', () => {
  assert.equal(xmpCoordinate('50,49.2N'), 50.82);
  assert.equal(xmpCoordinate('0,7,30W'), -0.125);
  assert.equal(xmpCoordinate(12.5), 12.5);
  assert.equal(xmpCoordinate('north'), undefined);
});

describe('imports from Apple: a Photos export, a Mail store', () => {
  let stack: TestStack;
  before(async () => {
    stack = await startStack(['ingest']);
  });
  after(async () => stack.stop());

  test('titles, captions, keywords as labels, dates, places and people from XMP sidecars and from XMP inside the file', async () => {
    const root = path.join(stack.env.home, 'Apple Photos export');
    write(root, {
      'IMG_0001.JPG': await jpeg(220, 120, 40).toBuffer(),
      'IMG_0001.xmp': xmp({
        title: 'Sunset at the pier',
        description: 'Brighton, with Ann &amp; Bob',
        keywords: ['beach', 'holiday 2019'],
        created: '2019-07-04T20:30:00+01:00',
        latitude: '50,49.2N',
        longitude: '0,8.2W',
        people: ['Ann Example'],
        faces: ['Bob Example', 'Ann Example'],
      }),
      // Exported with "Include: Title, Keywords, and Caption": the XMP is inside the JPEG.
      'IMG_0002.JPG': await jpeg(40, 120, 220)
        .withXmp(
          xmp({
            title: 'Harbour',
            keywords: ['boats'],
            created: '2021-05-01T09:15:00-04:00',
            latitude: '44,39N',
            longitude: '63,34.2W',
          }),
        )
        .toBuffer(),
      'IMG_0003.JPG.xmp': 'not XMP at all',
      'IMG_0003.JPG': await jpeg(20, 200, 20).toBuffer(),
    });
    const { summary, error } = await importInto(stack, 'photos', root, 'apple');
    assert.equal(error, undefined);
    assertAccounted(summary, 5);
    assert.deepEqual(summary.run, { created: 3, updated: 0, duplicate: 0, rejected: 0, skipped: 2 });
    assert.match(summary.skipped.map((s) => s.reason).join('\n'), /sidecar \(Google Takeout \.json or XMP\)/);

    const bus = await Bus.connect(stack.env.config.natsUrl, 'apple-test');
    const logged: Array<{ id: string; seq: number }> = [];
    for await (const { seq, event } of readLog(bus, { filter: 'memex.evt.item.ingested.>', untilCaughtUp: true }))
      logged.push({ id: (event.data as { id: string }).id, seq });
    await bus.close();
    const items = await Promise.all(logged.map(({ id, seq }) => stack.owner.call(ItemsGet, { id, min_seq: seq })));
    const byFile = new Map(items.map((item) => [item.meta['filename'], item]));

    const sunset = byFile.get('IMG_0001.JPG')!;
    assert.equal(sunset.title, 'Sunset at the pier');
    assert.equal(sunset.meta['description'], 'Brighton, with Ann & Bob');
    assert.deepEqual(sunset.labels.sort(), ['keyword:beach', 'keyword:holiday-2019']);
    assert.equal(sunset.occurred_at, '2019-07-04T19:30:00.000Z');
    assert.deepEqual(sunset.meta['gps'], { latitude: 50.82, longitude: -0.13666666666666666, altitude: null });
    assert.deepEqual(sunset.meta['people'], ['Ann Example', 'Bob Example']);
    assert.match(sunset.text, /Ann Example/, 'search finds a photo by who is in it');

    const harbour = byFile.get('IMG_0002.JPG')!;
    assert.equal(harbour.title, 'Harbour');
    assert.deepEqual(harbour.labels, ['keyword:boats']);
    assert.equal(harbour.occurred_at, '2021-05-01T13:15:00.000Z');
    assert.deepEqual(harbour.meta['gps'], { latitude: 44.65, longitude: -63.57, altitude: null });

    // A sidecar that cannot be read leaves its photo as it is (named by its file), not rejected.
    assert.equal(byFile.get('IMG_0003.JPG')!.title, 'IMG_0003.JPG');
  });

  test("memex import folder on Apple Mail's store: .emlx messages with their mailboxes as folders and Mail's flags", async () => {
    const root = path.join(stack.env.home, 'Library', 'Mail');
    const emlx = (subject: string, flags: number, body = `\nAbout ${subject}.\n`) => {
      const message = Buffer.from(
        `From: Ann <ann@example.org>\nTo: me@example.net\nSubject: ${subject}\nDate: Tue, 4 Jun 2024 09:30:00 +0200\n` +
          `Message-ID: <${subject.replace(/\W/g, '')}@example.org>\n${body}`,
      );
      const plist = `<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0">\n<dict>\n\t<key>flags</key>\n\t<integer>${flags}</integer>\n</dict>\n</plist>\n`;
      return Buffer.concat([Buffer.from(`${message.length}          \n`), message, Buffer.from(plist)]);
    };
    const account = 'V10/1C2B3A4D-0000-4E5F-8A9B-ABCDEF012345';
    write(root, {
      [`${account}/INBOX.mbox/0A1B/Data/0/Messages/101.emlx`]: emlx('Quarterly plan', 1),
      // A message whose attachments Mail keeps apart: in Attachments/ (newer stores) and as an .emlxpart (older).
      [`${account}/Work.mbox/Projects.mbox/0C1D/Data/1/Messages/102.partial.emlx`]: emlx(
        'Kick-off notes',
        16,
        `MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n\nAbout the kick-off.\n` +
          `--b\nContent-Type: text/plain; name=agenda.txt\nContent-Disposition: attachment; filename=agenda.txt\n` +
          `Content-Transfer-Encoding: base64\nX-Apple-Content-Length: 40\n\n` +
          `--b\nContent-Type: text/plain; name=minutes.txt\nContent-Disposition: attachment; filename=minutes.txt\n` +
          `Content-Transfer-Encoding: 7bit\nX-Apple-Content-Length: 30\n\n` +
          // A part Mail never downloaded: in neither place.
          `--b\nContent-Type: application/pdf; name=slides.pdf\nContent-Disposition: attachment; filename=slides.pdf\n` +
          `Content-Transfer-Encoding: base64\nX-Apple-Content-Length: 9000\n\n--b--\n`,
      ),
      [`${account}/Work.mbox/Projects.mbox/0C1D/Data/1/Attachments/102/2/agenda.txt`]: 'Agenda: the zeppelin budget.\n',
      [`${account}/Work.mbox/Projects.mbox/0C1D/Data/1/Messages/102.3.emlxpart`]: 'Minutes: hangar booked.\n',
    });
    const { summary, error } = await importInto(stack, 'folder', root, 'apple-mail');
    assert.equal(error, undefined);
    assertAccounted(summary, 5);
    assert.deepEqual(summary.run, { created: 2, updated: 0, duplicate: 0, rejected: 0, skipped: 3 });
    // Before: the .emlxpart skipped as a type nothing reads, the Attachments file a document of its own.
    assert.deepEqual(
      summary.skipped.map((s) => [s.count, s.reason]),
      [
        [
          2,
          `a part of the Apple Mail message ${account}/Work.mbox/Projects.mbox/0C1D/Data/1/Messages/102.partial.emlx, sent inside it`,
        ],
        [1, 'a part of an Apple Mail message that Mail never downloaded: sent without it'],
      ],
    );
    assert.deepEqual(summary.skipped[1]!.examples, [
      `${account}/Work.mbox/Projects.mbox/0C1D/Data/1/Messages/102.partial.emlx#part 4`,
    ]);
    const messages = await labelledMessages(stack, 'import:folder:apple-mail', 'Work/Projects');
    assert.deepEqual(
      messages.map((m) => [m.subject, m.attachments]),
      [['Kick-off notes', 3]],
      'both parts put back into their message, and the one Mail never downloaded, empty',
    );

    const bus = await Bus.connect(stack.env.config.natsUrl, 'apple-mail-test');
    const logged: Array<{ id: string; seq: number; kind: string }> = [];
    for await (const { seq, event } of readLog(bus, { filter: 'memex.evt.item.ingested.>', untilCaughtUp: true }))
      logged.push({ ...(event.data as { id: string; kind: string }), seq });
    await bus.close();
    const mails = await Promise.all(
      logged.filter((l) => l.kind === 'email').map(({ id, seq }) => stack.owner.call(ItemsGet, { id, min_seq: seq })),
    );
    const bySubject = new Map(mails.map((mail) => [mail.title, mail.meta]));
    // The parts put back are read as the files they are: from Attachments/ and from the .emlxpart.
    const attachments = await Promise.all(
      logged
        .filter((l) => l.kind === 'attachment')
        .map(({ id, seq }) => stack.owner.call(ItemsGet, { id, min_seq: seq })),
    );
    const text = new Map(attachments.map((a) => [a.title, a.text.trim()]));
    assert.equal(text.get('agenda.txt'), 'Agenda: the zeppelin budget.');
    assert.equal(text.get('minutes.txt'), 'Minutes: hangar booked.');
    assert.deepEqual(bySubject.get('Quarterly plan')?.['labels'], ['INBOX']);
    assert.deepEqual(bySubject.get('Quarterly plan')?.['flags'], { read: true, starred: false });
    assert.deepEqual(bySubject.get('Kick-off notes')?.['labels'], ['Work/Projects']);
    assert.deepEqual(bySubject.get('Kick-off notes')?.['flags'], { read: false, starred: true });
  });
});

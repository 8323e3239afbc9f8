import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { sharedFile, sharedSkip } from '@memex/testing';
import { withContentLabels } from '../../../commands/prepare.js';
import { createRegistry } from '../registry.js';
import type { PhotoItem } from '../handler.js';
import {
  extendedGuid,
  extendedXmpApp1,
  iim,
  IIM_UTF8,
  jpegSegment,
  photoshopApp13,
  photoshopResource,
  pngChunk,
  pngXmpChunk,
  withPngChunks,
  withSegments,
  xmpApp1,
  xmpPacket,
} from '../testing/photo-metadata.js';

// These tests check metadata; OCR is the media OCR test's, and slow.
process.env['MEMEX_OCR'] = 'off';
const registry = createRegistry();
const photo = async (type: string, bytes: Buffer, attributes: Record<string, unknown> = {}) =>
  (await registry.parse({ type, bytes, attributes })) as PhotoItem;
const canvas = () => sharp({ create: { width: 64, height: 48, channels: 3, background: '#884422' } });
/** A camera's JPEG: EXIF with its make and capture time (with its zone). */
const cameraJpeg = () =>
  canvas()
    .jpeg()
    .withExif({
      IFD0: { Make: 'Acme', Model: 'Cam 1' },
      IFD2: { DateTimeOriginal: '2019:07:04 18:30:00', OffsetTimeOriginal: '+02:00' },
    })
    .toBuffer();
const plainJpeg = () => canvas().jpeg().toBuffer();
const iptcApp13 = (datasets: Parameters<typeof iim>[0]) => photoshopApp13(photoshopResource(0x0404, iim(datasets)));

describe("photos: the photographer's XMP and IPTC read from the file itself", () => {
  it("reads a JPEG's XMP and IPTC: title, caption, keywords as labels, people, creator; XMP wins, IPTC fills in", async () => {
    const bytes = withSegments(
      await cameraJpeg(),
      xmpApp1(
        xmpPacket({
          title: 'Sunset at the pier',
          keywords: ['Beach', 'holiday 2019'],
          people: ['Ann Example'],
          creator: 'Cy Photographer',
        }),
      ),
      iptcApp13([
        IIM_UTF8,
        [2, 5, 'An older title'],
        [2, 25, 'beach'],
        [2, 25, 'stale keyword'],
        [2, 120, 'Brighton, with Ann & Bob'],
        [2, 80, 'Somebody Else'],
      ]),
    );
    const item = await photo('image/jpeg', bytes, { filename: 'IMG_0001.JPG' });
    assert.deepEqual(item.warnings, []);
    // XMP's title (not the file name, nor IIM's); IIM's caption, which the XMP lacks.
    assert.equal(item.title, 'Sunset at the pier');
    assert.equal(item.meta.description, 'Brighton, with Ann & Bob');
    // The XMP has keywords: the IIM's (older) ones are not mixed in.
    assert.deepEqual(item.meta.keywords, ['Beach', 'holiday 2019']);
    assert.deepEqual(item.labels, ['keyword:Beach', 'keyword:holiday-2019']);
    assert.deepEqual(item.meta.people, ['Ann Example']);
    assert.equal(item.meta.creator, 'Cy Photographer');
    // EXIF still gives the camera and the time.
    assert.deepEqual(item.meta.camera, { make: 'Acme', model: 'Cam 1' });
    assert.equal(item.occurredAt, '2019-07-04T16:30:00.000Z');
    assert.equal(item.meta.timeSource, 'exif');
    // Search finds it by its title, caption, people, keywords and photographer.
    for (const word of ['Sunset at the pier', 'Brighton', 'Ann Example', 'holiday 2019', 'Cy Photographer'])
      assert.ok(item.text.includes(word), word);
  });

  it("lets the caller's attributes (a sidecar's) win, and joins its keywords and people with the file's, once each whatever the case", async () => {
    const bytes = withSegments(
      await plainJpeg(),
      xmpApp1(xmpPacket({ title: 'Embedded title', description: 'Embedded caption', keywords: ['beach', 'Rome'] })),
    );
    const item = await photo('image/jpeg', bytes, {
      title: 'Sidecar title',
      keywords: ['BEACH', 'trip'],
      people: ['Bob'],
    });
    assert.equal(item.title, 'Sidecar title');
    assert.equal(item.meta.description, 'Embedded caption');
    assert.deepEqual(item.meta.keywords, ['BEACH', 'trip', 'Rome']);
    assert.deepEqual(item.labels, ['keyword:BEACH', 'keyword:trip', 'keyword:Rome']);
    assert.deepEqual(item.meta.people, ['Bob']);
  });

  it('decodes IPTC text as UTF-8 when 1:90 says so, else as Latin-1, and dates a photo without EXIF by its IIM date', async () => {
    const latin = withSegments(
      await plainJpeg(),
      iptcApp13([
        [2, 5, Buffer.from('Caf\xe9 de Flore', 'latin1')],
        [2, 120, Buffer.from('Cr\xe8me br\xfbl\xe9e, \x80 4', 'latin1')],
        [2, 25, Buffer.from('Gen\xe8ve', 'latin1')],
        [2, 55, '20190704'],
        [2, 60, '183000+0200'],
      ]),
    );
    const read = await photo('image/jpeg', latin);
    assert.equal(read.title, 'Café de Flore');
    // Windows-1252, not ISO-8859-1: 0x80 is the euro sign.
    assert.equal(read.meta.description, 'Crème brûlée, € 4');
    assert.deepEqual(read.labels, ['keyword:Genève']);
    assert.equal(read.occurredAt, '2019-07-04T16:30:00.000Z');
    assert.deepEqual(
      [read.meta.timeSource, read.meta.takenAt, read.meta.offset],
      ['iptc', '2019-07-04T18:30:00', '+02:00'],
    );
    const utf8 = withSegments(await plainJpeg(), iptcApp13([IIM_UTF8, [2, 5, 'Café in Zürich'], [2, 25, 'Ελλάδα']]));
    const read8 = await photo('image/jpeg', utf8);
    assert.equal(read8.title, 'Café in Zürich');
    assert.deepEqual(read8.meta.keywords, ['Ελλάδα']);
  });

  it('keeps named MWG face regions (normalised or in pixels) and Microsoft people tags, with boxes on the image from its top left', async () => {
    const xml = xmpPacket({
      people: ['Ann Example'],
      hierarchical: ['Places|Italy|Rome', 'People|Family'],
      keywords: ['rome'],
      mwg: {
        dimensions: { w: 4000, h: 3000 },
        regions: [
          { name: 'Ann Example', type: 'Face', x: 0.5, y: 0.5, w: 0.2, h: 0.4 },
          { name: 'Bob Example', type: 'Face', x: 1000, y: 600, w: 400, h: 600, unit: 'pixel' },
          { name: 'Rex', type: 'Pet', x: 0.1, y: 0.1, w: 0.1, h: 0.1 },
          { type: 'Face', x: 0.8, y: 0.8, w: 0.1, h: 0.1 },
          // Off the image: named, but no box.
          { name: 'Cy Example', type: 'Face', x: 1.4, y: 0.5, w: 0.2, h: 0.2 },
        ],
      },
      microsoft: [{ name: 'Dee Example', rectangle: '0.25, 0.5, 0.1, 0.2' }],
    });
    const item = await photo('image/jpeg', withSegments(await plainJpeg(), xmpApp1(xml)));
    const rounded = item.meta.regions.map((r) => ({
      ...r,
      box: r.box && Object.fromEntries(Object.entries(r.box).map(([k, v]) => [k, Math.round(v * 1000) / 1000])),
    }));
    assert.deepEqual(rounded, [
      { name: 'Ann Example', box: { x: 0.4, y: 0.3, w: 0.2, h: 0.4 }, source: 'mwg' },
      { name: 'Bob Example', box: { x: 0.2, y: 0.1, w: 0.1, h: 0.2 }, source: 'mwg' },
      { name: 'Cy Example', box: null, source: 'mwg' },
      { name: 'Dee Example', box: { x: 0.25, y: 0.5, w: 0.1, h: 0.2 }, source: 'microsoft' },
    ]);
    // A pet is no person; every named face is, once.
    assert.deepEqual(item.meta.people, ['Ann Example', 'Bob Example', 'Cy Example', 'Dee Example']);
    // Lightroom's hierarchy gives its leaves, once whatever the case.
    assert.deepEqual(item.meta.keywords, ['rome', 'Family']);
  });

  it('reads XMP in a PNG (iTXt, compressed by libvips), a WebP without EXIF (its date from XMP), an AVIF (a mime item) and a TIFF (tag 700)', async () => {
    const xml = xmpPacket({
      title: 'Lake',
      keywords: ['water'],
      dateCreated: '2022-08-01T07:00:00+02:00',
      latitude: '46,12.6N',
      longitude: '6,9W',
    });
    for (const [type, bytes] of [
      ['image/png', await canvas().png().withXmp(xml).toBuffer()],
      ['image/png', withPngChunks(await canvas().png().toBuffer(), pngXmpChunk(xml))],
      ['image/webp', await canvas().webp().withXmp(xml).toBuffer()],
      ['image/avif', await canvas().avif().withXmp(xml).toBuffer()],
      ['image/tiff', await canvas().tiff().withXmp(xml).toBuffer()],
    ] as const) {
      const item = await photo(type, bytes);
      assert.equal(item.title, 'Lake', type);
      assert.deepEqual(item.labels, ['keyword:water'], type);
      assert.equal(item.occurredAt, '2022-08-01T05:00:00.000Z', type);
      assert.deepEqual([item.meta.timeSource, item.meta.offsetSource], ['xmp', 'xmp'], type);
      assert.deepEqual(item.meta.gps, { latitude: 46.21, longitude: -6.15, altitude: null }, type);
      assert.equal(item.meta.gpsSource, 'xmp', type);
      assert.deepEqual(item.warnings, [], type);
    }
    // The file's EXIF time wins over its XMP's; a zone-less EXIF time takes the XMP's zone for the same wall clock.
    const both = withSegments(
      await canvas()
        .jpeg()
        .withExif({ IFD2: { DateTimeOriginal: '2008:03:15 09:52:01' } })
        .toBuffer(),
      xmpApp1(xmpPacket({ dateTimeOriginal: '2008-03-15T09:52:01-04:00', createDate: '2010-01-01T00:00:00Z' })),
    );
    const dated = await photo('image/jpeg', both);
    assert.deepEqual([dated.meta.timeSource, dated.meta.offset, dated.meta.offsetSource], ['exif', '-04:00', 'xmp']);
    assert.equal(dated.occurredAt, '2008-03-15T13:52:01.000Z');
  });

  it("reads a JPEG's Extended XMP (split over APP1 segments) with its main packet, and warns when a chunk is missing", async () => {
    const extended = xmpPacket({
      keywords: ['from the extension'],
      mwg: { regions: [{ name: 'Ann Example', type: 'Face', x: 0.5, y: 0.5, w: 0.2, h: 0.2 }] },
      description: 'x'.repeat(150_000),
    });
    const guid = extendedGuid(extended);
    const main = xmpApp1(xmpPacket({ title: 'Main packet', keywords: ['main'], extended: guid }));
    const chunks = extendedXmpApp1(extended);
    assert.equal(chunks.length, 3);
    const item = await photo('image/jpeg', withSegments(await plainJpeg(), main, ...chunks));
    assert.deepEqual(item.warnings, []);
    assert.equal(item.title, 'Main packet');
    assert.deepEqual(item.meta.keywords, ['main', 'from the extension']);
    assert.deepEqual(item.meta.people, ['Ann Example']);
    assert.equal(item.meta.description?.length, 150_000);
    const missing = await photo('image/jpeg', withSegments(await plainJpeg(), main, chunks[0]!, chunks[2]!));
    assert.equal(missing.title, 'Main packet');
    assert.deepEqual(missing.meta.keywords, ['main']);
    assert.match(missing.warnings.join('\n'), /Extended XMP unread \(\d+ of its \d+ bytes found\)/);
  });

  it('warns of damaged XMP and IPTC and still reads the rest of the photo', async () => {
    const camera = await cameraJpeg();
    const caption = iim([
      [2, 5, 'Kept title'],
      [2, 120, 'A caption cut'],
    ]);
    const cutIptc = withSegments(camera, photoshopApp13(photoshopResource(0x0404, caption.subarray(0, -4))));
    const cases: Array<[what: string, bytes: Buffer, warning: RegExp]> = [
      [
        'bad XML',
        withSegments(camera, xmpApp1('<x:xmpmeta><rdf:RDF>unclosed')),
        /^XMP unreadable \(not well-formed XML/,
      ],
      [
        'RDF in a wrong namespace',
        withSegments(camera, xmpApp1(xmpPacket({ title: 'T' }).replace(/22-rdf-syntax-ns#/, 'wrong#'))),
        /^XMP unreadable \(no rdf:RDF element/,
      ],
      [
        'an entity bomb',
        withSegments(
          camera,
          xmpApp1(`<!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]>${xmpPacket({ title: '&b;' })}`),
        ),
        /^XMP unreadable \(a DOCTYPE or ENTITY declaration/,
      ],
      [
        'a huge packet (a PNG would inflate it past 8 MB)',
        withPngChunks(
          await canvas().png().toBuffer(),
          pngChunk(
            'iTXt',
            Buffer.concat([
              Buffer.from('XML:com.adobe.xmp\0\x01\0\0\0', 'latin1'),
              deflateSync(Buffer.from(xmpPacket({ title: 'x'.repeat(9 * 1024 * 1024) }))),
            ]),
          ),
        ),
        /^XMP unreadable \(its PNG iTXt chunk does not inflate/,
      ],
      [
        'an 8BIM resource whose length runs past the end',
        withSegments(camera, photoshopApp13(photoshopResource(0x0404, iim([[2, 5, 'Title']]), 5000))),
        /^IPTC unreadable \(image resource 0x404 of 5000 bytes runs past the end/,
      ],
      [
        'a truncated APP13 (an IIM dataset cut short)',
        cutIptc,
        /^IPTC damaged \(dataset 2:120 of 13 bytes runs past the end \(9 left\)\); what came before it is kept$/,
      ],
      [
        'an APP13 that is no resource block',
        withSegments(camera, photoshopApp13(Buffer.from('garbage here'))),
        /^IPTC unreadable \(no image resource/,
      ],
    ];
    for (const [what, bytes, warning] of cases) {
      const item = await photo(bytes[0] === 0x89 ? 'image/png' : 'image/jpeg', bytes);
      assert.equal(item.warnings.length, 1, `${what}: ${item.warnings.join('; ')}`);
      assert.match(item.warnings[0]!, warning, what);
      if (bytes[0] === 0xff) {
        assert.deepEqual(item.meta.camera, { make: 'Acme', model: 'Cam 1' }, what);
        assert.equal(item.occurredAt, '2019-07-04T16:30:00.000Z', what);
      }
    }
    // A dc namespace that is not Dublin Core's says nothing of the title: no warning, and no title from it.
    const wrongDc = await photo(
      'image/jpeg',
      withSegments(camera, xmpApp1(xmpPacket({ title: 'Not a title', dcNamespace: 'http://example.com/dc/' }))),
    );
    assert.deepEqual([wrongDc.title, wrongDc.warnings], ['Photo 2019-07-04T18:30:00', []]);
    // Another prefix for the same namespaces is the same property.
    const prefixed = await photo(
      'image/jpeg',
      withSegments(camera, xmpApp1(xmpPacket({ title: 'Prefixed', prefixes: { dc: 'dcx', rdf: 'r' } }))),
    );
    assert.equal(prefixed.title, 'Prefixed');
    // The IIM before the cut is kept.
    const cut = await photo('image/jpeg', cutIptc);
    assert.equal(cut.title, 'Kept title');
    // A segment that claims more than the file holds ends the walk quietly (a JPEG cut short).
    const short = await photo('image/jpeg', withSegments(camera, jpegSegment(0xe1, Buffer.alloc(10)).subarray(0, 8)));
    assert.equal(short.meta.keywords.length, 0);
  });

  it("adds the content's labels to the item's: all for the owner, only those within an agent's scope", () => {
    const parsed = { labels: ['keyword:beach', 'keyword:Rome'] } as unknown as PhotoItem;
    assert.deepEqual(withContentLabels(['album:2019'], parsed, { kind: 'owner' }), [
      'album:2019',
      'keyword:Rome',
      'keyword:beach',
    ]);
    const agent = { kind: 'agent' as const, tokenId: 't', labels: ['photos', 'keyword:beach'], kinds: ['photo'] };
    assert.deepEqual(withContentLabels(['photos'], parsed, agent), ['keyword:beach', 'photos']);
    assert.deepEqual(withContentLabels(['photos'], { labels: [] } as unknown as PhotoItem, agent), ['photos']);
  });
});

describe('photos of the shared corpus that carry XMP and IPTC', { skip: sharedSkip('corpus/photos') }, () => {
  const file = (name: string) => fs.readFileSync(sharedFile(`corpus/photos/exif-samples/jpg/${name}`));

  it("reads a Photoshop JPEG without EXIF: its XMP title, caption, keyword, creator and dated capture time (exiftool's reading)", async () => {
    // exiftool: XMP-dc Title and Description "Der Goalie bin ig", Subject "tag", Creator "CREDIT",
    // XMP-xmp CreateDate 2013:09:23 10:09:46+02:00; IPTC (UTF-8) By-line CREDIT, Keywords tag.
    const item = await photo('image/jpeg', file('xmp/no_exif.jpg'), { filename: 'no_exif.jpg' });
    assert.equal(item.title, 'Der Goalie bin ig');
    assert.equal(item.meta.description, 'Der Goalie bin ig');
    assert.deepEqual(item.meta.keywords, ['tag']);
    assert.deepEqual(item.labels, ['keyword:tag']);
    assert.equal(item.meta.creator, 'CREDIT');
    assert.equal(item.occurredAt, '2013-09-23T08:09:46.000Z');
    assert.deepEqual([item.meta.timeSource, item.meta.offset], ['xmp', '+02:00']);
    assert.deepEqual(item.warnings, []);
  });

  it("reads an army photo's XMP: dc:title over its Headline, dc:creator, the caption", async () => {
    // exiftool: XMP-dc Title 030904-A-2140D-006, Creator SSG KYLE DAVIS, photoshop Headline "Enduring Freedom".
    const item = await photo('image/jpeg', file('long_description.jpg'), { filename: 'long_description.jpg' });
    assert.equal(item.title, '030904-A-2140D-006');
    assert.equal(item.meta.creator, 'SSG KYLE DAVIS');
    assert.match(item.meta.description ?? '', /^Operation Mountain Viper/);
    assert.match(item.text, /SSG KYLE DAVIS/);
  });

  it("takes a Nikon's zone from the XMP Lightroom wrote beside its zone-less EXIF time", async () => {
    // exiftool: EXIF DateTimeOriginal 2008:03:15 09:52:01 (no offset); XMP-exif DateTimeOriginal 2008:03:15 09:52:01-04:00.
    const item = await photo('image/jpeg', file('Nikon_D70.jpg'));
    assert.deepEqual(
      [item.meta.takenAt, item.meta.offset, item.meta.offsetSource],
      ['2008-03-15T09:52:01', '-04:00', 'xmp'],
    );
    assert.equal(item.occurredAt, '2008-03-15T13:52:01.000Z');
  });
});

import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';

/**
 * Builders of the photographer's metadata as cameras and editors embed it: XMP packets (in the RDF
 * forms writers use), IPTC-IIM datasets inside Photoshop's image resources, and the JPEG segments
 * and PNG chunks that carry them.
 */

const RDF = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#';

export interface XmpFields {
  title?: string;
  description?: string;
  headline?: string;
  creator?: string;
  keywords?: string[];
  /** Lightroom's `lr:hierarchicalSubject` (`Places|Italy|Rome`). */
  hierarchical?: string[];
  people?: string[];
  /** MWG regions: x and y the centre, as MWG writes them. */
  mwg?: {
    dimensions?: { w: number; h: number };
    regions: Array<{ name?: string; type?: string; x: number; y: number; w: number; h: number; unit?: string }>;
  };
  /** Windows Photo Gallery's people tags: a name and `x, y, w, h` from the top left. */
  microsoft?: Array<{ name: string; rectangle: string }>;
  dateTimeOriginal?: string;
  dateCreated?: string;
  createDate?: string;
  latitude?: string;
  longitude?: string;
  /** `xmpNote:HasExtendedXMP`: the GUID of the Extended XMP. */
  extended?: string;
  /** Namespace prefixes to use instead of the usual ones (a writer may choose any). */
  prefixes?: Partial<Record<'dc' | 'rdf', string>>;
  /** Put dc's properties in this namespace instead of Dublin Core's. */
  dcNamespace?: string;
}

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/** An XMP packet as Lightroom, Photoshop or Apple Photos write one (simple properties as attributes, the rest as elements). */
export function xmpPacket(fields: XmpFields): string {
  const r = fields.prefixes?.rdf ?? 'rdf';
  const dc = fields.prefixes?.dc ?? 'dc';
  const bag = (items: string[], kind = 'Bag') =>
    `<${r}:${kind}>${items.map((i) => `<${r}:li>${escape(i)}</${r}:li>`).join('')}</${r}:${kind}>`;
  const alt = (text: string) => `<${r}:Alt><${r}:li xml:lang="x-default">${escape(text)}</${r}:li></${r}:Alt>`;
  const attributes = [
    fields.dateCreated !== undefined ? `photoshop:DateCreated="${fields.dateCreated}"` : '',
    fields.createDate !== undefined ? `xmp:CreateDate="${fields.createDate}"` : '',
    fields.headline !== undefined ? `photoshop:Headline="${escape(fields.headline)}"` : '',
    fields.extended !== undefined ? `xmpNote:HasExtendedXMP="${fields.extended}"` : '',
  ].join(' ');
  const elements = [
    fields.title !== undefined ? `<${dc}:title>${alt(fields.title)}</${dc}:title>` : '',
    fields.description !== undefined ? `<${dc}:description>${alt(fields.description)}</${dc}:description>` : '',
    fields.creator !== undefined ? `<${dc}:creator>${bag([fields.creator], 'Seq')}</${dc}:creator>` : '',
    fields.keywords ? `<${dc}:subject>${bag(fields.keywords)}</${dc}:subject>` : '',
    fields.hierarchical ? `<lr:hierarchicalSubject>${bag(fields.hierarchical)}</lr:hierarchicalSubject>` : '',
    fields.people ? `<Iptc4xmpExt:PersonInImage>${bag(fields.people)}</Iptc4xmpExt:PersonInImage>` : '',
    fields.dateTimeOriginal !== undefined
      ? `<exif:DateTimeOriginal>${fields.dateTimeOriginal}</exif:DateTimeOriginal>`
      : '',
    fields.latitude !== undefined ? `<exif:GPSLatitude>${fields.latitude}</exif:GPSLatitude>` : '',
    fields.longitude !== undefined ? `<exif:GPSLongitude>${fields.longitude}</exif:GPSLongitude>` : '',
    fields.mwg
      ? `<mwg-rs:RegionInfo ${r}:parseType="Resource">` +
        (fields.mwg.dimensions
          ? `<mwg-rs:AppliedToDimensions stDim:w="${fields.mwg.dimensions.w}" stDim:h="${fields.mwg.dimensions.h}" stDim:unit="pixel"/>`
          : '') +
        `<mwg-rs:RegionList><${r}:Bag>` +
        fields.mwg.regions
          .map(
            (g) =>
              // Lightroom's form: the region a nested Description, its area attributes.
              `<${r}:li><${r}:Description${g.name !== undefined ? ` mwg-rs:Name="${escape(g.name)}"` : ''}${g.type ? ` mwg-rs:Type="${g.type}"` : ''}>` +
              `<mwg-rs:Area stArea:x="${g.x}" stArea:y="${g.y}" stArea:w="${g.w}" stArea:h="${g.h}" stArea:unit="${g.unit ?? 'normalized'}"/>` +
              `</${r}:Description></${r}:li>`,
          )
          .join('') +
        `</${r}:Bag></mwg-rs:RegionList></mwg-rs:RegionInfo>`
      : '',
    fields.microsoft
      ? `<MP:RegionInfo ${r}:parseType="Resource"><MPRI:Regions><${r}:Bag>` +
        fields.microsoft
          .map(
            (m) =>
              `<${r}:li ${r}:parseType="Resource"><MPReg:PersonDisplayName>${escape(m.name)}</MPReg:PersonDisplayName>` +
              `<MPReg:Rectangle>${m.rectangle}</MPReg:Rectangle></${r}:li>`,
          )
          .join('') +
        `</${r}:Bag></MPRI:Regions></MP:RegionInfo>`
      : '',
  ].join('\n   ');
  return `<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="Adobe XMP Core 7.0">
 <${r}:RDF xmlns:${r}="${RDF}">
  <${r}:Description ${r}:about=""
    xmlns:${dc}="${fields.dcNamespace ?? 'http://purl.org/dc/elements/1.1/'}"
    xmlns:xmp="http://ns.adobe.com/xap/1.0/"
    xmlns:xmpNote="http://ns.adobe.com/xmp/note/"
    xmlns:exif="http://ns.adobe.com/exif/1.0/"
    xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/"
    xmlns:lr="http://ns.adobe.com/lightroom/1.0/"
    xmlns:Iptc4xmpExt="http://iptc.org/std/Iptc4xmpExt/2008-02-29/"
    xmlns:mwg-rs="http://www.metadataworkinggroup.com/schemas/regions/"
    xmlns:stArea="http://ns.adobe.com/xmp/sType/Area#"
    xmlns:stDim="http://ns.adobe.com/xap/1.0/sType/Dimensions#"
    xmlns:MP="http://ns.microsoft.com/photo/1.2/"
    xmlns:MPRI="http://ns.microsoft.com/photo/1.2/t/RegionInfo#"
    xmlns:MPReg="http://ns.microsoft.com/photo/1.2/t/Region#"
   ${attributes}>
   ${elements}
  </${r}:Description>
 </${r}:RDF>
</x:xmpmeta>
<?xpacket end="w"?>`;
}

/** IIM datasets (`1C`, record, dataset, 2-byte length, data); text as given, or bytes as they are. */
export function iim(datasets: Array<[record: number, dataset: number, data: string | Buffer]>): Buffer {
  return Buffer.concat(
    datasets.map(([record, dataset, data]) => {
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      const head = Buffer.from([0x1c, record, dataset, 0, 0]);
      head.writeUInt16BE(bytes.length, 3);
      return Buffer.concat([head, bytes]);
    }),
  );
}

/** 1:90 CodedCharacterSet saying UTF-8 (ESC % G). */
export const IIM_UTF8: [number, number, Buffer] = [1, 90, Buffer.from([0x1b, 0x25, 0x47])];

/** A Photoshop image resource (`8BIM`, its id, an empty name, its size, its data padded to even). */
export function photoshopResource(id: number, data: Buffer, size = data.length): Buffer {
  const head = Buffer.alloc(12);
  head.write('8BIM', 0, 'latin1');
  head.writeUInt16BE(id, 4);
  head.writeUInt32BE(size, 8);
  return Buffer.concat([head, data, Buffer.alloc(data.length % 2)]);
}

/** A JPEG marker segment: the marker, its length, its payload. */
export function jpegSegment(marker: number, payload: Buffer): Buffer {
  const head = Buffer.from([0xff, marker, 0, 0]);
  head.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([head, payload]);
}

/** The APP1 segment of a JPEG's XMP packet. */
export const xmpApp1 = (xml: string) =>
  jpegSegment(0xe1, Buffer.concat([Buffer.from('http://ns.adobe.com/xap/1.0/\0', 'latin1'), Buffer.from(xml)]));

/** The APP13 segment of Photoshop's image resources (IIM in resource 0x0404). */
export const photoshopApp13 = (resources: Buffer) =>
  jpegSegment(0xed, Buffer.concat([Buffer.from('Photoshop 3.0\0', 'latin1'), resources]));

/** The GUID of an Extended XMP packet: the MD5 of its bytes, in uppercase hex. */
export const extendedGuid = (xml: string) => createHash('md5').update(xml).digest('hex').toUpperCase();

/** An Extended XMP packet as APP1 segments of `chunkSize` bytes at most (each: GUID, full length, offset, data). */
export function extendedXmpApp1(xml: string, chunkSize = 65000): Buffer[] {
  const bytes = Buffer.from(xml);
  const segments: Buffer[] = [];
  for (let offset = 0; offset < bytes.length; offset += chunkSize) {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(bytes.length, 0);
    head.writeUInt32BE(offset, 4);
    segments.push(
      jpegSegment(
        0xe1,
        Buffer.concat([
          Buffer.from('http://ns.adobe.com/xmp/extension/\0', 'latin1'),
          Buffer.from(extendedGuid(xml), 'latin1'),
          head,
          bytes.subarray(offset, offset + chunkSize),
        ]),
      ),
    );
  }
  return segments;
}

/** A JPEG with segments put right after its start of image. */
export const withSegments = (jpeg: Buffer, ...segments: Buffer[]) =>
  Buffer.concat([jpeg.subarray(0, 2), ...segments, jpeg.subarray(2)]);

/** A PNG chunk: its length, type, data and CRC (the readers here do not check the CRC: left zero). */
export function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  return Buffer.concat([head, data, Buffer.alloc(4)]);
}

/** A PNG's iTXt chunk of XMP (`XML:com.adobe.xmp`), compressed or not. */
export function pngXmpChunk(xml: string, compressed = false): Buffer {
  const text = compressed ? deflateSync(Buffer.from(xml)) : Buffer.from(xml);
  return pngChunk(
    'iTXt',
    Buffer.concat([Buffer.from('XML:com.adobe.xmp\0', 'latin1'), Buffer.from([compressed ? 1 : 0, 0, 0, 0]), text]),
  );
}

/** A PNG with chunks put right after its IHDR. */
export function withPngChunks(png: Buffer, ...chunks: Buffer[]): Buffer {
  const afterIhdr = 8 + 12 + png.readUInt32BE(8);
  return Buffer.concat([png.subarray(0, afterIhdr), ...chunks, png.subarray(afterIhdr)]);
}

import { XMLParser, XMLValidator } from 'fast-xml-parser';

/**
 * XMP (ISO 16684-1) as photos carry it — a packet inside the file or a sidecar beside it — read
 * into what the memex keeps of a photo: title, caption, keywords, the people in it and their face
 * regions, when it was taken, where. One reader for the photo handler (the packet inside the
 * file, whatever way the photo arrives) and for `memex import photos` (XMP sidecars).
 *
 * Properties are known by their namespace URI, not by the prefix a writer chose, and read in the
 * RDF forms writers use: elements or attributes of `rdf:Description`, `rdf:Bag`/`Seq`/`Alt`
 * arrays, structs as `rdf:parseType="Resource"`, a nested `rdf:Description` or attributes.
 */

export const NS = {
  rdf: 'http://www.w3.org/1999/02/22-rdf-syntax-ns#',
  xml: 'http://www.w3.org/XML/1998/namespace',
  dc: 'http://purl.org/dc/elements/1.1/',
  xmp: 'http://ns.adobe.com/xap/1.0/',
  xmpNote: 'http://ns.adobe.com/xmp/note/',
  exif: 'http://ns.adobe.com/exif/1.0/',
  photoshop: 'http://ns.adobe.com/photoshop/1.0/',
  lr: 'http://ns.adobe.com/lightroom/1.0/',
  iptcExt: 'http://iptc.org/std/Iptc4xmpExt/2008-02-29/',
  mwgRs: 'http://www.metadataworkinggroup.com/schemas/regions/',
  stArea: 'http://ns.adobe.com/xmp/sType/Area#',
  stDim: 'http://ns.adobe.com/xap/1.0/sType/Dimensions#',
  mp: 'http://ns.microsoft.com/photo/1.2/',
  mpri: 'http://ns.microsoft.com/photo/1.2/t/RegionInfo#',
  mpreg: 'http://ns.microsoft.com/photo/1.2/t/Region#',
} as const;

/** A larger packet is refused unread: Extended XMP included, photos' metadata is far smaller. */
export const MAX_XMP_BYTES = 8 * 1024 * 1024;
/** Elements nested deeper are not read (XMP's deepest structs are a few levels down). */
const MAX_DEPTH = 64;

/** A box on the image, each value a fraction of its width or height, from its top left corner. */
export interface RegionBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** A named face: an MWG region (`mwg-rs`, Lightroom, Apple Photos, digiKam) or a Windows Photo Gallery one (`MP`). */
export interface NamedRegion {
  name: string;
  /** Null when the file names the face without a readable area. */
  box: RegionBox | null;
  source: 'mwg' | 'microsoft';
}

/** What an XMP packet says of a photo; lists are empty, texts absent where it says nothing. */
export interface XmpReading {
  /** `dc:title`, else `photoshop:Headline`. */
  title?: string;
  /** `dc:description`. */
  description?: string;
  /** `dc:creator`, its names joined. */
  creator?: string;
  /** `dc:subject`, then the leaves of Lightroom's `lr:hierarchicalSubject`, once each whatever the case. */
  keywords: string[];
  /** `Iptc4xmpExt:PersonInImage`, then the names of face regions, once each. */
  people: string[];
  /** Named face regions (MWG regions of type Face, Microsoft's with a PersonDisplayName). */
  regions: NamedRegion[];
  /** The capture time as written (`exif:DateTimeOriginal`, `photoshop:DateCreated`, `xmp:CreateDate`, in that order). */
  dates: string[];
  latitude?: number;
  longitude?: number;
  /** The GUID of the Extended XMP a JPEG carries beside this packet (`xmpNote:HasExtendedXMP`). */
  extendedXmp?: string;
}

/** A property's value: text, an array (Bag, Seq, Alt: x-default first), or a struct by property URI. */
export type XmpValue = string | XmpValue[] | XmpStruct;
export interface XmpStruct {
  [property: string]: XmpValue;
}

interface Attribute {
  uri: string;
  local: string;
  value: string;
}
interface Element {
  uri: string;
  local: string;
  attributes: Attribute[];
  children: Element[];
  text: string;
}

/** Why a packet could not be read (not XML, not RDF, too large). */
export class XmpError extends Error {}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** XML's five entities and character references, in one pass (the parser is told to leave them). */
export function unescapeXml(value: string): string {
  return value.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (whole, ref: string) => {
    if (ref[0] !== '#') return ENTITIES[ref.toLowerCase()] ?? whole;
    const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : Number(ref.slice(1));
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  ignorePiTags: true,
  ignoreDeclaration: true,
  processEntities: false,
});

type Ordered = Record<string, unknown>;

/** fast-xml-parser's ordered nodes as elements whose names are resolved to namespace URIs. */
function elements(nodes: Ordered[], scope: Map<string, string>, depth: number): Element[] {
  const out: Element[] = [];
  if (depth > MAX_DEPTH) return out;
  for (const node of nodes) {
    const name = Object.keys(node).find((key) => key !== ':@' && key !== '#text');
    if (name === undefined) continue;
    const raw = (node[':@'] as Record<string, string> | undefined) ?? {};
    let inner = scope;
    for (const [key, value] of Object.entries(raw)) {
      if (key === 'xmlns' || key.startsWith('xmlns:')) {
        if (inner === scope) inner = new Map(scope);
        inner.set(key === 'xmlns' ? '' : key.slice(6), unescapeXml(value));
      }
    }
    const resolve = (qualified: string, element: boolean) => {
      const colon = qualified.indexOf(':');
      const prefix = colon < 0 ? '' : qualified.slice(0, colon);
      // An attribute without a prefix is in no namespace; an element's is the default one.
      const uri = colon < 0 && !element ? '' : prefix === 'xml' ? NS.xml : (inner.get(prefix) ?? '');
      return { uri, local: qualified.slice(colon + 1) };
    };
    const children = Array.isArray(node[name]) ? (node[name] as Ordered[]) : [];
    out.push({
      ...resolve(name, true),
      attributes: Object.entries(raw)
        .filter(([key]) => key !== 'xmlns' && !key.startsWith('xmlns:'))
        .map(([key, value]) => ({ ...resolve(key, false), value: unescapeXml(String(value)) })),
      children: elements(children, inner, depth + 1),
      text: children
        .filter((child) => typeof child['#text'] === 'string' || typeof child['#text'] === 'number')
        .map((child) => unescapeXml(String(child['#text'])))
        .join(''),
    });
  }
  return out;
}

const isRdf = (e: { uri: string; local: string }, local: string) => e.uri === NS.rdf && e.local === local;
/** Attributes that are properties: not RDF's own syntax, not xml:lang. */
const propertyAttributes = (e: Element) =>
  e.attributes.filter((a) => a.uri !== '' && a.uri !== NS.rdf && a.uri !== NS.xml);

/** The properties of a node element (`rdf:Description`) or of a `parseType="Resource"` property. */
function struct(e: Element, into: XmpStruct = {}): XmpStruct {
  for (const a of propertyAttributes(e)) into[a.uri + a.local] ??= a.value;
  for (const child of e.children) {
    if (child.uri === NS.rdf) continue;
    into[child.uri + child.local] ??= value(child);
  }
  return into;
}

/** The value of a property element, in whichever RDF form it is written. */
function value(e: Element): XmpValue {
  if (e.attributes.some((a) => isRdf(a, 'parseType') && a.value === 'Resource')) return struct(e);
  const resource = e.attributes.find((a) => isRdf(a, 'resource'));
  if (resource) return resource.value;
  const array = e.children.find((c) => isRdf(c, 'Bag') || isRdf(c, 'Seq') || isRdf(c, 'Alt'));
  if (array) {
    const items = array.children.filter((c) => isRdf(c, 'li'));
    // A language alternative: the default language first.
    const lang = (li: Element) => li.attributes.find((a) => a.uri === NS.xml && a.local === 'lang')?.value;
    if (isRdf(array, 'Alt')) items.sort((a, b) => Number(lang(b) === 'x-default') - Number(lang(a) === 'x-default'));
    return items.map(value);
  }
  const description = e.children.find((c) => isRdf(c, 'Description'));
  if (description) return struct(description);
  if (propertyAttributes(e).length > 0) return struct(e);
  return e.text.trim();
}

function find(list: Element[], test: (e: Element) => boolean, depth = 0): Element | undefined {
  for (const e of list) {
    if (test(e)) return e;
    const inner = depth < MAX_DEPTH ? find(e.children, test, depth + 1) : undefined;
    if (inner) return inner;
  }
  return undefined;
}

/**
 * The properties of an XMP packet (every `rdf:Description` of its `rdf:RDF`, the first value of a
 * property kept), keyed by namespace URI + local name. Throws XmpError when it is no XML or holds
 * no `rdf:RDF`.
 */
export function xmpProperties(xml: string): XmpStruct {
  if (xml.length > MAX_XMP_BYTES) throw new XmpError(`${xml.length} characters, over the ${MAX_XMP_BYTES} read`);
  // XMP has no DTD: one here could only define entities to expand.
  if (/<!(DOCTYPE|ENTITY)/i.test(xml)) throw new XmpError('a DOCTYPE or ENTITY declaration, which XMP never has');
  const body = xml.replace(/^\uFEFF/, '').replace(/\0+$/, '');
  const valid = XMLValidator.validate(body);
  if (valid !== true) throw new XmpError(`not well-formed XML: ${valid.err.msg} (line ${valid.err.line})`);
  const root = elements(parser.parse(body) as Ordered[], new Map(), 0);
  const rdf = find(root, (e) => isRdf(e, 'RDF'));
  if (!rdf) throw new XmpError('no rdf:RDF element (is the RDF namespace right?)');
  const properties: XmpStruct = {};
  for (const description of rdf.children.filter((c) => isRdf(c, 'Description'))) struct(description, properties);
  return properties;
}

/** A text value: plain, or the first of an array (a language alternative's default). */
export function xmpText(value: XmpValue | undefined): string | undefined {
  if (typeof value === 'string') return value.trim() || undefined;
  if (Array.isArray(value)) return value.map(xmpText).find((text) => text !== undefined);
  return undefined;
}

/** The texts of an array (a lone text as one). */
export function xmpTexts(value: XmpValue | undefined): string[] {
  const list = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return list.map(xmpText).filter((text): text is string => text !== undefined);
}

/** The strings once each, compared without case; the first spelling is kept. */
export function uniqueIgnoringCase(values: Iterable<string>): string[] {
  const seen = new Map<string, string>();
  for (const value of values) {
    const key = value.trim().toLowerCase();
    if (key !== '' && !seen.has(key)) seen.set(key, value.trim());
  }
  return [...seen.values()];
}

/** `50,49.2N` or `50,49,12N` (XMP's GPSCoordinate), or a plain decimal number. */
export function xmpCoordinate(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)(?:,(\d+(?:\.\d+)?))?(?:,(\d+(?:\.\d+)?))?\s*([NSEW])\s*$/i.exec(value);
  if (!m) return undefined;
  const degrees = Number(m[1]) + Number(m[2] ?? 0) / 60 + Number(m[3] ?? 0) / 3600;
  return /[SW]/i.test(m[4]!) ? -degrees : degrees;
}

const field = (s: XmpValue | undefined, uri: string, local: string): XmpValue | undefined =>
  s && typeof s === 'object' && !Array.isArray(s) ? s[uri + local] : undefined;
const structs = (value: XmpValue | undefined): XmpStruct[] =>
  (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter(
    (v): v is XmpStruct => typeof v === 'object' && !Array.isArray(v),
  );
const number = (value: XmpValue | undefined): number | null => {
  const text = xmpText(value);
  const n = text === undefined ? NaN : Number(text);
  return Number.isFinite(n) ? n : null;
};

/** A box that lies on the image (a little rounding outside is clipped); null for anything else. */
function onImage(x: number, y: number, w: number, h: number): RegionBox | null {
  const slack = 0.01;
  if (![x, y, w, h].every(Number.isFinite) || w <= 0 || h <= 0) return null;
  if (x < -slack || y < -slack || x + w > 1 + slack || y + h > 1 + slack) return null;
  const clip = (v: number) => Math.min(1, Math.max(0, v));
  const [left, top] = [clip(x), clip(y)];
  return { x: left, y: top, w: clip(x + w) - left, h: clip(y + h) - top };
}

/**
 * MWG face regions (Metadata Working Group guidelines 2.0, 5.9): `mwg-rs:RegionInfo`'s
 * `RegionList`, each area's x and y its centre, normalised or in pixels of `AppliedToDimensions`.
 */
function mwgRegions(properties: XmpStruct): NamedRegion[] {
  const info = properties[NS.mwgRs + 'RegionInfo'];
  const dimensions = field(info, NS.mwgRs, 'AppliedToDimensions');
  const [width, height] = [number(field(dimensions, NS.stDim, 'w')), number(field(dimensions, NS.stDim, 'h'))];
  return structs(field(info, NS.mwgRs, 'RegionList')).flatMap((region): NamedRegion[] => {
    const name = xmpText(field(region, NS.mwgRs, 'Name'));
    if (!name || xmpText(field(region, NS.mwgRs, 'Type'))?.toLowerCase() !== 'face') return [];
    const area = field(region, NS.mwgRs, 'Area');
    const at = (key: string) => number(field(area, NS.stArea, key));
    const [x, y, w, h] = [at('x'), at('y'), at('w'), at('h')];
    const unit = xmpText(field(area, NS.stArea, 'unit')) ?? 'normalized';
    const scale =
      unit === 'normalized' ? { w: 1, h: 1 } : unit === 'pixel' && width && height ? { w: width, h: height } : null;
    const box =
      scale && x !== null && y !== null && w !== null && h !== null
        ? onImage((x - w / 2) / scale.w, (y - h / 2) / scale.h, w / scale.w, h / scale.h)
        : null;
    return [{ name, box, source: 'mwg' }];
  });
}

/** Windows Photo Gallery's people tags: `MP:RegionInfo`'s `MPRI:Regions`, a rectangle `x, y, w, h` from the top left. */
function microsoftRegions(properties: XmpStruct): NamedRegion[] {
  const info = properties[NS.mp + 'RegionInfo'];
  return structs(field(info, NS.mpri, 'Regions')).flatMap((region): NamedRegion[] => {
    const name = xmpText(field(region, NS.mpreg, 'PersonDisplayName'));
    if (!name) return [];
    const parts = (xmpText(field(region, NS.mpreg, 'Rectangle')) ?? '').split(',').map((p) => Number(p.trim()));
    const box = parts.length === 4 ? onImage(parts[0]!, parts[1]!, parts[2]!, parts[3]!) : null;
    return [{ name, box, source: 'microsoft' }];
  });
}

/** What a packet's properties say of a photo. */
export function xmpReading(properties: XmpStruct): XmpReading {
  const p = (uri: string, local: string) => properties[uri + local];
  const reading: XmpReading = { keywords: [], people: [], regions: [], dates: [] };
  const title = xmpText(p(NS.dc, 'title')) ?? xmpText(p(NS.photoshop, 'Headline'));
  if (title) reading.title = title;
  const description = xmpText(p(NS.dc, 'description'));
  if (description) reading.description = description;
  const creator = xmpTexts(p(NS.dc, 'creator')).join(', ');
  if (creator) reading.creator = creator;
  // Lightroom's `Places|Italy|Rome`: the leaf is the keyword (its parents are in dc:subject when exported).
  const leaves = xmpTexts(p(NS.lr, 'hierarchicalSubject')).map((path) => path.split('|').pop()!.trim());
  reading.keywords = uniqueIgnoringCase([...xmpTexts(p(NS.dc, 'subject')), ...leaves]);
  reading.regions = [...mwgRegions(properties), ...microsoftRegions(properties)];
  reading.people = uniqueIgnoringCase([
    ...xmpTexts(p(NS.iptcExt, 'PersonInImage')),
    ...reading.regions.map((region) => region.name),
  ]);
  reading.dates = [p(NS.exif, 'DateTimeOriginal'), p(NS.photoshop, 'DateCreated'), p(NS.xmp, 'CreateDate')]
    .map(xmpText)
    .filter((date): date is string => date !== undefined);
  const latitude = xmpCoordinate(xmpText(p(NS.exif, 'GPSLatitude')));
  const longitude = xmpCoordinate(xmpText(p(NS.exif, 'GPSLongitude')));
  if (latitude !== undefined && longitude !== undefined && Math.abs(latitude) <= 90 && Math.abs(longitude) <= 180) {
    reading.latitude = latitude;
    reading.longitude = longitude;
  }
  const extended = xmpText(p(NS.xmpNote, 'HasExtendedXMP'));
  if (extended) reading.extendedXmp = extended;
  return reading;
}

/** An XMP packet or sidecar read: throws XmpError when it is none. */
export function readXmp(xml: string): XmpReading {
  return xmpReading(xmpProperties(xml));
}

/** Two readings of one photo as one (a JPEG's main packet and its Extended XMP): the first's texts win, lists join. */
export function mergeXmp(first: XmpReading, second: XmpReading): XmpReading {
  return {
    ...second,
    ...first,
    keywords: uniqueIgnoringCase([...first.keywords, ...second.keywords]),
    people: uniqueIgnoringCase([...first.people, ...second.people]),
    regions: [...first.regions, ...second.regions],
    dates: [...first.dates, ...second.dates],
  };
}

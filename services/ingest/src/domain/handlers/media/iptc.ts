/**
 * IPTC-IIM (the IPTC Information Interchange Model, 4.2) as photos carry it: in a JPEG's APP13
 * segment (`Photoshop 3.0`, then Photoshop's image resources, IIM in resource 0x0404) or a TIFF's
 * tag 33723. Read by hand, every length checked against the bytes: a damaged block gives a
 * problem to warn of and what was read before the damage, never a throw.
 */

export interface IptcReading {
  /** 2:05 ObjectName. */
  title?: string;
  /** 2:120 Caption-Abstract. */
  description?: string;
  /** 2:80 By-line, the names joined. */
  creator?: string;
  /** 2:25 Keywords, in order. */
  keywords: string[];
  /** 2:55 DateCreated with 2:60 TimeCreated, as an XMP date (`2019-07-04T18:30:00+02:00`), when both are there. */
  date?: string;
}

/** Photoshop's image resource blocks start with one of these (8BIM almost always). */
const RESOURCE_SIGNATURES = new Set(['8BIM', 'PHUT', 'AgHg', 'DCSR', 'MeSa']);
const IPTC_RESOURCE = 0x0404;
/** 1:90 CodedCharacterSet `ESC % G`: the text is UTF-8. */
const UTF8_MARK = Buffer.from([0x1b, 0x25, 0x47]);

/**
 * The IIM block among Photoshop's image resources (an APP13 segment's payload after
 * `Photoshop 3.0\0`): null when there is none; a problem when a resource runs past the end.
 */
export function photoshopIptc(resources: Buffer): { iim: Buffer | null; problem: string | null } {
  let at = 0;
  while (at + 12 <= resources.length) {
    const signature = resources.toString('latin1', at, at + 4);
    if (!RESOURCE_SIGNATURES.has(signature))
      return { iim: null, problem: `no image resource at byte ${at} (found ${JSON.stringify(signature)})` };
    const id = resources.readUInt16BE(at + 4);
    // A Pascal string, padded so that it and its length byte take an even count.
    const nameLength = resources[at + 6]!;
    const sizeAt = at + 6 + nameLength + 1 + ((nameLength + 1) % 2);
    if (sizeAt + 4 > resources.length) return { iim: null, problem: `image resource 0x${id.toString(16)} cut short` };
    const size = resources.readUInt32BE(sizeAt);
    const start = sizeAt + 4;
    if (start + size > resources.length)
      return {
        iim: null,
        problem: `image resource 0x${id.toString(16)} of ${size} bytes runs past the end (${resources.length - start} left)`,
      };
    if (id === IPTC_RESOURCE) return { iim: resources.subarray(start, start + size), problem: null };
    at = start + size + (size % 2);
  }
  return { iim: null, problem: null };
}

/** The text of a dataset: UTF-8 when 1:90 says so, or when the bytes are (many tools leave 1:90 out); else Windows-1252. */
function decoder(utf8Declared: boolean): (bytes: Buffer) => string {
  const latin = new TextDecoder('windows-1252');
  const strict = new TextDecoder('utf-8', { fatal: true });
  const loose = new TextDecoder('utf-8');
  return (bytes) => {
    if (utf8Declared) return loose.decode(bytes);
    try {
      return strict.decode(bytes);
    } catch {
      return latin.decode(bytes);
    }
  };
}

/** `20190704` and `183000+0200` → `2019-07-04T18:30:00+02:00`; null when either is not so. */
function iimDate(date: string | undefined, time: string | undefined): string | undefined {
  const d = date ? /^(\d{4})(\d{2})(\d{2})$/.exec(date.trim()) : null;
  const t = time ? /^(\d{2})(\d{2})(\d{2})(?:([+-])(\d{2})(\d{2}))?$/.exec(time.trim()) : null;
  if (!d || !t || d[1] === '0000') return undefined;
  const zone = t[4] ? `${t[4]}${t[5]}:${t[6]}` : '';
  return `${d[1]}-${d[2]}-${d[3]}T${t[1]}:${t[2]}:${t[3]}${zone}`;
}

/**
 * The datasets of an IIM block (each `1C`, record, dataset, a 2-byte length, or an extended
 * length of up to 4 bytes): the photo's title, caption, by-line, keywords and date. A dataset that
 * runs past the end stops the reading with a problem; what came before is kept.
 */
export function readIim(iim: Buffer): { reading: IptcReading; problem: string | null } {
  const values: Array<{ record: number; dataset: number; data: Buffer }> = [];
  let problem: string | null = null;
  let at = 0;
  while (at < iim.length) {
    if (iim[at] === 0) {
      at++; // padding
      continue;
    }
    if (iim[at] !== 0x1c || at + 5 > iim.length) {
      problem = `no IIM dataset at byte ${at}`;
      break;
    }
    const [record, dataset] = [iim[at + 1]!, iim[at + 2]!];
    let length = iim.readUInt16BE(at + 3);
    let start = at + 5;
    if (length & 0x8000) {
      const bytes = length & 0x7fff;
      if (bytes < 1 || bytes > 4 || start + bytes > iim.length) {
        problem = `dataset ${record}:${dataset} has an unreadable extended length`;
        break;
      }
      length = iim.readUIntBE(start, bytes);
      start += bytes;
    }
    if (start + length > iim.length) {
      problem = `dataset ${record}:${dataset} of ${length} bytes runs past the end (${iim.length - start} left)`;
      break;
    }
    values.push({ record, dataset, data: iim.subarray(start, start + length) });
    at = start + length;
  }
  const utf8 = values.some((v) => v.record === 1 && v.dataset === 90 && v.data.equals(UTF8_MARK));
  const decode = decoder(utf8);
  const texts = (dataset: number) =>
    values
      .filter((v) => v.record === 2 && v.dataset === dataset)
      .map((v) => decode(v.data).replace(/\0+$/, '').trim())
      .filter((text) => text !== '');
  const reading: IptcReading = { keywords: texts(25) };
  const [title] = texts(5);
  const [description] = texts(120);
  const creator = texts(80).join(', ');
  const date = iimDate(texts(55)[0], texts(60)[0]);
  if (title) reading.title = title;
  if (description) reading.description = description;
  if (creator) reading.creator = creator;
  if (date) reading.date = date;
  return { reading, problem };
}

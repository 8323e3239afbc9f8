import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';
import ICAL from 'ical.js';
import { decode as decodeQuotedPrintable } from 'libqp';
import { CalendarFormatError, parseComponents } from './calendar.js';

export interface ContactPhoto {
  /** The image bytes (base64 in the card or a data: URI); null when the card only links to it. */
  bytes: Buffer | null;
  mediaType: string | null;
  /** The link when the photo is not inside the card. */
  uri: string | null;
}

export interface ContactCard {
  /** The card's UID, or null (many exports have none). */
  uid: string | null;
  version: string;
  /** FN, else the name parts joined, else the first address. */
  fullName: string;
  name: { family: string; given: string; additional: string; prefix: string; suffix: string } | null;
  nicknames: string[];
  emails: Array<{ address: string; types: string[] }>;
  /** As written, and as E.164 (`+15550100`) when it is a valid number (see phoneE164), else null. */
  phones: Array<{ number: string; e164: string | null; types: string[] }>;
  addresses: Array<{
    street: string;
    locality: string;
    region: string;
    postalCode: string;
    country: string;
    types: string[];
  }>;
  organization: string;
  title: string;
  birthday: string | null;
  note: string;
  categories: string[];
  urls: string[];
  photos: ContactPhoto[];
  /** REV: when the card last changed, as written. */
  revision: string | null;
}

// vCard 2.1 writes parameters bare (`TEL;WORK;VOICE:`) and encodings of its own; ical.js reads 3.0/4.0.
const ENCODINGS: Record<string, string> = {
  'QUOTED-PRINTABLE': 'QUOTED-PRINTABLE',
  BASE64: 'b',
  B: 'b',
  '8BIT': '8BIT',
  '7BIT': '7BIT',
};

interface ContentLine {
  name: string;
  params: string[];
  value: string;
}

function splitLine(line: string): ContentLine | null {
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '"') quoted = !quoted;
    else if (c === ':' && !quoted) {
      const [name = '', ...params] = line.slice(0, i).split(';');
      return { name, params, value: line.slice(i + 1) };
    }
  }
  return null;
}

/**
 * Unfolds lines, joining quoted-printable soft line breaks (a 2.1 value ending in `=` goes on). A
 * soft break is taken first: the line after it is the value's next characters, a leading space
 * included (`wraps in the=` + ` middle`), where unfolding would drop the space and leave the `=`.
 */
function logicalLines(input: string): string[] {
  const out: string[] = [];
  for (const raw of input.replace(/^\uFEFF/, '').split(/\r*\n|\r/)) {
    const last = out.length - 1;
    if (
      last >= 0 &&
      /ENCODING=QUOTED-PRINTABLE|;QUOTED-PRINTABLE[;:]/i.test(out[last]!.split(':', 1)[0]!) &&
      out[last]!.endsWith('=')
    ) {
      out[last] = out[last]!.slice(0, -1) + raw;
    } else if (last >= 0 && /^[ \t]/.test(raw)) out[last] += raw.slice(1);
    else out.push(raw);
  }
  return out;
}

function escapeText(value: string, structured: boolean): string {
  const escaped = value.replace(/\\/g, '\\\\').replace(/\r?\n/g, '\\n').replace(/,/g, '\\,');
  return structured ? escaped : escaped.replace(/;/g, '\\;');
}

const STRUCTURED = new Set(['N', 'ADR', 'ORG']);

/**
 * One content line in 3.0 form: bare parameters become TYPE= (or ENCODING=), quoted-printable
 * values are decoded in their CHARSET, BASE64 becomes `b`. Lines that are already 3.0/4.0 stay.
 */
function normaliseLine(line: string): string {
  const parts = splitLine(line);
  if (!parts || parts.params.length === 0) return line;
  const types: string[] = [];
  const params: string[] = [];
  let encoding: string | null = null;
  let charset: string | null = null;
  for (const param of parts.params) {
    const eq = param.indexOf('=');
    const key = (eq < 0 ? '' : param.slice(0, eq)).toUpperCase();
    const value = eq < 0 ? param : param.slice(eq + 1);
    if (eq < 0 && ENCODINGS[value.toUpperCase()]) encoding = ENCODINGS[value.toUpperCase()]!;
    else if (eq < 0) types.push(value);
    else if (key === 'ENCODING') encoding = ENCODINGS[value.toUpperCase()] ?? value;
    else if (key === 'CHARSET') charset = value;
    else if (key === 'TYPE') types.push(value);
    else params.push(param);
  }
  let value = parts.value;
  if (encoding === 'QUOTED-PRINTABLE') {
    const bytes = decodeQuotedPrintable(value);
    let decoded: string;
    try {
      decoded = new TextDecoder(charset ?? 'utf-8').decode(bytes);
    } catch {
      decoded = new TextDecoder('windows-1252').decode(bytes);
    }
    value = escapeText(decoded, STRUCTURED.has(parts.name.toUpperCase()));
    encoding = null;
  } else if (charset && /[^\x00-\x7f]/.test(value) === false) {
    charset = null;
  }
  if (types.length > 0) params.push(`TYPE=${types.join(',')}`);
  if (encoding === 'b') params.push('ENCODING=b');
  if (encoding === 'b') value = value.replace(/\s+/g, '');
  return `${[parts.name, ...params].join(';')}:${value}`;
}

/** The cards of a text, each as one jCard component; 2.1 cards are rewritten in 3.0 form first. */
function parseCards(input: string): ICAL.Component[] {
  const lines = logicalLines(input);
  const first = lines.find((l) => l.trim() !== '') ?? '';
  if (!/^BEGIN:VCARD$/i.test(first.trim())) {
    throw new CalendarFormatError(
      `not a vCard file: it starts with ${JSON.stringify(first.slice(0, 40))} instead of BEGIN:VCARD`,
    );
  }
  const normalised = lines
    .filter((l) => l.trim() !== '')
    .map((l) => (/^VERSION:\s*2\.1\s*$/i.test(l) ? 'VERSION:3.0' : normaliseLine(l)))
    .join('\r\n');
  return parseComponents(normalised, 'vCard');
}

function strings(prop: ICAL.Property): string[] {
  return prop.getValues().flatMap((v) => (Array.isArray(v) ? v.map(String) : [String(v)]));
}

function typesOf(prop: ICAL.Property): string[] {
  const type = prop.getParameter('type');
  const list = Array.isArray(type) ? type : typeof type === 'string' ? type.split(',') : [];
  return [...new Set(list.map((t) => t.trim().toLowerCase()).filter((t) => t !== '' && t !== 'internet'))];
}

function first(card: ICAL.Component, name: string): string {
  const prop = card.getFirstProperty(name);
  return prop ? strings(prop).join(' ').trim() : '';
}

function structured(prop: ICAL.Property | null, size: number): string[] {
  if (!prop) return [];
  const value = prop.getFirstValue();
  const parts = Array.isArray(value)
    ? value.map((v) => (Array.isArray(v) ? v.join(',') : String(v ?? '')))
    : String(value ?? '').split(';');
  while (parts.length < size) parts.push('');
  return parts.map((p) => p.trim());
}

function photo(prop: ICAL.Property): ContactPhoto {
  const raw = String((prop.toJSON() as unknown[])[3] ?? '').trim();
  const type = prop.getParameter('type');
  const typed = (Array.isArray(type) ? type[0] : type) ?? null;
  const mediaType = typed ? (typed.includes('/') ? typed.toLowerCase() : `image/${typed.toLowerCase()}`) : null;
  const dataUri = /^data:([^;,]*)(;base64)?,(.*)$/is.exec(raw);
  if (dataUri) {
    const bytes = dataUri[2]
      ? Buffer.from(dataUri[3]!, 'base64')
      : Buffer.from(decodeURIComponent(dataUri[3]!), 'utf8');
    return { bytes, mediaType: dataUri[1] || mediaType, uri: null };
  }
  const encoding = String(prop.getParameter('encoding') ?? '').toLowerCase();
  if (encoding === 'b' || encoding === 'base64') return { bytes: Buffer.from(raw, 'base64'), mediaType, uri: null };
  return { bytes: null, mediaType, uri: raw || null };
}

function readCard(card: ICAL.Component, index: number): ContactCard {
  if (card.name !== 'vcard')
    throw new CalendarFormatError(`item ${index + 1} is ${card.name.toUpperCase()}, not VCARD`);
  const version = first(card, 'version') || '3.0';
  const n = card.getFirstProperty('n');
  const [family = '', given = '', additional = '', prefix = '', suffix = ''] = structured(n, 5);
  const emails = card
    .getAllProperties('email')
    .map((p) => ({
      address: first0(p)
        .replace(/^mailto:/i, '')
        .toLowerCase(),
      types: typesOf(p),
    }))
    .filter((e) => e.address !== '');
  const fullName =
    first(card, 'fn') ||
    [prefix, given, additional, family, suffix].filter(Boolean).join(' ') ||
    (emails[0]?.address ?? '');
  if (!fullName) throw new CalendarFormatError(`card ${index + 1} has no name (FN or N) and no address`);
  return {
    uid: first(card, 'uid') || null,
    version,
    fullName,
    name: n ? { family, given, additional, prefix, suffix } : null,
    nicknames: card
      .getAllProperties('nickname')
      .flatMap(strings)
      .map((s) => s.trim())
      .filter(Boolean),
    emails,
    phones: card.getAllProperties('tel').flatMap((p) => {
      const number = first0(p).replace(/^tel:/i, '').trim();
      return number ? [{ number, e164: phoneE164(number), types: typesOf(p) }] : [];
    }),
    addresses: card.getAllProperties('adr').map((p) => {
      const [, , street = '', locality = '', region = '', postalCode = '', country = ''] = structured(p, 7);
      return { street, locality, region, postalCode, country, types: typesOf(p) };
    }),
    organization: structured(card.getFirstProperty('org'), 1).filter(Boolean).join(', '),
    title: first(card, 'title'),
    birthday: first(card, 'bday') || null,
    note: first(card, 'note'),
    categories: card
      .getAllProperties('categories')
      .flatMap(strings)
      .map((s) => s.trim())
      .filter(Boolean),
    urls: card.getAllProperties('url').map(first0).filter(Boolean),
    photos: card
      .getAllProperties('photo')
      .map(photo)
      .filter((p) => p.bytes !== null || p.uri !== null),
    revision: first(card, 'rev') || null,
  };
}

function first0(prop: ICAL.Property): string {
  return String(prop.getFirstValue() ?? '').trim();
}

/**
 * A phone number as E.164 (`+15550100`), by libphonenumber: international numbers (`+…`, `00…`)
 * anywhere, national ones read in `region` — the rule tier 0 reads phones in mail by, so a card
 * and a mail signature name the same `phone:` thing. Null when it is not a valid number.
 */
export function phoneE164(number: string, region: CountryCode = 'US'): string | null {
  const parsed = parsePhoneNumberFromString(number.trim().replace(/^00(?=[1-9])/, '+'), region);
  return parsed?.isValid() ? parsed.number : null;
}

/**
 * Reads a vCard file (2.1, 3.0 or 4.0; one or many cards) with ical.js. vCard 2.1's bare
 * parameters, quoted-printable values (in their CHARSET) and BASE64 are rewritten in 3.0 form
 * first, since ical.js reads only 3.0 and 4.0.
 */
export function readVCards(input: string): ContactCard[] {
  const cards = parseCards(input).map(readCard);
  if (cards.length === 0) throw new CalendarFormatError('the file holds no vCard');
  return cards;
}

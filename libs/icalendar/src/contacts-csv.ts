import { CalendarFormatError } from './calendar.js';
import { phoneE164, type ContactCard } from './vcard.js';

/**
 * Address books exported as CSV, by their column names: Google Contacts (its "Google CSV", old
 * and new), Outlook (and Outlook.com), Thunderbird, and LinkedIn's Connections.csv. Each row is a
 * card; the columns a card has no use for (Outlook's ninety) are passed over.
 */

/** RFC 4180: fields split by commas, quoted fields holding commas, line breaks and doubled quotes; a blank line is a record of one empty field. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c !== '"') field += c;
      else if (text[i + 1] === '"') field += text[++i];
      else quoted = false;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length > 0) rows.push([...row, field]);
  return rows;
}

const isBlank = (row: string[]) => row.every((field) => field.trim() === '');

const NAME_COLUMNS = /^(name|display name|full name|first name|given name|last name|family name|surname)$/;
const EMAIL_COLUMN = /^(e-?mail( \d+)?( address)?|e-?mail \d+ - value|(primary|secondary) email)$/;
const PHONE_COLUMN = /^((\w+ )?(phone|mobile|fax|pager)( \d+)?( number)?|phone \d+ - value)$/;

const norm = (header: string) => header.trim().toLowerCase();

/** The header row among the first rows (LinkedIn puts a paragraph of notes above it), or -1. */
function headerRow(rows: string[][]): number {
  for (let i = 0; i < Math.min(rows.length, 10); i++) {
    const names = rows[i]!.map(norm);
    if (names.length < 3) continue;
    if (names.some((n) => NAME_COLUMNS.test(n)) && names.some((n) => EMAIL_COLUMN.test(n) || PHONE_COLUMN.test(n)))
      return i;
  }
  return -1;
}

/** Whether a CSV file is an address book export (the check `readContactsCsv` makes first). */
export function isContactsCsv(text: string): boolean {
  // The header is in the first lines: no need to split a large file whole to tell.
  return headerRow(parseCsv(text.slice(0, 16_384)).slice(0, 10)) >= 0;
}

/** Types a label or a column name gives (`Mobile Phone` → cell, `* Work` → work). */
function typesOf(label: string): string[] {
  const text = label.toLowerCase();
  const types = [
    ['home', /home|private|personal/],
    ['work', /work|business|company|office/],
    ['cell', /mobile|cell/],
    ['fax', /fax/],
    ['pager', /pager/],
  ] as const;
  return types.filter(([, pattern]) => pattern.test(text)).map(([type]) => type);
}

/**
 * The cards of an address book exported as CSV (see the module), and the rows left out: those with
 * nothing to name a contact by (no name, organization, e-mail or phone), by their record number
 * in the file (a spreadsheet's row number; blank lines count). Rejects a CSV that is no address book.
 */
export function readContactsCsv(text: string): { cards: ContactCard[]; unnamedRows: number[] } {
  const rows = parseCsv(text);
  const at = headerRow(rows);
  if (at < 0) throw new CalendarFormatError('a CSV file, but not an address book (no name and e-mail columns)');
  const header = rows[at]!.map(norm);
  const cards: ContactCard[] = [];
  const unnamedRows: number[] = [];
  rows.forEach((row, i) => {
    if (i <= at || isBlank(row)) return;
    const card = readRow(header, row);
    if (card) cards.push(card);
    else unnamedRows.push(i + 1);
  });
  if (cards.length === 0) throw new CalendarFormatError('an address book CSV with no contacts in it');
  return { cards, unnamedRows };
}

function readRow(header: string[], row: string[]): ContactCard | null {
  const cells = header.map((name, i) => [name, (row[i] ?? '').trim()] as const).filter(([, value]) => value !== '');
  const get = (...names: string[]) => cells.find(([name]) => names.includes(name))?.[1] ?? '';
  /**
   * The values of a kind of field: Google's numbered `E-mail 1 - Value` with the types of its
   * `E-mail 1 - Type` (or `- Label`), several joined by ` ::: `; and plain columns (`Mobile Phone`)
   * typed by their names.
   */
  const valuesOf = (prefix: string, column: RegExp) => [
    ...cells
      .filter(([name]) => new RegExp(`^${prefix} \\d+ - value$`).test(name))
      .flatMap(([name, value]) => {
        const n = name.slice(prefix.length + 1).split(' ')[0];
        const types = typesOf(get(`${prefix} ${n} - type`, `${prefix} ${n} - label`));
        return value.split(' ::: ').map((one) => ({ value: one, types }));
      }),
    ...cells
      .filter(([name]) => column.test(name) && !/ - value$/.test(name))
      .map(([name, value]) => ({ value, types: typesOf(name) })),
  ];
  const emails = valuesOf('e-mail', EMAIL_COLUMN)
    .filter(({ value }) => value.includes('@'))
    .map(({ value, types }) => ({ address: value, types }));
  const phones = valuesOf('phone', PHONE_COLUMN).map(({ value, types }) => ({
    number: value,
    e164: phoneE164(value),
    types,
  }));
  const name = {
    given: get('given name', 'first name'),
    additional: get('additional name', 'middle name'),
    family: get('family name', 'last name', 'surname'),
    prefix: get('name prefix'),
    suffix: get('name suffix', 'suffix'),
  };
  const fullName =
    get('name', 'display name', 'full name') ||
    [name.prefix, name.given, name.additional, name.family, name.suffix].filter(Boolean).join(' ') ||
    get('organization 1 - name', 'organization name', 'company', 'organization') ||
    emails[0]?.address ||
    phones[0]?.number ||
    '';
  if (!fullName) return null;
  return {
    uid: null,
    version: 'csv',
    fullName,
    name: Object.values(name).some(Boolean) ? name : null,
    nicknames: [get('nickname')].filter(Boolean),
    emails,
    phones,
    addresses: addressesOf(cells),
    organization: get('organization 1 - name', 'organization name', 'company', 'organization'),
    title: get('organization 1 - title', 'organization title', 'job title', 'position'),
    birthday: get('birthday') || null,
    note: get('notes', 'note'),
    categories: get('group membership', 'labels', 'categories')
      .split(/ ::: |;/)
      .map((c) => c.replace(/^\* /, '').trim())
      .filter((c) => c && c !== 'myContacts'),
    urls: cells.filter(([n]) => /^(web page( \d+)?|website \d+ - value|url)$/.test(n)).map(([, url]) => url),
    photos: [],
    revision: null,
  };
}

/** Google's `Address 1 - Street…` groups, Outlook's `Home Street`, `Business City`… and Thunderbird's `Work ZipCode`… columns. */
function addressesOf(cells: ReadonlyArray<readonly [string, string]>): ContactCard['addresses'] {
  const groups = new Map<string, Map<string, string>>();
  for (const [name, value] of cells) {
    const google = /^address (\d+) - (.+)$/.exec(name);
    const outlook =
      /^(home|business|work|other) (street|address|city|state|postal code|zipcode|country|country\/region)$/.exec(name);
    const [group, part] = google
      ? [`address ${google[1]}`, google[2]!]
      : outlook
        ? [
            outlook[1]!,
            ({ address: 'street', zipcode: 'postal code' } as Record<string, string>)[outlook[2]!] ?? outlook[2]!,
          ]
        : [];
    if (!group) continue;
    if (!groups.has(group)) groups.set(group, new Map());
    groups.get(group)!.set(part!, value);
  }
  return [...groups]
    .map(([group, parts]) => ({
      // Google keeps the whole address in `Formatted` too, and only there when it was typed as one line.
      street: parts.get('street') ?? (parts.has('city') ? '' : (parts.get('formatted') ?? '')),
      locality: parts.get('city') ?? '',
      region: parts.get('region') ?? parts.get('state') ?? '',
      postalCode: parts.get('postal code') ?? '',
      country: parts.get('country') ?? parts.get('country/region') ?? '',
      types: typesOf(parts.get('type') ?? parts.get('label') ?? group),
    }))
    .filter((a) => a.street || a.locality || a.region || a.postalCode || a.country);
}

import type { CountryCode } from 'libphonenumber-js';
import type { SignatureBlock } from '@memex/contracts';
import { phonesIn } from './mentions.js';

type Field = SignatureBlock['fields'][number];

/** Where a signature starts without the `-- ` separator: a closing line. */
const VALEDICTION =
  /^(?:best(?: regards| wishes)?|regards|kind regards|warm regards|many thanks|thanks(?: again)?|thank you|cheers|sincerely(?: yours)?|yours(?: sincerely| truly)?|all the best|mit freundlichen grüßen|viele grüße|beste grüße|cordialement|bien à vous|saludos|un saludo|cordiali saluti|met vriendelijke groet)[,.!]?$/i;
/** Where quoted mail starts: what follows is someone else's text. */
const QUOTE_START =
  /^(?:>|On .{4,200} wrote:$|Am .{4,200} schrieb .*:$|Le .{4,200} a écrit\s?:$|-----\s?Original Message\s?-----|From: .+)/;
const TITLE_WORDS =
  /\b(?:engineer|manager|director|professor|prof\.|lecturer|ceo|cto|cfo|coo|founder|co-founder|head of|vp|vice president|president|lead|scientist|researcher|analyst|consultant|designer|developer|officer|partner|associate|counsel|attorney|coordinator|student|ph\.?d\.? candidate|postdoc|fellow|editor|architect|administrator|assistant|specialist|chair|dean|librarian|owner|principal|executive|geschäftsführer|leiter|ingénieur|directeur)\b/i;
const COMPANY_WORDS =
  /\b(?:inc\.?|llc|ltd\.?|limited|gmbh|ag|s\.?a\.?|sarl|s\.?r\.?l\.?|b\.?v\.?|corp\.?|corporation|company|co\.|plc|university|universität|université|college|institute|institut|laborator(?:y|ies)|labs?|foundation|group|hospital|school|agency|partners|technologies|systems|ventures|capital)\b/i;
const NOT_NAME = /[@\d:/|]|https?|www\./i;
const NAME_PARTICLES = new Set(['van', 'von', 'de', 'der', 'den', 'da', 'di', 'du', 'del', 'la', 'le', 'bin', 'al']);

export interface Line {
  text: string;
  start: number;
}

/**
 * A mail's signature block (seed §4.3): the lines after the last `-- ` separator, or else after a
 * closing line ("Best regards,") near the end, before any quoted text; in them the sender's name,
 * title, company and phones, each with its span in `text`. Undefined when there is no block or it
 * names nothing.
 */
export function signatureIn(text: string, sender: string, region?: CountryCode): SignatureBlock | undefined {
  const lines = ownLines(text);
  const block = blockOf(lines);
  if (!block || block.length === 0) return undefined;
  const fields: Field[] = [];
  const field = (kind: Field['field'], line: Line, part: string, value = part) => {
    const at = line.text.indexOf(part);
    fields.push({ field: kind, text: part, value, start: line.start + at, end: line.start + at + part.length });
  };
  let sawName = false;
  let sawCompany = false;
  for (const [index, line] of block.entries()) {
    const phones = phonesIn(line.text, region);
    if (phones.length > 0) {
      for (const phone of phones)
        fields.push({
          field: 'phone',
          text: phone.text,
          value: phone.value,
          start: line.start + phone.start,
          end: line.start + phone.end,
        });
      continue;
    }
    if (NOT_NAME.test(line.text) && !TITLE_WORDS.test(line.text) && !COMPANY_WORDS.test(line.text)) continue;
    if (!sawName && index <= 1 && looksLikeName(line.text)) {
      field('name', line, line.text);
      sawName = true;
      continue;
    }
    if (TITLE_WORDS.test(line.text)) {
      // "Title, Company", "Title | Company", "Title at Company" on one line.
      const [title, company] = splitTitle(line.text);
      field('title', line, title);
      if (company) {
        field('company', line, company);
        sawCompany = true;
      }
      continue;
    }
    if (
      !sawCompany &&
      (COMPANY_WORDS.test(line.text) || (sawName && fields.some((f) => f.field === 'title'))) &&
      !/[@]|https?:|www\./.test(line.text)
    ) {
      field('company', line, line.text);
      sawCompany = true;
    }
  }
  if (fields.length === 0) return undefined;
  const first = block[0]!;
  const last = block[block.length - 1]!;
  return { sender, start: first.start, end: last.start + last.text.length, fields };
}

/** The message's own lines (trimmed, with their offsets), stopping where quoted mail begins. */
export function ownLines(text: string): Line[] {
  const lines: Line[] = [];
  let offset = 0;
  for (const raw of text.split('\n')) {
    const start = offset;
    offset += raw.length + 1;
    const trimmedStart = raw.length - raw.trimStart().length;
    const line = raw.trim();
    if (QUOTE_START.test(line)) break;
    lines.push({ text: line, start: start + trimmedStart });
  }
  return lines;
}

/** The signature's non-empty lines (at most 8), or undefined. */
function blockOf(lines: Line[]): Line[] | undefined {
  const from = signatureStart(lines);
  if (from === undefined) return undefined;
  const block = lines.slice(from).filter((l) => l.text !== '' && l.text.length <= 100);
  return block.slice(0, 8);
}

/**
 * Where the signature begins among the message's own lines: after the last `-- ` separator, else
 * after the last closing line among the last 15 non-empty lines; undefined when there is none.
 */
export function signatureStart(lines: Line[]): number | undefined {
  for (let i = lines.length - 1; i >= 0; i--) if (lines[i]!.text === '--' || lines[i]!.text === '-- ') return i + 1;
  const tail = lines
    .map((l, i) => ({ l, i }))
    .filter(({ l }) => l.text !== '')
    .slice(-15);
  const closing = tail.reverse().find(({ l }) => VALEDICTION.test(l.text));
  return closing ? closing.i + 1 : undefined;
}

function looksLikeName(line: string): boolean {
  if (NOT_NAME.test(line) || TITLE_WORDS.test(line) || COMPANY_WORDS.test(line)) return false;
  const words = line.replace(/,.*$/, '').split(/\s+/);
  if (words.length < 1 || words.length > 4) return false;
  return words.every((w) => NAME_PARTICLES.has(w) || /^\p{Lu}[\p{L}'.-]*$/u.test(w));
}

function splitTitle(line: string): [string, string | undefined] {
  // "Title at Company" and "Title | Company" say which part is which; after a comma or a dash the
  // rest is a company only if it is named like one ("Director, Sales and Marketing" is one title).
  const explicit = /^(.+?)(?:\s*[|•·]\s*|\s+at\s+|\s+@\s+|\s+bei\s+|\s+chez\s+)(.+)$/.exec(line);
  const comma = /^(.+?)\s*[,–—]\s*(.+)$/.exec(line);
  const match = explicit ?? (comma && COMPANY_WORDS.test(comma[2]!) ? comma : null);
  if (!match || !TITLE_WORDS.test(match[1]!)) return [line, undefined];
  return [match[1]!.trim(), match[2]!.trim()];
}

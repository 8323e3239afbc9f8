import * as chrono from 'chrono-node';
import { findPhoneNumbersInText, type CountryCode } from 'libphonenumber-js';
import { ARXIV_PATTERN, DOI_PATTERN, trimIdentifier, type Mention } from '@memex/contracts';

/**
 * Tier 0's extractors: rules and maintained parsers, no model. Each returns mentions with their
 * spans in the text it was given; `mentionsIn` runs them all.
 */

function matches(text: string, pattern: RegExp, group = 0): Array<{ text: string; start: number }> {
  const out: Array<{ text: string; start: number }> = [];
  for (const m of text.matchAll(pattern)) {
    const whole = m[group]!;
    const start = m.index! + (group === 0 ? 0 : m[0].indexOf(whole));
    out.push({ text: whole, start });
  }
  return out;
}

export function urlsIn(text: string): Mention[] {
  return matches(text, /\b(?:https?:\/\/|www\.)[^\s<>"'`]+/gi).map(({ text: raw, start }) => {
    const url = trimIdentifier(raw);
    return { kind: 'url', text: url, value: url, start, end: start + url.length };
  });
}

/** DOIs keep odd characters (SICI DOIs have `<`, `>`, `;`, parentheses); only sentence punctuation is cut. */
export function doisIn(text: string): Mention[] {
  return matches(text, DOI_PATTERN).map(({ text: raw, start }) => {
    const doi = trimIdentifier(raw);
    return { kind: 'doi', text: doi, value: doi.toLowerCase(), start, end: start + doi.length };
  });
}

/** arXiv ids as contracts' ARXIV_PATTERN reads them, without the prefix. */
export function arxivIdsIn(text: string): Mention[] {
  return matches(text, ARXIV_PATTERN, 1).map(({ text: id, start }) => ({
    kind: 'arxiv',
    text: id,
    value: id,
    start,
    end: start + id.length,
  }));
}

/** ISBN-10 or -13 with a valid check digit, given as 13 digits. */
export function isbnsIn(text: string): Mention[] {
  const pattern = /\b(?:ISBN(?:-1[03])?:?\s*)?((?:97[89][- ]?)?\d{1,5}[- ]?\d{1,7}[- ]?\d{1,7}[- ]?[\dX])\b/g;
  const out: Mention[] = [];
  for (const m of text.matchAll(pattern)) {
    const written = m[1]!;
    const digits = written.replace(/[- ]/g, '');
    const prefixed = /^ISBN/i.test(m[0]);
    // A bare number is an ISBN only as 978/979 with hyphens (phone numbers and ids look like ISBN-10s).
    if (!prefixed && !(digits.length === 13 && /[- ]/.test(written))) continue;
    const isbn13 = toIsbn13(digits);
    if (!isbn13) continue;
    const start = m.index! + m[0].indexOf(written);
    out.push({ kind: 'isbn', text: written, value: isbn13, start, end: start + written.length });
  }
  return out;
}

function toIsbn13(digits: string): string | undefined {
  if (digits.length === 10) {
    const sum = [...digits].reduce((s, d, i) => s + (d === 'X' ? 10 : Number(d)) * (10 - i), 0);
    if (sum % 11 !== 0) return undefined;
    const body = `978${digits.slice(0, 9)}`;
    return body + isbn13Check(body);
  }
  if (digits.length === 13 && /^\d+$/.test(digits) && isbn13Check(digits.slice(0, 12)) === digits[12]) return digits;
  return undefined;
}

function isbn13Check(twelve: string): string {
  const sum = [...twelve].reduce((s, d, i) => s + Number(d) * (i % 2 === 0 ? 1 : 3), 0);
  return String((10 - (sum % 10)) % 10);
}

const SYMBOLS: Record<string, string> = {
  $: 'USD',
  US$: 'USD',
  C$: 'CAD',
  A$: 'AUD',
  '€': 'EUR',
  '£': 'GBP',
  '¥': 'JPY',
  '₹': 'INR',
  CHF: 'CHF',
};
const WORDS: Record<string, string> = { dollars: 'USD', euros: 'EUR', euro: 'EUR', pounds: 'GBP', francs: 'CHF' };
const CODES = 'USD|EUR|GBP|CHF|JPY|CAD|AUD|INR|CNY|SEK|NOK|DKK';
const AMOUNT = String.raw`\d{1,3}(?:[,.' ]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?`;
const SCALE = String.raw`(?:\s?(k|m|bn|million|billion)\b)?`;

/** Amounts with a currency symbol, ISO code or word: `$1,250.00`, `€ 3.400,50`, `1.5 million USD`, `CHF 80`. */
export function moneyIn(text: string): Mention[] {
  const before = new RegExp(String.raw`(US\$|C\$|A\$|\$|€|£|¥|₹|\b(?:${CODES})\b)\s?(${AMOUNT})${SCALE}`, 'g');
  const after = new RegExp(String.raw`\b(${AMOUNT})${SCALE}\s?(€|\b(?:${CODES}|dollars|euros?|pounds|francs)\b)`, 'g');
  const out: Mention[] = [];
  for (const m of text.matchAll(before)) out.push(money(m[0], m.index!, m[1]!, m[2]!, m[3]));
  for (const m of text.matchAll(after)) out.push(money(m[0], m.index!, m[3]!, m[1]!, m[2]));
  return out;
}

function money(written: string, start: number, currency: string, amount: string, scale: string | undefined): Mention {
  const code = SYMBOLS[currency] ?? WORDS[currency.toLowerCase()] ?? currency.toUpperCase();
  const factor = { k: 1e3, m: 1e6, million: 1e6, bn: 1e9, billion: 1e9 }[scale?.toLowerCase() ?? ''] ?? 1;
  const value = parseAmount(amount) * factor;
  const trimmed = written.trimEnd();
  return {
    kind: 'money',
    text: trimmed,
    value: `${code} ${Number(value.toFixed(2))}`,
    start,
    end: start + trimmed.length,
  };
}

/** `1,234.56` and `1.234,56` and `1'234` alike: the last separator followed by 1–2 digits is the decimal point. */
function parseAmount(amount: string): number {
  const decimal = /[.,](\d{1,2})$/.exec(amount);
  const whole = (decimal ? amount.slice(0, decimal.index) : amount).replace(/[,.' ]/g, '');
  return Number(`${whole}.${decimal?.[1] ?? '0'}`);
}

/**
 * Phone numbers through libphonenumber (valid numbers only); national numbers are read in
 * `region`, international ones (`+…`, `00…`) anywhere.
 */
export function phonesIn(text: string, region: CountryCode = 'US'): Mention[] {
  // `00` is the international prefix in most of the world (the region's own may differ): read it
  // as `+`, two characters for two so the offsets stay.
  const international = text.replace(/(?<![\d+])00(?=[1-9])/g, ' +');
  return findPhoneNumbersInText(international, { defaultCountry: region }).map((found) => {
    // A number written `00…` starts at its first zero.
    const start = text[found.startsAt] === '0' ? found.startsAt - 1 : found.startsAt;
    return {
      kind: 'phone',
      text: text.slice(start, found.endsAt),
      value: found.number.number,
      start,
      end: found.endsAt,
    };
  });
}

/**
 * Shapes every other language's parsers are run for: a day written `5.` before a month spelt as
 * in English ("5. Sep 2024", which English reads as 1 September) and times written `15h`, `15h30`.
 */
const OTHER_LANGUAGE_SHAPES =
  /(?<![\p{L}\d.-])\d{1,2}\.\s?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)|(?<![\p{L}\d])\d{1,2}\s?h(?:\d\d)?(?![\p{L}\d])/iu;

/**
 * Formal dates in other common languages, each read only where the text has a word of that
 * language's calendar: a month or weekday name, a unit of time, a time-of-day word. Words spelt
 * as in English (April, August) are left out, as numbers alone are (2025-04-01, 14/02/2025,
 * 10:30): the English parser reads those, and its reading already wins where both read a span.
 * Running all six parsers over every text was a third of a pipelines worker's time in an import;
 * a case-insensitive pattern of each language's words, run over every text, still took a
 * worker 3.4 s of 51 in a 10,000-message import: the text's words are looked up instead.
 */
const OTHER_LANGUAGES: ReadonlyArray<{ parser: chrono.Chrono; words: string }> = [
  {
    parser: chrono.de.strict,
    words: `januar jänner feber februar märz maerz mrz mai juni juli oktober okt dezember dez
      sonntag montag dienstag mittwoch donnerstag freitag samstag sonnabend
      sekunden minuten stunde stunden tage tagen woche wochen monat monate monaten jahr jahre jahren quartal uhr`,
  },
  {
    parser: chrono.fr.strict,
    words: `janvier janv février fevrier févr mars avril mai juin juillet juil août aout septembre
      octobre novembre décembre decembre déc dimanche lundi mardi mercredi jeudi vendredi samedi
      seconde secondes heure heures jour jours semaine semaines mois ans année années trimestre`,
  },
  {
    parser: chrono.es.strict,
    words: `enero ene febrero marzo abril mayo junio julio agosto septiembre setiembre octubre
      noviembre diciembre dic domingo lunes martes miércoles miercoles jueves viernes sábado sabado
      segundo segundos minuto minutos hora horas día días dia dias semana semanas mes meses año años`,
  },
  {
    parser: chrono.it.strict,
    words: `gennaio gen febbraio marzo aprile maggio giugno giu luglio lug agosto settembre
      ottobre ott novembre dicembre dic domenica lunedì lunedi martedì martedi mercoledì mercoledi
      giovedì giovedi venerdì venerdi sabato secondi minuto minuti ora ore giorno giorni settimana
      settimane mese mesi anno anni trimestre`,
  },
  {
    parser: chrono.nl.strict,
    words: `januari februari maart mrt mei juni juli augustus oktober okt zondag maandag dinsdag
      woensdag donderdag vrijdag zaterdag seconden minuten minuut uur uren dag dagen weken maand
      maanden jaar jaren`,
  },
  {
    parser: chrono.pt.strict,
    words: `janeiro fevereiro fev março abril maio junho julho agosto setembro outubro
      novembro dezembro dez domingo segunda terça terca quarta quinta sexta sábado sabado horas`,
  },
];

/** Each calendar word (lower case) with the other languages' parsers it calls for. */
const CALENDAR_WORDS = new Map<string, chrono.Chrono[]>();
for (const { parser, words } of OTHER_LANGUAGES)
  for (const word of words.trim().split(/\s+/)) CALENDAR_WORDS.set(word, [...(CALENDAR_WORDS.get(word) ?? []), parser]);

/** The other languages' parsers whose calendar words the text has (whole words, any case). */
function otherLanguagesIn(text: string): chrono.Chrono[] {
  if (OTHER_LANGUAGE_SHAPES.test(text)) return OTHER_LANGUAGES.map(({ parser }) => parser);
  const found = new Set<chrono.Chrono>();
  for (const word of text.toLowerCase().match(/\p{L}+/gu) ?? [])
    for (const parser of CALENDAR_WORDS.get(word) ?? []) found.add(parser);
  // In OTHER_LANGUAGES' order, as the parsers' readings were before.
  return OTHER_LANGUAGES.flatMap(({ parser }) => (found.has(parser) ? [parser] : []));
}

export interface DateOptions {
  /** A day without a year or week is the next one (a deadline), not the nearest. */
  forward?: boolean;
  /** English only: for rules that read English text anyway. */
  englishOnly?: boolean;
}

/**
 * Dates and times, resolved against `reference` (when the item happened): "by Friday" is a day.
 * English in all its casual forms ("next Friday", "3pm tomorrow"), formal dates in other languages.
 */
export function datesIn(
  text: string,
  reference: Date,
  { forward = false, englishOnly = false }: DateOptions = {},
): Mention[] {
  const parsers = [chrono.casual, ...(englishOnly ? [] : otherLanguagesIn(text))];
  const out: Mention[] = [];
  for (const parser of parsers) {
    for (const result of parser.parse(text, reference, { forwardDate: forward })) {
      const at = result.start;
      if (Number.isNaN(at.date().getTime())) continue;
      const day = `${String(at.get('year')).padStart(4, '0')}-${pad(at.get('month'))}-${pad(at.get('day'))}`;
      // A time is local to the writer unless the text gives its zone: no zone is made up.
      const offset = at.isCertain('timezoneOffset') ? zone(at.get('timezoneOffset') ?? 0) : '';
      const value = at.isCertain('hour')
        ? `${day}T${pad(at.get('hour'), 0)}:${pad(at.get('minute'), 0)}${offset}`
        : day;
      // Parsers keep a leading preposition ("on 1 October", "am 3. Juni"); the span is the date.
      const lead = /^(?:on|at|by|am|le|el|il|op|em)\s+/i.exec(result.text)?.[0].length ?? 0;
      const written = result.text.slice(lead);
      out.push({
        kind: 'date',
        text: written,
        value,
        start: result.index + lead,
        end: result.index + result.text.length,
      });
    }
  }
  return out;
}

function pad(n: number | null, otherwise = 1): string {
  return String(n ?? otherwise).padStart(2, '0');
}

/** Minutes east of UTC as `+hh:mm`. */
function zone(minutes: number): string {
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60, 0)}`;
}

const STREET = String.raw`(?:Street|St\.?|Avenue|Ave\.?|Road|Rd\.?|Boulevard|Blvd\.?|Lane|Ln\.?|Drive|Dr\.?|Way|Court|Ct\.?|Place|Pl\.?|Square|Sq\.?|Parkway|Pkwy\.?)`;
const CAP = String.raw`[A-Z][\p{L}.'-]*`;
/** A town's name: capitalized words, no sentence punctuation. */
const TOWN = String.raw`\p{Lu}[\p{L}'-]*(?: \p{Lu}[\p{L}'-]*)?`;
/** US/Canada style: `1600 Amphitheatre Parkway, Mountain View, CA 94043`. */
const US_ADDRESS = new RegExp(
  String.raw`\b\d{1,6}(?: ${CAP})+ ${STREET}(?:,? (?:Suite|Ste\.?|Apt\.?|Unit|#) ?[\w-]+)?,?\s+${CAP}(?: ${CAP})*,? [A-Z]{2} \d{5}(?:-\d{4})?\b`,
  'gu',
);
/** Continental style: `Unter den Linden 77, 10117 Berlin`, `Hauptstraße 5a, 8001 Zürich`. */
const EU_ADDRESS = new RegExp(
  String.raw`(?<![\p{L}])${CAP}(?: [\p{L}.'-]+){0,3} \d{1,4}[a-z]?,?\s+(?:[A-Z]{1,2}-)?\d{4,5} ${TOWN}`,
  'gu',
);
/** UK style ending in a postcode: `10 Downing Street, London SW1A 2AA`. */
const UK_ADDRESS = new RegExp(
  String.raw`\b\d{1,4}(?: ${CAP})+ ${STREET},?\s+${CAP}(?: ${CAP})*,? [A-Z]{1,2}\d[A-Z\d]? \d[A-Z]{2}\b`,
  'gu',
);

/** Postal addresses in the three shapes above (a street line through the postal code and town). */
export function addressesIn(text: string): Mention[] {
  return [US_ADDRESS, EU_ADDRESS, UK_ADDRESS].flatMap((pattern) =>
    matches(text, pattern).map(({ text: address, start }) => ({
      kind: 'address' as const,
      text: address,
      value: address.replace(/\s+/g, ' '),
      start,
      end: start + address.length,
    })),
  );
}

/**
 * Every mention in the text, in order. Where two of one kind overlap (two date parsers, two
 * address shapes) the first and longest is kept; different kinds may overlap (a DOI inside a URL),
 * except a date inside a phone number.
 */
export function mentionsIn(text: string, reference: Date, region?: CountryCode): Mention[] {
  const all = [
    ...datesIn(text, reference),
    ...moneyIn(text),
    ...urlsIn(text),
    ...phonesIn(text, region),
    ...doisIn(text),
    ...arxivIdsIn(text),
    ...isbnsIn(text),
    ...addressesIn(text),
  ].sort((a, b) => a.start - b.start || b.end - a.end);
  const phones = all.filter((m) => m.kind === 'phone');
  const lastEnd = new Map<string, number>();
  const out: Mention[] = [];
  for (const mention of all) {
    if ((lastEnd.get(mention.kind) ?? -1) > mention.start) continue;
    // Digits of a phone number read as a date ("3-1234" in +81 3-1234-5678) are not one.
    if (mention.kind === 'date' && phones.some((p) => p.start <= mention.start && mention.end <= p.end)) continue;
    lastEnd.set(mention.kind, mention.end);
    out.push(mention);
  }
  return out;
}

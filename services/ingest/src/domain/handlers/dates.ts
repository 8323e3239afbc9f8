import { collapseWhitespace } from './text.js';

/**
 * Zone names mail clients wrote where RFC 5322 wants a numeric offset, beyond the few it allows
 * (UT, GMT and the North American ones, which the Date parser reads): the unambiguous ones seen
 * in archives. Any other name (IST, AST: several zones) is read as RFC 5322 §4.3 says, as -0000:
 * the wall-clock time, its zone unknown.
 */
const ZONES: Readonly<Record<string, string>> = {
  WET: '+0000',
  WEST: '+0100',
  BST: '+0100',
  CET: '+0100',
  MET: '+0100',
  MEZ: '+0100',
  CEST: '+0200',
  MEST: '+0200',
  MESZ: '+0200',
  EET: '+0200',
  EEST: '+0300',
  SAST: '+0200',
  MSK: '+0300',
  MSD: '+0400',
  WIB: '+0700',
  HKT: '+0800',
  SGT: '+0800',
  AWST: '+0800',
  JST: '+0900',
  KST: '+0900',
  ACST: '+0930',
  ACDT: '+1030',
  AEST: '+1000',
  AEDT: '+1100',
  NZST: '+1200',
  NZDT: '+1300',
  HST: '-1000',
  AKST: '-0900',
  AKDT: '-0800',
  ADT: '-0300',
  NDT: '-0230',
};

/** The zones the Date parser reads itself (RFC 5322's obsolete names), and ISO's `Z`. */
const KNOWN_ZONE = /^(UTC?|GMT|Z|[ECMP][SD]T)$/i;
/** A zone name after the time, with or without a numeric offset before it: `15:22:01 CEST`, `15:22:01 +0200 CEST`. */
const TRAILING_NAME = /(\d{1,2}:\d{2}(?::\d{2})?(?:\s*[AP]M)?)(\s+[+-]\d{2}:?\d{2})?\s+([A-Za-z]{1,5})$/i;
/**
 * Something that fixes the instant: a numeric offset, a zone name the parser reads, ISO's `Z`
 * right after the time, or an ISO date alone (which the parser reads as UTC midnight).
 */
const HAS_ZONE = /([+-]\d{2}:?\d{2}|\b(UTC?|GMT|[ECMP][SD]T)([+-]\d{1,2})?|\dZ|^\d{4}-\d{2}-\d{2})$/i;

/** An RFC 5322 date-time with its zone, at the start of a text: `Mon, 22 Oct 2001 13:06:22 -0700`. */
const LEADING_DATE =
  /^(?:[A-Za-z]{3},?\s+)?\d{1,2}\s+[A-Za-z]{3}\s+\d{2,4}\s+\d{1,2}:\d{2}(?::\d{2})?\s+(?:[+-]\d{4}|UTC?|GMT|[ECMP][SD]T)\b/i;

/**
 * A date as a mail header (Date, a Received stamp) or a document's metadata writes it, as ISO, or
 * null when it cannot be read. A named zone becomes its offset (`ZONES`), a zone-less date is read
 * as UTC (RFC 5322: unknown zone): never in the zone of the machine that happens to parse it, so
 * an item is dated alike on every host, a worker's included.
 */
export function writtenDate(value: string | null | undefined): string | null {
  if (!value?.trim()) return null;
  // Comments go first (`+0200 (CEST)`): the zone, if any, is then what ends the text.
  const text = collapseWhitespace(value.replace(/\([^)]*\)/g, ' '))
    // RFC 5322's obsolete syntax lets space (and comments) stand around a time's colons: `09 : 55 : 06`.
    .replace(/(\d)\s*:\s*(?=\d)/g, '$1:')
    // European mailers' day.month.year (`01.06.2009`), which Date reads as month.day, and their
    // dotted times after a year (`2009 10.00.00`).
    .replace(
      /(\b\d{4}\s+)(\d{1,2})\.(\d{2})(?:\.(\d{2}))?\b/,
      (_, year: string, h: string, m: string, sec?: string) => `${year}${h}:${m}${sec ? `:${sec}` : ''}`,
    )
    .replace(/\b(\d{1,2})\.(\d{1,2})\.(\d{4})\b/, '$3/$2/$1')
    .replace(/[,\s]+$/, '')
    .replace(TRAILING_NAME, (whole, time: string, offset: string | undefined, name: string) => {
      if (KNOWN_ZONE.test(name)) return whole;
      return `${time}${offset ?? ` ${ZONES[name.toUpperCase()] ?? '-0000'}`}`;
    });
  const parsed = new Date(text);
  if (Number.isNaN(parsed.getTime())) {
    // A whole date with its zone and more after it (Exchange's `… 13:06:22 -0700 (PDT) Mon, 22 Oct 2001 13:06:22 -0500` in the Enron PSTs): the first.
    const leading = LEADING_DATE.exec(text)?.[0];
    return leading && leading !== text ? writtenDate(leading) : null;
  }
  if (HAS_ZONE.test(text)) return parsed.toISOString();
  // Read in the host's zone: the same wall-clock time in UTC instead.
  return new Date(
    Date.UTC(
      parsed.getFullYear(),
      parsed.getMonth(),
      parsed.getDate(),
      parsed.getHours(),
      parsed.getMinutes(),
      parsed.getSeconds(),
      parsed.getMilliseconds(),
    ),
  ).toISOString();
}

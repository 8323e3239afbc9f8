/**
 * Spreadsheets keep dates as numbers (days since 1900, or 1904 on old Macs) and show them as dates
 * by the cell's number format. Read for search, a date cell is its date (`2020-01-01`), not the
 * 43831 the file holds. Shared by .xls (binary-office/excel.ts) and .xlsx (office.ts).
 */

/** Built-in number formats that show a date or a time ([MS-XLS] 2.4.126, ECMA-376 18.8.30). */
const BUILT_IN_DATES = new Set([
  14, 15, 16, 17, 18, 19, 20, 21, 22, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 45, 46, 47, 50, 51, 52, 53, 54, 55, 56,
  57, 58,
]);
/** Of those, the ones with no date part: a time of day or a duration. */
const BUILT_IN_TIMES = new Set([18, 19, 20, 21, 45, 46, 47]);

export type DateFormat = 'date' | 'time' | null;

/** Whether a number format shows a date, a time only, or neither, by its id and (custom) code. */
export function dateFormatOf(id: number, code: string | undefined): DateFormat {
  if (BUILT_IN_DATES.has(id)) return BUILT_IN_TIMES.has(id) ? 'time' : 'date';
  if (!code) return null;
  // Quoted text, escaped characters and [colour]/[$-locale] sections say nothing about dates.
  const bare = code.replace(/"[^"]*"|\\.|\[[^\]]*\]/g, '');
  if (/[yd]/i.test(bare)) return 'date';
  if (/[hs]/i.test(bare)) return 'time';
  return null;
}

const DAY_MS = 86_400_000;

/** A date serial as the cell shows it: `2020-01-01`, `2020-01-01 13:45`, or `13:45:30` for a time. */
export function dateText(serial: number, format: 'date' | 'time', date1904: boolean): string {
  // Excel's 1900 system counts a 29 February 1900 that never was (Lotus 1-2-3's bug): day 60.
  const epoch = date1904 ? Date.UTC(1904, 0, 1) : serial < 60 ? Date.UTC(1899, 11, 31) : Date.UTC(1899, 11, 30);
  const iso = new Date(epoch + Math.round((serial * DAY_MS) / 1000) * 1000).toISOString();
  const time = iso.slice(11, 19).replace(/:00$/, '');
  if (format === 'time') return time;
  return Number.isInteger(serial) ? iso.slice(0, 10) : `${iso.slice(0, 10)} ${time}`;
}

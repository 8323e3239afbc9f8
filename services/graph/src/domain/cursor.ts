import { MemexError, ULID_PATTERN } from '@memex/contracts';

/**
 * Where a page of a newest-first list ended: the last item's time (null when undated: those come
 * last) and id. Paging by time alone skips the items that share the boundary's time; by (time,
 * id) every item is on exactly one page.
 */
export interface Cursor {
  at: string | null;
  id: string;
}

const UNDATED = 'undated';

/** `<ISO time>|<id>`, or `undated|<id>`: readable, and opaque enough to pass back as is. */
export function encodeCursor(cursor: Cursor): string {
  return `${cursor.at ?? UNDATED}|${cursor.id}`;
}

export function decodeCursor(text: string): Cursor {
  const bar = text.indexOf('|');
  const at = text.slice(0, bar);
  const id = text.slice(bar + 1);
  const time = at === UNDATED ? null : new Date(at);
  if (bar < 1 || !new RegExp(ULID_PATTERN).test(id) || (time !== null && Number.isNaN(time.getTime()))) {
    throw new MemexError('invalid_params', `cursor: "${text}" is not a next_cursor this list gave`);
  }
  return { at: time ? time.toISOString() : null, id };
}

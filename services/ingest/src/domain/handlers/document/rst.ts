import type { RstFields } from '../handler.js';
import { collapseWhitespace } from '../text.js';
import type { FormatResult } from './format.js';

/** A section adornment: one repeated punctuation character (docutils' set), at least 2 long. */
const ADORNMENT = /^([!-/:-@[-`{-~])\1+\s*$/;

/**
 * reStructuredText, read for search: section titles (text underlined, optionally overlined, with a
 * punctuation line at least as long as the text) become headings, the first one the title; the
 * adornment lines, comments and directive markers are dropped, and inline markup (`**strong**`,
 * ``` ``literal`` ```, `` `text <url>`_ ``, `:role:`) is reduced to its text.
 */
export function parseRst(source: string): FormatResult<RstFields> {
  const lines = source
    .replace(/^\uFEFF/, '')
    .replace(/\r\n?/g, '\n')
    .split('\n');
  const headings: string[] = [];
  const kept: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const next = lines[i + 1] ?? '';
    const title = line.trim();
    const isTitle =
      title !== '' &&
      !ADORNMENT.test(line) &&
      ADORNMENT.test(next) &&
      next.trim().length >= title.length &&
      (!/^\s/.test(line) || ADORNMENT.test(lines[i - 1] ?? ''));
    if (isTitle) {
      headings.push(collapseWhitespace(title));
      kept.push(title);
      i++;
    } else if (ADORNMENT.test(line)) {
      // An overline (its title is handled on the next line) or a transition: no text.
    } else if (/^\.\.\s+(\S+::)?/.test(line)) {
      // A comment (`.. text`) or a directive (`.. image:: x`): keep only a directive's argument text.
      const directive = /^\.\.\s+[\w:-]+::\s*(.*)$/.exec(line);
      if (directive?.[1]) kept.push(directive[1]);
    } else kept.push(line);
  }
  const text = kept
    .join('\n')
    .replace(/`([^`<]+?)\s*<[^>]+>`__?/g, '$1')
    .replace(/:[\w:-]+:`([^`]+)`/g, '$1')
    .replace(/``([^`]+)``/g, '$1')
    .replace(/\*\*([^*]+)\*\*/g, '$1')
    .replace(/\*([^*\s][^*]*)\*/g, '$1')
    .replace(/`([^`]+)`_?_?/g, '$1')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return { title: headings[0] ?? null, text, occurredAt: null, fields: { format: 'rst', headings }, warnings: [] };
}

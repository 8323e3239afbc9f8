import { XMLParser } from 'fast-xml-parser';

/**
 * XML as the exports read it (Outlook for Mac's, Evernote's): attributes kept, without a prefix;
 * every value the text it is (no numbers guessed); the elements named in `lists` always arrays,
 * one of them or many. `trim`: values without the whitespace around them.
 */
export function xmlParser(lists: readonly string[], trim = false): XMLParser {
  return new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '',
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: trim,
    isArray: (name) => lists.includes(name),
  });
}

/** The text of a parsed element: itself, or its `#text` when it has attributes too; '' for none. */
export function elementText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value && '#text' in value)
    return String((value as Record<string, unknown>)['#text']);
  return '';
}

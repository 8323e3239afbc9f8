import { RejectedItem, type OfficeFields } from '../../handler.js';
import type { FormatResult } from '../format.js';
import { CompoundFile } from './compound.js';
import { readWorkbook } from './excel.js';
import { readSlides } from './powerpoint.js';
import { readWordText } from './word.js';

export type BinaryOfficeFormat = 'doc' | 'xls' | 'ppt';

const NAMES: Record<BinaryOfficeFormat, string> = {
  doc: 'Word document',
  xls: 'Excel workbook',
  ppt: 'PowerPoint presentation',
};

/**
 * Word, Excel and PowerPoint files as Office 97–2003 saved them (.doc, .xls, .ppt): the text,
 * cells or slides laid out as their OOXML counterparts' are (office.ts), with the title and date
 * of the file's summary information.
 */
export function parseBinaryOffice(bytes: Buffer, format: BinaryOfficeFormat): FormatResult<OfficeFields> {
  const file = CompoundFile.open(bytes, NAMES[format]);
  let read: { text: string; headings: string[] };
  try {
    read = readContent(file, format);
  } catch (error) {
    if (error instanceof RejectedItem) throw error;
    // A record or table pointing past its stream's end: the file is damaged, not the reader wrong.
    throw new RejectedItem(
      `not a readable ${NAMES[format]}: it is damaged (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  const { text, headings } = read;
  if (!text.trim()) throw new RejectedItem(`an empty ${NAMES[format]}: it holds no text`);
  const { title, created } = file.summary();
  return {
    title: title ?? (format === 'ppt' ? (headings[0] ?? null) : null),
    text: text.trim(),
    occurredAt: created ?? null,
    fields: { format, headings },
    warnings: [],
  };
}

function readContent(file: CompoundFile, format: BinaryOfficeFormat): { text: string; headings: string[] } {
  switch (format) {
    case 'doc':
      return { text: readWordText(file), headings: [] };
    case 'xls': {
      const { sheets } = readWorkbook(file);
      return {
        text: sheets
          .filter((sheet) => sheet.rows.length > 0)
          .map((sheet) => `${sheet.name}\n${sheet.rows.join('\n')}`)
          .join('\n\n'),
        headings: sheets.map((sheet) => sheet.name),
      };
    }
    case 'ppt': {
      const slides = readSlides(file);
      return {
        text: slides
          .map((slide) => slide.paragraphs.join('\n'))
          .filter(Boolean)
          .join('\n\n'),
        headings: slides.map((slide) => slide.title).filter(Boolean),
      };
    }
  }
}

/**
 * What an OLE compound file holds, by its streams: a Word, Excel or PowerPoint file, a
 * password-protected .docx/.xlsx/.pptx (Office encrypts the whole zip into an `EncryptedPackage`
 * stream), or null (an Outlook message, a Works file, anything else).
 */
export function binaryOfficeFormatOf(bytes: Buffer): BinaryOfficeFormat | 'encrypted' | null {
  let file: CompoundFile;
  try {
    file = CompoundFile.open(bytes, 'compound file');
  } catch {
    return null;
  }
  if (file.has('EncryptedPackage')) return 'encrypted';
  if (file.has('WordDocument')) return 'doc';
  if (file.has('Workbook') || file.has('Book')) return 'xls';
  if (file.has('PowerPoint Document')) return 'ppt';
  return null;
}

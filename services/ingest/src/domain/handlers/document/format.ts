import type { FormatFields } from '../handler.js';

/** What a format reader returns; the document handler adds identity, title precedence and the base meta. */
export interface FormatResult<F extends FormatFields> {
  /** The title the document gives itself (PDF Title, first H1, front matter), or null. */
  title: string | null;
  text: string;
  /** The date the document gives itself (ISO), or null. */
  occurredAt: string | null;
  fields: F;
  warnings: string[];
}

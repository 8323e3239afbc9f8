import type { SignatureBlock } from '@memex/contracts';
import { normalizeKey } from './keys.js';

/** How sure a signature's line is about its sender (they wrote it about themselves, but rules read it). */
export const SIGNATURE_CONFIDENCE = 0.9;

/** One fact a signature states about its sender, with the span it was read from. */
export interface SignatureFact {
  rel: 'works_at' | 'has_title' | 'has_phone';
  dst: { key: string; kind: string };
  /** The thing's name as written (an organization's, a title's). */
  name: string;
  quote: string;
  start: number;
  end: number;
}

/**
 * Seed §4.3: a signature's title, company and phones are facts about the sender's person —
 * `works_at org:<company>`, `has_title title:<title>`, `has_phone phone:<E.164>`. The name it
 * gives is the person's name (`nameOf`).
 */
export function signatureFacts(block: SignatureBlock): SignatureFact[] {
  const facts: SignatureFact[] = [];
  for (const f of block.fields) {
    const span = { quote: f.text, start: f.start, end: f.end };
    if (f.field === 'company')
      facts.push({
        rel: 'works_at',
        dst: { key: normalizeKey(`org:${f.value}`), kind: 'org' },
        name: f.value,
        ...span,
      });
    else if (f.field === 'title')
      facts.push({
        rel: 'has_title',
        dst: { key: normalizeKey(`title:${f.value}`), kind: 'title' },
        name: f.value,
        ...span,
      });
    else if (f.field === 'phone')
      facts.push({ rel: 'has_phone', dst: { key: `phone:${f.value}`, kind: 'phone' }, name: f.text, ...span });
  }
  return facts;
}

/** The name the signature gives its sender, if it gives one. */
export function nameOf(block: SignatureBlock): string | undefined {
  return block.fields.find((f) => f.field === 'name')?.value;
}

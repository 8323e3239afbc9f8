import type { EngineConfig } from './config.js';
import type { EngineNote } from './types.js';

const FNV_PRIME = 0x01000193;

function fnv1a(hash: number, text: string): number {
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), FNV_PRIME);
  return hash >>> 0;
}

/** A second, independent 32-bit hash (FNV-1a from another basis, then murmur3's finaliser). */
function fnvMixed(text: string): number {
  let h = fnv1a(0x5bd1e995, text);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

const hex = (x: number): string => x.toString(16).padStart(8, '0');

/**
 * The dirty flag: a cheap (one pass, no sorting, no vector maths beyond four
 * floats a note) order-independent digest of everything detection reads.
 * Equal fingerprints ⇒ detection would return the same signals, so the
 * service may skip it.
 *
 * Per note, two 32-bit hashes of (id, contentHash, updatedAt, tags, links,
 * front matter, title, createdAt, embedding length and first four
 * components — enough to notice a re-embedding by another model). They are
 * combined by sum and by xor (a pair of equal digests cancels in xor, not in
 * the sum), together with the note count, the latest updatedAt, and a hash of
 * the configuration (changing k must re-run detection).
 * Format: "v1:<count>:<max updatedAt ms>:<sums>:<xors>:<config>".
 */
export function corpusFingerprint(notes: readonly EngineNote[], cfg: EngineConfig): string {
  let sumA = 0;
  let sumB = 0;
  let xorA = 0;
  let xorB = 0;
  let maxUpdated = -Infinity;
  for (const note of notes) {
    const e = note.embedding;
    // Tags, links and front matter are normally covered by contentHash; hashing
    // them too keeps the flag correct for callers whose hash covers only the body.
    const digestInput = [
      note.id,
      note.contentHash,
      note.updatedAt.getTime(),
      note.createdAt.getTime(),
      note.title,
      note.tags.join('\u0001'),
      note.links.join('\u0001'),
      JSON.stringify(note.frontMatter),
      e.length,
      e[0],
      e[1],
      e[2],
      e[3],
    ].join('\u0000');
    const a = fnv1a(0x811c9dc5, digestInput);
    const b = fnvMixed(digestInput);
    sumA = (sumA + a) >>> 0;
    sumB = (sumB + b) >>> 0;
    xorA = (xorA ^ a) >>> 0;
    xorB = (xorB ^ b) >>> 0;
    maxUpdated = Math.max(maxUpdated, note.updatedAt.getTime());
  }
  const config = JSON.stringify(cfg);
  const configHash = hex(fnv1a(0x811c9dc5, config)) + hex(fnvMixed(config));
  const latest = notes.length > 0 ? String(maxUpdated) : '-';
  return `v1:${notes.length}:${latest}:${hex(sumA)}${hex(sumB)}:${hex(xorA)}${hex(xorB)}:${configHash}`;
}

import type { EngineConfig } from './config.js';
import type { EngineNote } from './types.js';

const FNV_PRIME = 0x01000193;
const floatBits = new Uint32Array(1);
const floatView = new Float32Array(floatBits.buffer);

/**
 * Two independent 32-bit FNV-1a lanes (different offset bases), fed field by
 * field without building strings: the fingerprint must stay cheap at 10⁵ notes.
 */
class Hasher {
  a = 0x811c9dc5;
  b = 0x5bd1e995;

  str(text: string): this {
    let { a, b } = this;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      a = Math.imul(a ^ c, FNV_PRIME);
      b = Math.imul(b ^ c, FNV_PRIME);
    }
    this.a = a;
    this.b = b;
    return this.sep();
  }

  /** An unsigned 32-bit integer, byte by byte. */
  u32(x: number): this {
    for (let shift = 0; shift < 32; shift += 8) {
      const c = (x >>> shift) & 0xff;
      this.a = Math.imul(this.a ^ c, FNV_PRIME);
      this.b = Math.imul(this.b ^ c, FNV_PRIME);
    }
    return this;
  }

  /** A millisecond timestamp (up to 2⁵³). */
  time(ms: number): this {
    return this.u32(ms % 0x100000000).u32(Math.floor(ms / 0x100000000));
  }

  f32(x: number): this {
    floatView[0] = x;
    return this.u32(floatBits[0]!);
  }

  /** Field separator, so that ("ab","c") and ("a","bc") differ. */
  sep(): this {
    return this.u32(0xffffffff);
  }

  /** Lane b through murmur3's finaliser, so the two lanes are not mere translates. */
  digest(): [number, number] {
    let h = this.b;
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    return [this.a >>> 0, (h ^ (h >>> 16)) >>> 0];
  }
}

const hex = (x: number): string => x.toString(16).padStart(8, '0');

/**
 * The dirty flag: a cheap, order-independent digest of everything detection
 * reads. Equal fingerprints ⇒ detection would return the same signals, so the
 * service may skip it.
 *
 * Per note, a 64-bit digest of id, contentHash (which must cover the text,
 * front matter, tags and links: any edit changes it), title and aliases (a
 * document's may come from its file name), createdAt, updatedAt, and the embedding's length
 * and first four components (enough to notice a re-embedding by another
 * model without reading whole vectors). Digests are combined by sum and by
 * xor (a pair of equal digests cancels in xor, not in the sum), with the note
 * count, the latest updatedAt and a hash of the configuration (changing k
 * must re-run detection).
 * Format: "v1:<count>:<max updatedAt ms>:<sums>:<xors>:<config>".
 */
export function corpusFingerprint(notes: readonly EngineNote[], cfg: EngineConfig): string {
  let sumA = 0;
  let sumB = 0;
  let xorA = 0;
  let xorB = 0;
  let maxUpdated = -Infinity;
  for (const note of notes) {
    const h = new Hasher().str(note.id).str(note.contentHash).str(note.title);
    for (const alias of note.aliases ?? []) h.str(alias);
    h.time(note.createdAt.getTime()).time(note.updatedAt.getTime());
    const e = note.embedding;
    h.u32(e.length);
    for (let i = 0; i < Math.min(4, e.length); i++) h.f32(e[i]!);
    const [a, b] = h.digest();
    sumA = (sumA + a) >>> 0;
    sumB = (sumB + b) >>> 0;
    xorA = (xorA ^ a) >>> 0;
    xorB = (xorB ^ b) >>> 0;
    maxUpdated = Math.max(maxUpdated, note.updatedAt.getTime());
  }
  const [ca, cb] = new Hasher().str(JSON.stringify(cfg)).digest();
  const latest = notes.length > 0 ? String(maxUpdated) : '-';
  return `v1:${notes.length}:${latest}:${hex(sumA)}${hex(sumB)}:${hex(xorA)}${hex(xorB)}:${hex(ca)}${hex(cb)}`;
}

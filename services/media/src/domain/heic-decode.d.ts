/** heic-decode ships no types: what renditions.ts' worker uses of it. */
declare module 'heic-decode' {
  /** The primary image of a HEIF file as RGBA pixels (libheif, compiled to WebAssembly). */
  export default function decode(input: {
    buffer: Uint8Array;
  }): Promise<{ width: number; height: number; data: Uint8ClampedArray }>;
}

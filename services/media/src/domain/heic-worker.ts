/** The HEIC decoder's worker (renditions.ts): decodes one HEIF image per task to RGBA pixels. */
import decode from 'heic-decode';

export interface DecodedHeic {
  width: number;
  height: number;
  /** RGBA, four bytes a pixel, rows top to bottom. */
  data: Uint8Array;
}

export default async function decodeHeic(bytes: Uint8Array): Promise<DecodedHeic> {
  const { width, height, data } = await decode({ buffer: bytes });
  return { width, height, data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
}

/** Writes safetensors files for tests, independently of the reader under test. */
import { writeFile } from 'node:fs/promises';

export interface TensorToWrite {
  name: string;
  dtype: string;
  shape: number[];
  data: ArrayBufferView;
}

export function encodeSafetensors(tensors: TensorToWrite[]): Uint8Array {
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const t of tensors) {
    header[t.name] = {
      dtype: t.dtype,
      shape: t.shape,
      data_offsets: [offset, offset + t.data.byteLength],
    };
    offset += t.data.byteLength;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8); // the format pads the header with spaces
  const headerBytes = Buffer.from(json, 'utf8');
  const out = Buffer.alloc(8 + headerBytes.length + offset);
  out.writeBigUInt64LE(BigInt(headerBytes.length), 0);
  headerBytes.copy(out, 8);
  let at = 8 + headerBytes.length;
  for (const t of tensors) {
    Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength).copy(out, at);
    at += t.data.byteLength;
  }
  return out;
}

export async function writeSafetensors(file: string, tensors: TensorToWrite[]): Promise<void> {
  await writeFile(file, encodeSafetensors(tensors));
}

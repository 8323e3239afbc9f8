/**
 * A reader for the safetensors format: an 8-byte little-endian header length, a JSON header
 * `{name: {dtype, shape, data_offsets: [begin, end]}, __metadata__?}`, then the raw
 * little-endian tensor bytes, offsets counted from the end of the header.
 */
import { endianness } from 'node:os';

export type SafetensorsDtype = 'F64' | 'F32' | 'F16' | 'BF16' | 'I64' | 'I32' | 'I16' | 'I8' | 'U8';

const DTYPE_BYTES: Record<SafetensorsDtype, number> = {
  F64: 8,
  F32: 4,
  F16: 2,
  BF16: 2,
  I64: 8,
  I32: 4,
  I16: 2,
  I8: 1,
  U8: 1,
};

export interface SafeTensor {
  name: string;
  dtype: SafetensorsDtype;
  shape: number[];
  /** The tensor's raw bytes (a view into the file buffer). */
  bytes: Uint8Array;
}

export class SafetensorsError extends Error {
  override name = 'SafetensorsError';
}

// Typed-array views below reinterpret little-endian bytes directly.
if (endianness() !== 'LE') throw new Error('@memex/embeddings assumes a little-endian CPU');

/** Parses all tensors of a safetensors file held in memory. `source` names it in errors. */
export function parseSafetensors(buf: Uint8Array, source: string): Map<string, SafeTensor> {
  const fail = (msg: string): never => {
    throw new SafetensorsError(`${source}: ${msg}`);
  };
  if (buf.byteLength < 8) fail(`too short for a safetensors file (${buf.byteLength} bytes)`);
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const headerLen = Number(view.getBigUint64(0, true));
  if (headerLen > buf.byteLength - 8) fail(`header length ${headerLen} exceeds file size ${buf.byteLength}`);
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder().decode(buf.subarray(8, 8 + headerLen)));
  } catch (err) {
    fail(`header is not JSON: ${(err as Error).message}`);
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) fail('header is not a JSON object');
  const dataStart = 8 + headerLen;
  const tensors = new Map<string, SafeTensor>();
  for (const [name, raw] of Object.entries(header as Record<string, unknown>)) {
    if (name === '__metadata__') continue;
    const info = raw as {
      dtype?: unknown;
      shape?: unknown;
      data_offsets?: unknown;
    };
    const dtype = info.dtype as SafetensorsDtype;
    if (typeof dtype !== 'string' || !(dtype in DTYPE_BYTES))
      fail(`tensor ${name}: unsupported dtype ${String(info.dtype)}`);
    const shape = info.shape;
    if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) fail(`tensor ${name}: bad shape`);
    const offsets = info.data_offsets;
    if (!Array.isArray(offsets) || offsets.length !== 2) fail(`tensor ${name}: bad data_offsets`);
    const [begin, end] = offsets as [number, number];
    const numel = (shape as number[]).reduce((a, b) => a * b, 1);
    if (end - begin !== numel * DTYPE_BYTES[dtype])
      fail(`tensor ${name}: ${end - begin} bytes do not hold shape [${String(shape)}] of ${dtype}`);
    if (begin < 0 || dataStart + end > buf.byteLength) fail(`tensor ${name}: data beyond end of file`);
    tensors.set(name, {
      name,
      dtype,
      shape: shape as number[],
      bytes: buf.subarray(dataStart + begin, dataStart + end),
    });
  }
  return tensors;
}

/**
 * Copies the bytes into a fresh, aligned buffer so typed arrays can view them
 * (the Uint8Array constructor copies; Buffer#slice would return a view).
 */
function aligned(bytes: Uint8Array): ArrayBuffer {
  return new Uint8Array(bytes).buffer;
}

/** IEEE 754 half precision to a JS number. */
export function f16ToF32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24; // subnormal
  if (exp === 0x1f) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/**
 * A float tensor as float32 values. I8 is accepted too, read as plain integers: Model2Vec's
 * int8 quantization scales the whole table by one factor, which normalization cancels.
 */
export function toFloat32(t: SafeTensor): Float32Array {
  switch (t.dtype) {
    case 'F32':
      return new Float32Array(aligned(t.bytes));
    case 'F64':
      return Float32Array.from(new Float64Array(aligned(t.bytes)));
    case 'F16':
      return Float32Array.from(new Uint16Array(aligned(t.bytes)), f16ToF32);
    case 'BF16': {
      // bfloat16 is the top half of a float32.
      const src = new Uint16Array(aligned(t.bytes));
      const bits = new Uint32Array(src.length);
      for (let i = 0; i < src.length; i++) bits[i] = src[i]! << 16;
      return new Float32Array(bits.buffer);
    }
    case 'I8':
      return Float32Array.from(new Int8Array(aligned(t.bytes)));
    default:
      throw new SafetensorsError(`tensor ${t.name}: expected a float tensor, got ${t.dtype}`);
  }
}

/** An integer tensor (token → row mappings) as int32 values. */
export function toInt32(t: SafeTensor): Int32Array {
  switch (t.dtype) {
    case 'I32':
      return new Int32Array(aligned(t.bytes));
    case 'I64': {
      const src = new BigInt64Array(aligned(t.bytes));
      const out = new Int32Array(src.length);
      for (let i = 0; i < src.length; i++) {
        const v = src[i]!;
        if (v < -2147483648n || v > 2147483647n)
          throw new SafetensorsError(`tensor ${t.name}: value ${v} out of int32 range`);
        out[i] = Number(v);
      }
      return out;
    }
    default:
      throw new SafetensorsError(`tensor ${t.name}: expected an integer tensor, got ${t.dtype}`);
  }
}

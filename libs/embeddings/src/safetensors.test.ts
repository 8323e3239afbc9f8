/// <reference lib="es2025.float16" />
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { f16ToF32, parseSafetensors, toFloat32, toInt32 } from './safetensors.js';
import { encodeSafetensors } from './test-support/safetensors-writer.js';

describe('parseSafetensors', () => {
  const values = [0, 1, -2.5, 0.1, 65504, 6.0e-8];

  it('reads F32, F64, F16, BF16, I8, I32 and I64 tensors', () => {
    const bf16 = new Uint16Array(new Uint32Array(new Float32Array(values).buffer).map((b) => b >>> 16));
    const buf = encodeSafetensors([
      {
        name: 'f32',
        dtype: 'F32',
        shape: [2, 3],
        data: new Float32Array(values),
      },
      { name: 'f64', dtype: 'F64', shape: [6], data: new Float64Array(values) },
      { name: 'f16', dtype: 'F16', shape: [6], data: new Float16Array(values) },
      { name: 'bf16', dtype: 'BF16', shape: [6], data: bf16 },
      {
        name: 'i8',
        dtype: 'I8',
        shape: [3],
        data: new Int8Array([-128, 0, 127]),
      },
      {
        name: 'i32',
        dtype: 'I32',
        shape: [3],
        data: new Int32Array([0, 7, 127]),
      },
      {
        name: 'i64',
        dtype: 'I64',
        shape: [3],
        data: new BigInt64Array([0n, 7n, 127n]),
      },
    ]);
    // Offset the file in its buffer to prove the reader copes with unaligned views.
    const shifted = new Uint8Array(buf.length + 1).fill(9);
    shifted.set(buf, 1);
    const t = parseSafetensors(shifted.subarray(1), 'mem');
    assert.deepEqual(t.get('f32')?.shape, [2, 3]);
    assert.deepEqual(toFloat32(t.get('f32')!), new Float32Array(values));
    assert.deepEqual(toFloat32(t.get('f64')!), new Float32Array(values));
    assert.deepEqual(toFloat32(t.get('f16')!), Float32Array.from(new Float16Array(values)));
    const bfRead = toFloat32(t.get('bf16')!);
    values.forEach((v, i) => assert.ok(Math.abs(bfRead[i]! - v) <= Math.abs(v) / 128, `bf16 ${v} → ${bfRead[i]}`));
    assert.deepEqual(toFloat32(t.get('i8')!), new Float32Array([-128, 0, 127]));
    assert.deepEqual(toInt32(t.get('i32')!), new Int32Array([0, 7, 127]));
    assert.deepEqual(toInt32(t.get('i64')!), new Int32Array([0, 7, 127]));
    assert.throws(() => toInt32(t.get('f32')!), /expected an integer tensor/);
    assert.throws(() => toFloat32(t.get('i32')!), /expected a float tensor/);
  });

  it('decodes half-precision specials', () => {
    assert.equal(f16ToF32(0x7c00), Infinity);
    assert.equal(f16ToF32(0xfc00), -Infinity);
    assert.ok(Number.isNaN(f16ToF32(0x7e00)));
    assert.equal(f16ToF32(0x0001), 2 ** -24);
    assert.equal(f16ToF32(0x3c00), 1);
  });

  it("rejects damaged files with the file's name and the problem", () => {
    const good = encodeSafetensors([{ name: 'x', dtype: 'F32', shape: [2], data: new Float32Array([1, 2]) }]);
    assert.throws(() => parseSafetensors(good.subarray(0, 4), 'a.st'), /a\.st: too short/);
    assert.throws(
      () => parseSafetensors(good.subarray(0, good.length - 4), 'b.st'),
      /b\.st: tensor x: data beyond end of file/,
    );
    const lying = new Uint8Array(good);
    new DataView(lying.buffer).setBigUint64(0, 1n << 40n, true);
    assert.throws(() => parseSafetensors(lying, 'c.st'), /c\.st: header length \d+ exceeds file size/);
    const wrongShape = encodeSafetensors([{ name: 'x', dtype: 'F32', shape: [3], data: new Float32Array([1, 2]) }]);
    assert.throws(
      () => parseSafetensors(wrongShape, 'd.st'),
      /d\.st: tensor x: 8 bytes do not hold shape \[3\] of F32/,
    );
    const oddType = encodeSafetensors([{ name: 'x', dtype: 'C64', shape: [1], data: new Float32Array([1, 2]) }]);
    assert.throws(() => parseSafetensors(oddType, 'e.st'), /unsupported dtype C64/);
  });
});

/// <reference lib="es2025.float16" />
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sharedRoot, sharedSkip } from '@memex/testing';
import { Model2VecProvider } from './model2vec.js';
import { dot, isZeroVector } from './provider.js';
import { writeSafetensors } from './test-support/safetensors-writer.js';

/** A real Model2Vec model, read in place from the shared folder (tests skip where it is absent). */
const FIXTURE = path.join(sharedRoot, 'models/model2vec-test-fixture');
const skip = sharedSkip('models/model2vec-test-fixture');

/** The fixture's tensors, read here with plain Buffer calls rather than the library's reader. */
async function rawFixtureTensors() {
  const buf = await readFile(path.join(FIXTURE, 'model.safetensors'));
  const headerLen = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.toString('utf8', 8, 8 + headerLen)) as Record<
    string,
    { data_offsets: [number, number] }
  >;
  const at = (name: string) => 8 + headerLen + header[name]!.data_offsets[0];
  const rows = 128;
  const dims = 64;
  const vocab = 29524;
  const embeddings = Array.from({ length: rows * dims }, (_, i) => buf.readFloatLE(at('embeddings') + 4 * i));
  const mapping = Array.from({ length: vocab }, (_, i) => buf.readInt32LE(at('mapping') + 4 * i));
  const weights = Array.from({ length: vocab }, (_, i) => buf.readDoubleLE(at('weights') + 8 * i));
  return { dims, vocab, embeddings, mapping, weights };
}

/** Token id of a Unigram piece, looked up in tokenizer.json directly. */
async function pieceIds(pieces: string[]): Promise<number[]> {
  const json = JSON.parse(await readFile(path.join(FIXTURE, 'tokenizer.json'), 'utf8')) as {
    model: { vocab: [string, number][] };
  };
  return pieces.map((p) => {
    const id = json.model.vocab.findIndex(([piece]) => piece === p);
    assert.ok(id >= 0, `piece ${p} in the fixture's vocabulary`);
    return id;
  });
}

describe('Model2VecProvider on the vocabulary-quantized fixture', { skip }, () => {
  let m2v: Model2VecProvider;
  let raw: Awaited<ReturnType<typeof rawFixtureTensors>>;
  before(async () => {
    m2v = await Model2VecProvider.load(FIXTURE, { name: 'test-model' });
    raw = await rawFixtureTensors();
  });

  it("has 64 dims and a space named after the weights' hash", () => {
    assert.equal(m2v.dims, 64);
    assert.match(m2v.space, /^model2vec:test-model@[0-9a-f]{8}$/);
    const d = m2v.describe();
    assert.equal(d.kind, 'model2vec');
    assert.equal(d.details.vocabularyQuantized, true);
    assert.equal(d.details.configNormalize, true);
  });

  it('tokenizes without special tokens and drops unknown tokens', async () => {
    assert.deepEqual(m2v.tokenIds('Hello, World'), await pieceIds(['▁hello', '▁,', '▁world']));
    assert.deepEqual(m2v.tokenIds('hello ☃'), await pieceIds(['▁hello'])); // ☃ is [UNK]
  });

  it('equals the mean of mapped, weighted token rows computed independently', async () => {
    for (const text of ['hello world', 'The car broke down on the highway!', 'kindly forward the bill']) {
      const ids = m2v.tokenIds(text);
      assert.ok(ids.length > 0);
      const expected = new Array<number>(raw.dims).fill(0);
      for (const id of ids)
        for (let d = 0; d < raw.dims; d++)
          expected[d]! += raw.weights[id]! * raw.embeddings[raw.mapping[id]! * raw.dims + d]!;
      const norm = Math.hypot(...expected);
      const [got] = await m2v.embed([text]);
      assert.ok(got);
      for (let d = 0; d < raw.dims; d++) assert.ok(Math.abs(got[d]! - expected[d]! / norm) < 1e-5, `${text}: dim ${d}`);
    }
  });

  it('is deterministic and normalized; equal texts give equal vectors, different texts differ', async () => {
    const texts = ['the cat sat on the mat', 'the cat sat on the mat', 'quarterly earnings report'];
    const [a, b, c] = await m2v.embed(texts);
    const [again] = await m2v.embed([texts[0]!]);
    assert.ok(a && b && c && again);
    assert.deepEqual(a, b);
    assert.deepEqual(a, again);
    assert.ok(Math.abs(dot(a, a) - 1) < 1e-5);
    assert.ok(dot(a, c) < 0.99);
  });

  it('gives the zero vector for empty or all-unknown text', async () => {
    const [empty, unknown] = await m2v.embed(['', '☃ ☃']);
    assert.ok(empty && unknown && isZeroVector(empty) && isZeroVector(unknown));
  });

  it('embeds more texts than one batch, in order', async () => {
    const small = await Model2VecProvider.load(FIXTURE, { batchSize: 3 });
    const texts = Array.from({ length: 10 }, (_, i) => `document number ${i} about topic ${i % 3}`);
    const batched = await small.embed(texts);
    assert.deepEqual(batched, await Promise.all(texts.map(async (t) => (await m2v.embed([t]))[0])));
  });

  it('truncates to maxTokens', async () => {
    const short = await Model2VecProvider.load(FIXTURE, { maxTokens: 2 });
    assert.deepEqual(await short.embed(['hello world and more words']), await m2v.embed(['hello world']));
  });
});

describe('Model2VecProvider on other layouts', { skip }, () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'm2v-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads a plain F16 table (no mapping/weights) to the same vectors within half precision', async () => {
    const raw = await rawFixtureTensors();
    // One row per token: what the quantized layout expands to.
    const table = new Float16Array(raw.vocab * raw.dims);
    for (let t = 0; t < raw.vocab; t++)
      for (let d = 0; d < raw.dims; d++)
        table[t * raw.dims + d] = raw.weights[t]! * raw.embeddings[raw.mapping[t]! * raw.dims + d]!;
    const f16dir = path.join(dir, 'f16');
    await cp(FIXTURE, f16dir, { recursive: true });
    await writeSafetensors(path.join(f16dir, 'model.safetensors'), [
      {
        name: 'embeddings',
        dtype: 'F16',
        shape: [raw.vocab, raw.dims],
        data: table,
      },
    ]);
    const f16 = await Model2VecProvider.load(f16dir);
    const quantized = await Model2VecProvider.load(FIXTURE);
    assert.equal(f16.describe().details.vocabularyQuantized, false);
    assert.match(f16.space, /^model2vec:f16@/);
    assert.notEqual(f16.space.split('@')[1], quantized.space.split('@')[1]);
    const texts = ['hello world', 'the quick brown fox jumps'];
    const [a, b] = await f16.embed(texts);
    const [qa, qb] = await quantized.embed(texts);
    assert.ok(a && b && qa && qb);
    assert.ok(dot(a, qa) > 0.999 && dot(b, qb) > 0.999);
  });

  it('names what is wrong with a bad folder', async () => {
    await assert.rejects(Model2VecProvider.load(path.join(dir, 'nope')), /Model2Vec model folder not found: .*nope/);
    const noWeights = path.join(dir, 'no-weights');
    await cp(FIXTURE, noWeights, { recursive: true });
    await rm(path.join(noWeights, 'model.safetensors'));
    await assert.rejects(Model2VecProvider.load(noWeights), /has no model\.safetensors/);

    const wrongTensor = path.join(dir, 'wrong-tensor');
    await cp(FIXTURE, wrongTensor, { recursive: true });
    await writeSafetensors(path.join(wrongTensor, 'model.safetensors'), [
      {
        name: 'something',
        dtype: 'F32',
        shape: [2, 2],
        data: new Float32Array(4),
      },
    ]);
    await assert.rejects(
      Model2VecProvider.load(wrongTensor),
      /model\.safetensors: no embedding tensor .*found something/,
    );

    await writeSafetensors(path.join(wrongTensor, 'model.safetensors'), [
      {
        name: 'embeddings',
        dtype: 'F32',
        shape: [10, 2],
        data: new Float32Array(20),
      },
    ]);
    await assert.rejects(Model2VecProvider.load(wrongTensor), /config\.json hidden_dim 64 but tensor has 2 dims/);
    await writeSafetensors(path.join(wrongTensor, 'model.safetensors'), [
      {
        name: 'embeddings',
        dtype: 'F32',
        shape: [10, 64],
        data: new Float32Array(640),
      },
    ]);
    await assert.rejects(Model2VecProvider.load(wrongTensor), /10 embedding rows for 29524 token ids/);

    await writeFile(path.join(wrongTensor, 'tokenizer.json'), '{not json');
    await assert.rejects(Model2VecProvider.load(wrongTensor), /tokenizer\.json is not valid JSON/);
  });
});

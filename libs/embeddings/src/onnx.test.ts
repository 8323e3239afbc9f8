import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { OnnxSentenceProvider } from './onnx.js';
import { tokenId, VOCAB, writeOnnxModelDir } from './test-support/onnx-fixture.js';
import type { OnnxGraph } from './test-support/onnx-writer.js';

const id = tokenId;
const CLS = id('[CLS]');
const SEP = id('[SEP]');
const DIM = 8;

/** Deterministic, distinct rows. */
const table = (rows: number, seed: number) =>
  Float32Array.from({ length: rows * DIM }, (_, i) => Math.sin(seed + i * 1.7) * (1 + (i % 5)));
const WORDS = table(VOCAB.length, 1);
const TYPES = table(2, 100);
const MASKS = table(2, 200);
const row = (t: Float32Array, r: number) => Array.from(t.subarray(r * DIM, (r + 1) * DIM));

const ids2d = (name: string) => ({
  name,
  type: 'int64' as const,
  shape: ['batch', 'sequence'],
});

/** BERT-like toy: state[t] = WORDS[input_ids[t]] + TYPES[token_type_ids[t]] + MASKS[attention_mask[t]]. */
const bertLike: OnnxGraph = {
  inputs: [ids2d('input_ids'), ids2d('attention_mask'), ids2d('token_type_ids')],
  outputs: [
    {
      name: 'last_hidden_state',
      type: 'float',
      shape: ['batch', 'sequence', DIM],
    },
  ],
  initializers: [
    { name: 'words', dims: [VOCAB.length, DIM], values: WORDS },
    { name: 'types', dims: [2, DIM], values: TYPES },
    { name: 'masks', dims: [2, DIM], values: MASKS },
  ],
  nodes: [
    { op: 'Gather', inputs: ['words', 'input_ids'], outputs: ['w'] },
    { op: 'Gather', inputs: ['types', 'token_type_ids'], outputs: ['t'] },
    { op: 'Gather', inputs: ['masks', 'attention_mask'], outputs: ['m'] },
    { op: 'Add', inputs: ['w', 't'], outputs: ['wt'] },
    { op: 'Add', inputs: ['wt', 'm'], outputs: ['last_hidden_state'] },
  ],
};

/** The same without token types (DistilBERT-like). */
const noTypes: OnnxGraph = {
  ...bertLike,
  inputs: [ids2d('input_ids'), ids2d('attention_mask')],
  initializers: bertLike.initializers.filter((i) => i.name !== 'types'),
  nodes: [
    { op: 'Gather', inputs: ['words', 'input_ids'], outputs: ['w'] },
    { op: 'Gather', inputs: ['masks', 'attention_mask'], outputs: ['m'] },
    { op: 'Add', inputs: ['w', 'm'], outputs: ['last_hidden_state'] },
  ],
};

/** Pools inside the graph and outputs `sentence_embedding` (mean over every position). */
const pooledInModel: OnnxGraph = {
  inputs: [ids2d('input_ids'), ids2d('attention_mask')],
  outputs: [{ name: 'sentence_embedding', type: 'float', shape: ['batch', DIM] }],
  initializers: [{ name: 'words', dims: [VOCAB.length, DIM], values: WORDS }],
  nodes: [
    { op: 'Gather', inputs: ['words', 'input_ids'], outputs: ['w'] },
    {
      op: 'ReduceMean',
      inputs: ['w'],
      outputs: ['sentence_embedding'],
      attributes: { axes: [1], keepdims: 0 },
    },
  ],
};

/** The reference computation, in plain JS: pool the rows of `tokens` per `state`, normalize. */
function expected(tokens: number[], state: (tokenId: number) => number[], pool: 'mean' | 'cls' = 'mean'): number[] {
  const sum = new Array<number>(DIM).fill(0);
  for (const t of pool === 'cls' ? tokens.slice(0, 1) : tokens)
    state(t).forEach((x, d) => (sum[d]! += x / tokens.length));
  const norm = Math.hypot(...sum);
  return sum.map((x) => x / norm);
}
const bertState = (t: number) => row(WORDS, t).map((x, d) => x + row(TYPES, 0)[d]! + row(MASKS, 1)[d]!);
const noTypeState = (t: number) => row(WORDS, t).map((x, d) => x + row(MASKS, 1)[d]!);

function assertClose(actual: Float32Array | undefined, wanted: number[], label: string) {
  assert.ok(actual, label);
  assert.equal(actual.length, wanted.length, label);
  wanted.forEach((x, d) => assert.ok(Math.abs(actual[d]! - x) < 1e-5, `${label}: dim ${d} ${actual[d]} vs ${x}`));
}

describe('OnnxSentenceProvider', () => {
  let root: string;
  const providers: OnnxSentenceProvider[] = [];

  const modelDir = (name: string, model: OnnxGraph | Uint8Array, extra: Record<string, unknown> = {}) =>
    writeOnnxModelDir(path.join(root, name), model, extra);
  async function load(...args: Parameters<typeof OnnxSentenceProvider.load>) {
    const p = await OnnxSentenceProvider.load(...args);
    providers.push(p);
    return p;
  }

  before(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'onnx-'));
  });
  after(async () => {
    await Promise.all(providers.map((p) => p.close()));
    await rm(root, { recursive: true, force: true });
  });

  it("tokenizes with [CLS]/[SEP] and mean-pools the model's token states like the plain-JS reference", async () => {
    const p = await load(await modelDir('bert-like', bertLike), {
      batchSize: 2,
    });
    assert.equal(p.dims, DIM);
    assert.match(p.space, /^onnx:bert-like@[0-9a-f]{8}$/);
    assert.deepEqual(p.encode('Hello world').ids, [CLS, id('hello'), id('world'), SEP]);
    assert.deepEqual(p.encode('playing').ids, [CLS, id('play'), id('##ing'), SEP]);
    // Different lengths in one call: padding, masking, batching and reordering must not leak.
    const cases: Array<[string, string[]]> = [
      ['the quick fox', ['the', 'quick', 'fox']],
      ['hello', ['hello']],
      ['The car broke down, playing!', ['the', 'car', 'broke', 'down', '[UNK]', 'play', '##ing', '[UNK]']],
      ['hello world', ['hello', 'world']],
      ['zebra', ['[UNK]']],
    ];
    const got = await p.embed(cases.map(([text]) => text));
    cases.forEach(([text, tokens], i) => assertClose(got[i], expected([CLS, ...tokens.map(id), SEP], bertState), text));
    assert.deepEqual((await p.embed(['the quick fox']))[0], got[0]);
  });

  it('feeds only the inputs the model declares', async () => {
    const p = await load(await modelDir('no-types', noTypes));
    assert.equal(p.describe().details.inputs, 'input_ids,attention_mask');
    // This machine's onnxruntime-node has no CUDA libraries: the CPU runs, and the provider says so.
    assert.equal(p.describe().details.executionProvider, 'cpu');
    const [v] = await p.embed(['hello world']);
    assertClose(v, expected([CLS, id('hello'), id('world'), SEP], noTypeState), 'no token types');
  });

  it('truncates to max_seq_length from sentence_bert_config.json, keeping [SEP]', async () => {
    const p = await load(
      await modelDir('short', bertLike, {
        'sentence_bert_config.json': {
          max_seq_length: 4,
          do_lower_case: false,
        },
      }),
    );
    assert.equal(p.describe().details.maxTokens, 4);
    assert.deepEqual(p.encode('hello world the car broke').ids, [CLS, id('hello'), id('world'), SEP]);
    const [v] = await p.embed(['hello world the car broke']);
    assertClose(v, expected([CLS, id('hello'), id('world'), SEP], bertState), 'truncated');
  });

  it('uses CLS pooling when 1_Pooling/config.json asks for it', async () => {
    const p = await load(
      await modelDir('cls', bertLike, {
        '1_Pooling/config.json': {
          word_embedding_dimension: DIM,
          pooling_mode_cls_token: true,
          pooling_mode_mean_tokens: false,
        },
      }),
    );
    assert.equal(p.describe().details.pooling, 'cls');
    const [a] = await p.embed(['hello world']);
    assertClose(a, expected([CLS], bertState, 'cls'), 'cls');
  });

  it("takes a model's own sentence_embedding output as is", async () => {
    const p = await load(await modelDir('pooled', pooledInModel));
    assert.equal(p.describe().details.output, 'sentence_embedding');
    const [v] = await p.embed(['quick fox']);
    assertClose(
      v,
      expected([CLS, id('quick'), id('fox'), SEP], (t) => row(WORDS, t)),
      'pooled',
    );
  });

  it('names what is wrong with a bad model folder', async () => {
    const missing = await modelDir('missing', bertLike);
    await rm(path.join(missing, 'model.onnx'));
    await assert.rejects(OnnxSentenceProvider.load(missing), /ONNX model folder .*missing has no model\.onnx/);

    const garbage = await modelDir('garbage', new TextEncoder().encode('not a model'));
    await assert.rejects(OnnxSentenceProvider.load(garbage), /garbage\/model\.onnx cannot be loaded by onnxruntime/);

    const extraInput = await modelDir('position-ids', {
      ...noTypes,
      inputs: [...noTypes.inputs, ids2d('position_ids')],
    });
    await assert.rejects(
      OnnxSentenceProvider.load(extraInput),
      /has inputs \[input_ids, attention_mask, position_ids\]/,
    );

    const wrongOutput = await modelDir('int-output', {
      ...noTypes,
      outputs: [{ name: 'ids_out', type: 'int64', shape: ['batch', 'sequence'] }],
      nodes: [{ op: 'Identity', inputs: ['input_ids'], outputs: ['ids_out'] }],
      initializers: [],
    });
    await assert.rejects(
      OnnxSentenceProvider.load(wrongOutput),
      /int-output\/model\.onnx failed a test run: output ids_out is int64, expected float32 or float16/,
    );

    const maxPool = await modelDir('max-pool', bertLike, {
      '1_Pooling/config.json': { pooling_mode_max_tokens: true },
    });
    await assert.rejects(
      OnnxSentenceProvider.load(maxPool),
      /1_Pooling\/config\.json: pooling pooling_mode_max_tokens is not supported/,
    );
  });
});

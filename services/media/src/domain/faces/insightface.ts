import fs from 'node:fs';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { withOnnxProvider } from '@memex/embeddings';
import { normalized, type DetectedFace, type FaceModel, type RgbImage } from './face-model.js';

/** SCRFD's square input side (Immich and InsightFace run it at 640). */
const DETECTION_SIDE = 640;
/** Faces below this detection score are dropped (InsightFace's default). */
const DETECTION_THRESHOLD = 0.5;
/** Boxes overlapping more than this are one face (InsightFace's NMS threshold). */
const NMS_IOU = 0.4;
/** ArcFace's aligned input side and where the five landmarks sit in it (InsightFace's arcface_dst). */
const ALIGNED_SIDE = 112;
const ARCFACE_LANDMARKS: ReadonlyArray<readonly [number, number]> = [
  [38.2946, 51.6963],
  [73.5318, 51.5014],
  [56.0252, 71.7366],
  [41.5493, 92.3655],
  [70.7299, 92.2041],
];

export interface ScrfdFace {
  box: [number, number, number, number];
  score: number;
  /** Eyes, nose, mouth corners (x, y) in input pixels. */
  landmarks: Array<[number, number]>;
}

/**
 * SCRFD's outputs decoded (InsightFace's `SCRFD.forward` + NMS): per stride a score, a box as
 * distances from its anchor centre and five landmarks as offsets, all in strides. 9 outputs are
 * strides 8/16/32 with two anchors each (scores, then boxes, then landmarks); 15 add 64/128 with one.
 * `outputs` are flat, in the model's output order; coordinates come back in input pixels.
 */
export function decodeScrfd(outputs: Float32Array[], inputSide: number, threshold = DETECTION_THRESHOLD): ScrfdFace[] {
  const levels =
    outputs.length === 9 || outputs.length === 6 ? 3 : outputs.length === 15 || outputs.length === 10 ? 5 : 0;
  if (levels === 0) throw new Error(`an SCRFD model has 6, 9, 10 or 15 outputs; this one has ${outputs.length}`);
  const strides = levels === 3 ? [8, 16, 32] : [8, 16, 32, 64, 128];
  const anchors = levels === 3 ? 2 : 1;
  const withLandmarks = outputs.length === levels * 3;
  const found: ScrfdFace[] = [];
  strides.forEach((stride, level) => {
    const scores = outputs[level]!;
    const boxes = outputs[level + levels]!;
    const marks = withLandmarks ? outputs[level + 2 * levels]! : null;
    const across = Math.ceil(inputSide / stride);
    for (let i = 0; i < scores.length; i++) {
      const score = scores[i]!;
      if (score < threshold) continue;
      const cell = Math.floor(i / anchors);
      const cx = (cell % across) * stride;
      const cy = Math.floor(cell / across) * stride;
      const x1 = cx - boxes[i * 4]! * stride;
      const y1 = cy - boxes[i * 4 + 1]! * stride;
      const x2 = cx + boxes[i * 4 + 2]! * stride;
      const y2 = cy + boxes[i * 4 + 3]! * stride;
      const landmarks: Array<[number, number]> = [];
      for (let k = 0; marks && k < 5; k++)
        landmarks.push([cx + marks[i * 10 + k * 2]! * stride, cy + marks[i * 10 + k * 2 + 1]! * stride]);
      found.push({ box: [x1, y1, x2 - x1, y2 - y1], score, landmarks });
    }
  });
  return nonMaximumSuppression(found, NMS_IOU);
}

function iou(a: ScrfdFace['box'], b: ScrfdFace['box']): number {
  const w = Math.min(a[0] + a[2], b[0] + b[2]) - Math.max(a[0], b[0]);
  const h = Math.min(a[1] + a[3], b[1] + b[3]) - Math.max(a[1], b[1]);
  if (w <= 0 || h <= 0) return 0;
  const overlap = w * h;
  return overlap / (a[2] * a[3] + b[2] * b[3] - overlap);
}

function nonMaximumSuppression(faces: ScrfdFace[], threshold: number): ScrfdFace[] {
  const kept: ScrfdFace[] = [];
  for (const face of [...faces].sort((a, b) => b.score - a.score))
    if (kept.every((k) => iou(k.box, face.box) <= threshold)) kept.push(face);
  return kept;
}

/** The similarity (scale, rotation, shift) taking `from` onto `to` by least squares: [a, b, tx, ty] for x' = a·x − b·y + tx, y' = b·x + a·y + ty. */
export function similarityTransform(
  from: ReadonlyArray<readonly [number, number]>,
  to: ReadonlyArray<readonly [number, number]>,
): [number, number, number, number] {
  const n = from.length;
  const mean = (points: ReadonlyArray<readonly [number, number]>, k: 0 | 1) => points.reduce((s, p) => s + p[k], 0) / n;
  const [fx, fy, tx, ty] = [mean(from, 0), mean(from, 1), mean(to, 0), mean(to, 1)];
  let dot = 0;
  let cross = 0;
  let norm = 0;
  for (let i = 0; i < n; i++) {
    const [sx, sy] = [from[i]![0] - fx, from[i]![1] - fy];
    const [dx, dy] = [to[i]![0] - tx, to[i]![1] - ty];
    dot += sx * dx + sy * dy;
    cross += sx * dy - sy * dx;
    norm += sx * sx + sy * sy;
  }
  const a = dot / norm;
  const b = cross / norm;
  return [a, b, tx - (a * fx - b * fy), ty - (b * fx + a * fy)];
}

/**
 * The face cut out upright at ArcFace's 112×112 with its landmarks where ArcFace expects them
 * (bilinear sampling through the inverse transform), as the NCHW float input, (v − 127.5) / 127.5.
 */
export function alignedFace(image: RgbImage, landmarks: Array<[number, number]>): Float32Array {
  const [a, b, tx, ty] = similarityTransform(landmarks, ARCFACE_LANDMARKS);
  const det = a * a + b * b;
  const plane = ALIGNED_SIDE * ALIGNED_SIDE;
  const input = new Float32Array(3 * plane);
  for (let v = 0; v < ALIGNED_SIDE; v++) {
    for (let u = 0; u < ALIGNED_SIDE; u++) {
      // Inverse of the similarity: the source pixel this output pixel shows.
      const x = (a * (u - tx) + b * (v - ty)) / det;
      const y = (-b * (u - tx) + a * (v - ty)) / det;
      const x0 = Math.floor(x);
      const y0 = Math.floor(y);
      for (let c = 0; c < 3; c++) {
        let value = 0;
        for (const [dx, dy, w] of [
          [0, 0, (1 - (x - x0)) * (1 - (y - y0))],
          [1, 0, (x - x0) * (1 - (y - y0))],
          [0, 1, (1 - (x - x0)) * (y - y0)],
          [1, 1, (x - x0) * (y - y0)],
        ] as const) {
          const px = x0 + dx;
          const py = y0 + dy;
          if (px >= 0 && py >= 0 && px < image.width && py < image.height)
            value += w * image.data[(py * image.width + px) * 3 + c]!;
        }
        input[c * plane + v * ALIGNED_SIDE + u] = (value - 127.5) / 127.5;
      }
    }
  }
  return input;
}

/** The image scaled into SCRFD's square input (top-left, the rest black), NCHW, (v − 127.5) / 128, and the scale used. */
function detectionInput(image: RgbImage): { input: Float32Array; scale: number } {
  const scale = Math.min(DETECTION_SIDE / image.width, DETECTION_SIDE / image.height);
  const plane = DETECTION_SIDE * DETECTION_SIDE;
  const input = new Float32Array(3 * plane).fill(-127.5 / 128);
  const width = Math.round(image.width * scale);
  const height = Math.round(image.height * scale);
  for (let y = 0; y < height; y++) {
    const sy = Math.min(image.height - 1, Math.floor(y / scale));
    for (let x = 0; x < width; x++) {
      const sx = Math.min(image.width - 1, Math.floor(x / scale));
      for (let c = 0; c < 3; c++)
        input[c * plane + y * DETECTION_SIDE + x] = (image.data[(sy * image.width + sx) * 3 + c]! - 127.5) / 128;
    }
  }
  return { input, scale };
}

/**
 * A user's face models in the InsightFace layout Immich uses (`detection/model.onnx`, an SCRFD
 * detector, and `recognition/model.onnx`, an ArcFace embedder), on ONNX Runtime with CUDA where it
 * loads. Named after the folder (`insightface:buffalo_l`), so its faces cluster apart from others.
 */
export class InsightFaceModel implements FaceModel {
  private constructor(
    readonly name: string,
    readonly dims: number,
    readonly provider: string,
    private readonly detector: ort.InferenceSession,
    private readonly recognizer: ort.InferenceSession,
  ) {}

  static async load(folder: string): Promise<InsightFaceModel> {
    const files = ['detection/model.onnx', 'recognition/model.onnx'].map((file) => path.join(folder, file));
    for (const file of files)
      if (!fs.existsSync(file))
        throw new Error(`the face model folder ${folder} has no ${path.relative(folder, file)}`);
    const { value, provider } = await withOnnxProvider((options) =>
      Promise.all(files.map((file) => ort.InferenceSession.create(file, options))),
    );
    const [detector, recognizer] = value;
    const dims = recognizer!.outputMetadata[0];
    const width = dims && 'shape' in dims && dims.isTensor ? dims.shape[dims.shape.length - 1] : undefined;
    return new InsightFaceModel(
      `insightface:${path.basename(path.resolve(folder))}`,
      typeof width === 'number' ? width : 512,
      provider,
      detector!,
      recognizer!,
    );
  }

  async detect(image: RgbImage): Promise<DetectedFace[]> {
    const { input, scale } = detectionInput(image);
    const detected = await this.detector.run({
      [this.detector.inputNames[0]!]: new ort.Tensor('float32', input, [1, 3, DETECTION_SIDE, DETECTION_SIDE]),
    });
    const outputs = this.detector.outputNames.map((name) => detected[name]!.data as Float32Array);
    const faces: DetectedFace[] = [];
    for (const face of decodeScrfd(outputs, DETECTION_SIDE)) {
      if (face.landmarks.length < 5) continue;
      const landmarks = face.landmarks.map(([x, y]) => [x / scale, y / scale] as [number, number]);
      const embedded = await this.recognizer.run({
        [this.recognizer.inputNames[0]!]: new ort.Tensor('float32', alignedFace(image, landmarks), [
          1,
          3,
          ALIGNED_SIDE,
          ALIGNED_SIDE,
        ]),
      });
      faces.push({
        box: face.box.map((v) => v / scale) as DetectedFace['box'],
        score: face.score,
        embedding: normalized(embedded[this.recognizer.outputNames[0]!]!.data as Float32Array),
      });
    }
    return faces;
  }

  async close(): Promise<void> {
    await this.detector.release();
    await this.recognizer.release();
  }
}

/** An image's pixels as the face models read them: upright, 8-bit RGB, row by row. */
export interface RgbImage {
  data: Buffer;
  width: number;
  height: number;
}

/** A face a model found: its box in pixels of the image it was given, and its embedding. */
export interface DetectedFace {
  /** left, top, width, height in pixels. */
  box: [number, number, number, number];
  score: number;
  /** Unit length, so the cosine distance of two faces is 1 − their dot product. */
  embedding: Float32Array;
}

/**
 * A face detector and embedder behind one interface: the npm-shipped default (`HumanFaceModel`)
 * or a user's InsightFace-layout ONNX folder (`InsightFaceModel`). Embeddings of two models never
 * meet: the clustering keeps each model's faces apart by `name`.
 */
export interface FaceModel {
  /** Names the detector and embedder (it goes into faces.detected's `model`). */
  readonly name: string;
  /** The embedding length. */
  readonly dims: number;
  /** What runs it: `wasm` (TF.js), `cuda` or `cpu` (ONNX Runtime). */
  readonly provider: string;
  detect(image: RgbImage): Promise<DetectedFace[]>;
  close(): Promise<void>;
}

/** Scales a vector to unit length (a zero vector stays as it is). */
export function normalized(vector: ArrayLike<number>): Float32Array {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  const norm = Math.sqrt(sum) || 1;
  return Float32Array.from(vector, (x) => x / norm);
}

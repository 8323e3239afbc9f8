import { HumanFaceModel } from './human.js';
import { InsightFaceModel } from './insightface.js';
import type { FaceModel } from './face-model.js';

export { normalized, type DetectedFace, type FaceModel, type RgbImage } from './face-model.js';
export { HumanFaceModel } from './human.js';
export { InsightFaceModel } from './insightface.js';

/**
 * The face model MEMEX_FACE_MODEL names: unset or `human` for the one shipped in npm, a folder
 * for InsightFace-layout ONNX models (`detection/model.onnx` + `recognition/model.onnx`), `off`
 * for none (no faces are looked for).
 */
export async function loadFaceModel(setting = process.env['MEMEX_FACE_MODEL'] ?? 'human'): Promise<FaceModel | null> {
  if (setting === 'off') return null;
  if (setting === 'human' || setting === '') return HumanFaceModel.load();
  return InsightFaceModel.load(setting);
}

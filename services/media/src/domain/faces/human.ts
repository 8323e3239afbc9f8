import type { Config } from '@vladmandic/human';
import { HumanRunner } from '../human-models.js';
import { normalized, type DetectedFace, type FaceModel, type RgbImage } from './face-model.js';

/** Faces this confident or more are kept (blazeface's scores; below it, shadows and fabric). */
export const HUMAN_MIN_CONFIDENCE = 0.5;

/**
 * The face model that ships in npm: `@vladmandic/human`'s BlazeFace detector and its FaceRes
 * 1024-d descriptor, on TF.js's WASM backend. Only the face parts are loaded: no mesh, iris,
 * emotion or body models.
 */
export class HumanFaceModel implements FaceModel {
  readonly name = 'human/blazeface+faceres';
  readonly dims = 1024;
  readonly provider = 'wasm';

  private constructor(private readonly runner: HumanRunner) {}

  static async load(): Promise<HumanFaceModel> {
    const face = {
      enabled: true,
      detector: {
        rotation: false,
        maxDetected: 50,
        minConfidence: HUMAN_MIN_CONFIDENCE,
        return: false,
        skipFrames: 0,
        skipTime: 0,
      },
      mesh: { enabled: false },
      iris: { enabled: false },
      description: { enabled: true, skipFrames: 0, skipTime: 0 },
      emotion: { enabled: false },
      antispoof: { enabled: false },
      liveness: { enabled: false },
    };
    return new HumanFaceModel(await HumanRunner.load({ face } as Partial<Config>));
  }

  async detect(image: RgbImage): Promise<DetectedFace[]> {
    const result = await this.runner.detect(image);
    return result.face
      .filter((face) => face.embedding && face.embedding.length === this.dims)
      .map((face) => ({ box: face.box, score: face.boxScore ?? face.score, embedding: normalized(face.embedding!) }));
  }

  async close(): Promise<void> {
    // TF.js keeps its models until the process ends; nothing to release per model.
  }
}

import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Config, Human } from '@vladmandic/human';
import { normalized, type DetectedFace, type FaceModel, type RgbImage } from './face-model.js';

const require = createRequire(import.meta.url);

/** TF.js as human's node-wasm build loads it (the same module instance, so its IO router is the one human asks). */
type Tfjs = typeof import('@tensorflow/tfjs-core');

/** The folder of the npm package `@vladmandic/human` (its exports map hides package.json). */
function humanPackageDir(): string {
  return path.resolve(path.dirname(require.resolve('@vladmandic/human')), '..');
}

/**
 * TF.js asks `fetch` for model files, and Node's fetch has no file: URLs: this router reads a
 * graph model's JSON and its weight shards from disk, so nothing is fetched from a CDN.
 */
function registerFileLoader(tf: Tfjs): void {
  // A router answers null for URLs it does not take (TF.js's own routers do the same).
  const router = (url: string | string[]) => {
    if (typeof url !== 'string' || !url.startsWith('file://')) return null;
    const file = url.slice('file://'.length);
    return {
      async load() {
        const json = JSON.parse(await fs.promises.readFile(file, 'utf8')) as {
          modelTopology: object;
          format?: string;
          generatedBy?: string;
          convertedBy?: string;
          signature?: object;
          userDefinedMetadata?: Record<string, object>;
          weightsManifest: Array<{
            paths: string[];
            weights: import('@tensorflow/tfjs-core').io.WeightsManifestEntry[];
          }>;
        };
        const shards: Buffer[] = [];
        for (const group of json.weightsManifest)
          for (const shard of group.paths)
            shards.push(await fs.promises.readFile(path.join(path.dirname(file), shard)));
        const weights = Buffer.concat(shards);
        return {
          modelTopology: json.modelTopology,
          ...(json.format ? { format: json.format } : {}),
          ...(json.generatedBy ? { generatedBy: json.generatedBy } : {}),
          ...(json.convertedBy ? { convertedBy: json.convertedBy } : {}),
          // The signature names the outputs: FaceRes's descriptor is found among them by it.
          ...(json.signature ? { signature: json.signature } : {}),
          ...(json.userDefinedMetadata ? { userDefinedMetadata: json.userDefinedMetadata } : {}),
          weightSpecs: json.weightsManifest.flatMap((group) => group.weights),
          weightData: weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.byteLength),
        };
      },
    };
  };
  tf.io.registerLoadRouter(router as Parameters<Tfjs['io']['registerLoadRouter']>[0]);
}

/** Faces this confident or more are kept (blazeface's scores; below it, shadows and fabric). */
export const HUMAN_MIN_CONFIDENCE = 0.5;

/**
 * The face model that ships in npm: `@vladmandic/human`'s BlazeFace detector and its FaceRes
 * 1024-d descriptor, on TF.js's WASM backend (no native build), models read from the package.
 * Only the face parts are loaded: no mesh, iris, emotion or body models.
 */
export class HumanFaceModel implements FaceModel {
  readonly name = 'human/blazeface+faceres';
  readonly dims = 1024;
  readonly provider = 'wasm';

  private constructor(
    private readonly human: Human,
    private readonly tf: Tfjs,
  ) {}

  static async load(): Promise<HumanFaceModel> {
    const tf = require('@tensorflow/tfjs-core') as Tfjs;
    registerFileLoader(tf);
    const dir = humanPackageDir();
    const { Human } = require(path.join(dir, 'dist', 'human.node-wasm.js')) as typeof import('@vladmandic/human');
    const config: Partial<Config> = {
      backend: 'wasm',
      wasmPath: path.join(path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm')), path.sep),
      modelBasePath: `file://${path.join(dir, 'models')}/`,
      cacheModels: false,
      debug: false,
      // Human is made for video: it reuses a frame's results for similar frames. Photos are each new.
      cacheSensitivity: 0,
      face: {
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
      },
      body: { enabled: false },
      hand: { enabled: false },
      object: { enabled: false },
      gesture: { enabled: false },
      segmentation: { enabled: false },
    } as Partial<Config>;
    const human = new Human(config);
    await human.load();
    return new HumanFaceModel(human, tf);
  }

  async detect(image: RgbImage): Promise<DetectedFace[]> {
    const tensor = this.tf.tensor3d(new Uint8Array(image.data), [image.height, image.width, 3], 'int32');
    try {
      const result = await this.human.detect(tensor as never);
      return result.face
        .filter((face) => face.embedding && face.embedding.length === this.dims)
        .map((face) => ({
          box: face.box,
          score: face.boxScore ?? face.score,
          embedding: normalized(face.embedding!),
        }));
    } finally {
      tensor.dispose();
    }
  }

  async close(): Promise<void> {
    // TF.js keeps its models until the process ends; nothing to release per model.
  }
}

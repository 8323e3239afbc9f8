import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Config, Human, Result } from '@vladmandic/human';
import type { RgbImage } from './faces/face-model.js';

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
let fileLoaderRegistered = false;

function registerFileLoader(tf: Tfjs): void {
  if (fileLoaderRegistered) return;
  fileLoaderRegistered = true;
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

/** Every part of Human off: a runner turns on only what it needs. */
const NOTHING: Partial<Config> = {
  face: { enabled: false },
  body: { enabled: false },
  hand: { enabled: false },
  object: { enabled: false },
  gesture: { enabled: false },
  segmentation: { enabled: false },
} as Partial<Config>;

/**
 * `@vladmandic/human` on TF.js's WASM backend (no native build), its models read from the npm
 * package's folder: the face model and the object tagger each run one with their parts on.
 */
export class HumanRunner {
  private constructor(
    private readonly human: Human,
    private readonly tf: Tfjs,
  ) {}

  static async load(parts: Partial<Config>): Promise<HumanRunner> {
    const tf = require('@tensorflow/tfjs-core') as Tfjs;
    registerFileLoader(tf);
    const dir = humanPackageDir();
    const { Human } = require(path.join(dir, 'dist', 'human.node-wasm.js')) as typeof import('@vladmandic/human');
    const human = new Human({
      backend: 'wasm',
      wasmPath: path.join(path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm')), path.sep),
      modelBasePath: `file://${path.join(dir, 'models')}/`,
      cacheModels: false,
      debug: false,
      // Human is made for video: it reuses a frame's results for similar frames. Photos are each new.
      cacheSensitivity: 0,
      ...NOTHING,
      ...parts,
    } as Partial<Config>);
    await human.load();
    return new HumanRunner(human, tf);
  }

  async detect(image: RgbImage): Promise<Result> {
    const tensor = this.tf.tensor3d(new Uint8Array(image.data), [image.height, image.width, 3], 'int32');
    try {
      return await this.human.detect(tensor as never);
    } finally {
      tensor.dispose();
    }
  }
}

import type { Config } from '@vladmandic/human';
import type { RgbImage } from '../faces/face-model.js';
import { HumanRunner } from '../human-models.js';

/** A thing seen in a picture: a COCO label (`dog`, `bicycle`) and the best score among its boxes. */
export interface SeenObject {
  label: string;
  score: number;
}

/** Objects this confident or more become tags (CenterNet's scores; below it, guesses). */
export const OBJECT_MIN_CONFIDENCE = 0.4;

/**
 * Object tags from a model shipped in npm: `@vladmandic/human`'s CenterNet (the 80 COCO classes)
 * on TF.js's WASM backend. A picture's tags are its labels, each once, most confident first.
 */
export class ObjectTagger {
  readonly name = 'human/centernet';

  private constructor(private readonly runner: HumanRunner) {}

  static async load(): Promise<ObjectTagger> {
    const object = {
      enabled: true,
      modelPath: 'centernet.json',
      minConfidence: OBJECT_MIN_CONFIDENCE,
      maxDetected: 20,
      skipFrames: 0,
      skipTime: 0,
    };
    return new ObjectTagger(await HumanRunner.load({ object } as Partial<Config>));
  }

  async tag(image: RgbImage): Promise<SeenObject[]> {
    const best = new Map<string, number>();
    for (const object of (await this.runner.detect(image)).object)
      best.set(object.label, Math.max(best.get(object.label) ?? 0, object.score));
    return [...best]
      .map(([label, score]) => ({ label, score: Math.round(score * 1000) / 1000 }))
      .sort((a, b) => b.score - a.score || (a.label < b.label ? -1 : 1));
  }
}

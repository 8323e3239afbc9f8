import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import ffmpeg from 'fluent-ffmpeg';
import sharp from 'sharp';
import { RENDITION_SIZES } from './renditions.js';

/** How different a frame must be from the one before to start a scene (ffmpeg's scene score, 0–1). */
export const SCENE_THRESHOLD = 0.3;
/** Keyframes kept at most per video (a long film keeps its first scenes). */
export const MAX_KEYFRAMES = 200;

export interface MadeKeyframe {
  at: number;
  width: number;
  height: number;
  webp: Buffer;
}

const THUMB = RENDITION_SIZES.find((s) => s.name === 'thumb')!.longSide;

/**
 * The first frame and every frame where the scene changes, with its time, as WebP thumbnails:
 * ffmpeg's `select` on the scene score, `showinfo` for each kept frame's time.
 */
export async function extractKeyframes(video: Buffer): Promise<MadeKeyframe[]> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'memex-keyframes-'));
  try {
    const input = path.join(dir, 'video');
    await fs.writeFile(input, video);
    const times: number[] = [];
    await new Promise<void>((resolve, reject) =>
      ffmpeg(input)
        .videoFilters([`select='eq(n,0)+gt(scene,${SCENE_THRESHOLD})'`, 'showinfo'])
        .outputOptions(['-vsync', 'vfr', '-frames:v', String(MAX_KEYFRAMES)])
        .noAudio()
        .output(path.join(dir, 'frame-%05d.png'))
        .on('stderr', (line: string) => {
          const at = /pts_time:\s*([0-9.]+)/.exec(line);
          if (at && line.includes('Parsed_showinfo')) times.push(Number(at[1]));
        })
        .on('error', (error: Error) => reject(error))
        .on('end', () => resolve())
        .run(),
    );
    const frames = (await fs.readdir(dir)).filter((name) => name.startsWith('frame-')).sort();
    const made: MadeKeyframe[] = [];
    for (const [i, frame] of frames.entries()) {
      const { data, info } = await sharp(path.join(dir, frame))
        .resize({ width: THUMB, height: THUMB, fit: 'inside', withoutEnlargement: true })
        .webp({ quality: 75 })
        .toBuffer({ resolveWithObject: true });
      made.push({ at: Math.round((times[i] ?? 0) * 1000) / 1000, width: info.width, height: info.height, webp: data });
    }
    return made;
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

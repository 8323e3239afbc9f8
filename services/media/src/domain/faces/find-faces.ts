import sharp from 'sharp';
import { encodeVector, type Face } from '@memex/contracts';
import type { BlobStore } from '@memex/blobs';
import type { FaceModel } from './face-model.js';

/** A face thumbnail's side in pixels. */
export const FACE_CROP_SIDE = 160;
/** How much of the face's size is kept around it in its thumbnail, each side. */
const CROP_MARGIN = 0.25;

/** An image faces are looked for in: a photo's upright preview, or a video's keyframe at its second. */
export interface FaceSource {
  image: Buffer;
  frameAt: number | null;
}

/**
 * Every face in the sources, in reading order (sources in order, then left to right), with a
 * thumbnail stored as a blob before the event names it. Face ids are `<item>:<n>` in that order,
 * so a re-run of the same model finds the same ids (and the user's corrections keep to them).
 */
export async function findFaces(
  itemId: string,
  sources: FaceSource[],
  model: FaceModel,
  blobs: BlobStore,
): Promise<Face[]> {
  const faces: Face[] = [];
  for (const source of sources) {
    const decoded = sharp(source.image).removeAlpha();
    const { data, info } = await decoded.clone().raw().toBuffer({ resolveWithObject: true });
    const found = await model.detect({ data, width: info.width, height: info.height });
    found.sort((a, b) => a.box[0] - b.box[0] || a.box[1] - b.box[1]);
    for (const face of found) {
      const [x, y, w, h] = face.box;
      const margin = Math.max(w, h) * CROP_MARGIN;
      const left = Math.max(0, Math.floor(x - margin));
      const top = Math.max(0, Math.floor(y - margin));
      const right = Math.min(info.width, Math.ceil(x + w + margin));
      const bottom = Math.min(info.height, Math.ceil(y + h + margin));
      if (right - left < 2 || bottom - top < 2) continue;
      const crop = await decoded
        .clone()
        .extract({ left, top, width: right - left, height: bottom - top })
        .resize({ width: FACE_CROP_SIDE, height: FACE_CROP_SIDE, fit: 'inside' })
        .webp({ quality: 80 })
        .toBuffer();
      const clamp = (v: number) => Math.min(1, Math.max(0, v));
      faces.push({
        face_id: `${itemId}:${faces.length}`,
        box: [clamp(x / info.width), clamp(y / info.height), clamp(w / info.width), clamp(h / info.height)],
        score: clamp(face.score),
        frame_at: source.frameAt,
        crop_sha256: await blobs.put(crop),
        embedding: encodeVector(face.embedding),
      });
    }
  }
  return faces;
}

import type { BlobStore } from '@memex/blobs';
import type {
  DataOf,
  EventOf,
  FacesDetected,
  ItemIngested,
  Keyframe,
  PhotoAnalyzed,
  Rendition,
  VideoAnalyzed,
} from '@memex/contracts';
import type { FaceModel } from '../domain/faces/face-model.js';
import { findFaces, type FaceSource } from '../domain/faces/find-faces.js';
import { extractKeyframes } from '../domain/keyframes.js';
import type { PlaceIndex } from '../domain/places.js';
import { makeRenditions, NoRendition } from '../domain/renditions.js';
import { originalBytes } from './original.js';

/** The pipeline and version that made an analysis (`photo.analyzed`'s `pipeline`). */
export const MEDIA_PIPELINE = 'media@1';

/**
 * One photo's analysis: renditions stored as blobs (before the event that names them), the place
 * nearest its GPS position. Null when the photo's bytes are gone (deleted meanwhile). A photo the
 * pipeline cannot decode gets the reason instead of renditions; any other failure throws (retried).
 */
export async function analyzePhoto(
  event: EventOf<typeof ItemIngested>,
  blobs: BlobStore,
  places: PlaceIndex,
): Promise<DataOf<typeof PhotoAnalyzed> | null> {
  const { data } = event;
  const bytes = await originalBytes(data, blobs);
  if (!bytes) return null;
  const renditions: Rendition[] = [];
  let problem: string | null = null;
  try {
    for (const { webp, ...size } of await makeRenditions(bytes, String(data.meta['format']))) {
      renditions.push({ ...size, sha256: await blobs.put(webp) });
    }
  } catch (error) {
    if (!(error instanceof NoRendition)) throw error;
    problem = error.message;
  }
  const gps = data.meta['gps'] as { latitude: number; longitude: number } | null | undefined;
  return {
    item_id: data.id,
    revision: data.revision,
    pipeline: MEDIA_PIPELINE,
    renditions,
    rendition_problem: problem,
    place: gps ? places.nearest(gps.latitude, gps.longitude) : null,
  };
}

/**
 * One video's analysis: a thumbnail at each scene change, stored as blobs first, and the place of
 * its GPS position. A video ffmpeg cannot decode gets the reason instead; null when it is gone.
 */
export async function analyzeVideo(
  event: EventOf<typeof ItemIngested>,
  blobs: BlobStore,
  places: PlaceIndex,
): Promise<DataOf<typeof VideoAnalyzed> | null> {
  const { data } = event;
  const bytes = await originalBytes(data, blobs);
  if (!bytes) return null;
  const keyframes: Keyframe[] = [];
  let problem: string | null = null;
  try {
    for (const { webp, ...frame } of await extractKeyframes(bytes))
      keyframes.push({ ...frame, sha256: await blobs.put(webp) });
  } catch (error) {
    problem = `ffmpeg could not read its frames: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
  }
  const gps = data.meta['gps'] as { latitude: number; longitude: number } | null | undefined;
  return {
    item_id: data.id,
    revision: data.revision,
    pipeline: MEDIA_PIPELINE,
    keyframes,
    keyframe_problem: problem,
    place: gps ? places.nearest(gps.latitude, gps.longitude) : null,
  };
}

/**
 * The faces in a photo's upright preview (the largest rendition) or in a video's keyframes, read
 * back from the blobs the analysis just stored. A photo without renditions has the reason.
 */
export async function analyzeFaces(
  analysis: DataOf<typeof PhotoAnalyzed> | DataOf<typeof VideoAnalyzed>,
  model: FaceModel,
  blobs: BlobStore,
): Promise<DataOf<typeof FacesDetected>> {
  const images =
    'renditions' in analysis
      ? [...analysis.renditions]
          .sort((a, b) => b.width - a.width)
          .slice(0, 1)
          .map((r) => ({ sha256: r.sha256, frameAt: null }))
      : analysis.keyframes.map((k) => ({ sha256: k.sha256, frameAt: k.at }));
  const sources: FaceSource[] = [];
  for (const { sha256, frameAt } of images) sources.push({ image: await blobs.get(sha256), frameAt });
  const problem =
    images.length === 0
      ? (('renditions' in analysis ? analysis.rendition_problem : analysis.keyframe_problem) ??
        'there was no image to look in')
      : null;
  return {
    item_id: analysis.item_id,
    revision: analysis.revision,
    model: model.name,
    dims: model.dims,
    faces: await findFaces(analysis.item_id, sources, model, blobs),
    problem,
  };
}

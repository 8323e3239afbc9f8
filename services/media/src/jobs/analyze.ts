import sharp from 'sharp';
import type { BlobStore } from '@memex/blobs';
import type {
  DataOf,
  EventOf,
  FacesDetected,
  ItemIngested,
  PhotoTagged,
  Keyframe,
  PhotoAnalyzed,
  Rendition,
  VideoAnalyzed,
} from '@memex/contracts';
import type { FaceModel } from '../domain/faces/face-model.js';
import { findFaces, type FaceSource } from '../domain/faces/find-faces.js';
import type { Caption, VisionCaptioner } from '../domain/tags/captions.js';
import type { ObjectTagger } from '../domain/tags/objects.js';
import type { PlaceIndex } from '../domain/places.js';
import { positionOf } from '../domain/media-item.js';
import { photoRenditions, videoKeyframes, type MadeKeyframe, type MadeRendition } from '../pictures.js';
import { derivedOnWorker, originalBytes } from './original.js';

/** The pipeline and version that made an analysis (`photo.analyzed`'s `pipeline`). */
export const MEDIA_PIPELINE = 'media@1';

type ItemData = EventOf<typeof ItemIngested>['data'];

/** A photo's renditions (made by its worker when it is on one), or why there are none; null when its bytes are gone. */
async function renditionsOf(
  data: ItemData,
  blobs: BlobStore,
): Promise<{ renditions: MadeRendition[]; problem: string | null } | null> {
  const format = data.kind === 'photo' ? data.meta.format : '';
  const derived = await derivedOnWorker(data, { task: 'renditions', format });
  if (derived)
    return {
      renditions: derived.pictures.map((p) => ({ ...p, name: p.name as Rendition['name'] })),
      problem: derived.problem,
    };
  const bytes = await originalBytes(data, blobs);
  return bytes && photoRenditions(bytes, format);
}

/** A video's keyframes (made by its worker when it is on one), or ffmpeg's first line of why not; null when its bytes are gone. */
async function keyframesOf(
  data: ItemData,
  blobs: BlobStore,
): Promise<{ keyframes: MadeKeyframe[]; problem: string | null } | null> {
  const derived = await derivedOnWorker(data, { task: 'keyframes' });
  if (derived) return { keyframes: derived.pictures.map((p) => ({ ...p, at: p.at ?? 0 })), problem: derived.problem };
  const bytes = await originalBytes(data, blobs);
  return bytes && videoKeyframes(bytes);
}

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
  const made = await renditionsOf(data, blobs);
  if (!made) return null;
  const renditions: Rendition[] = [];
  for (const { webp, ...size } of made.renditions) renditions.push({ ...size, sha256: await blobs.put(webp) });
  const problem = made.problem;
  const gps = positionOf(data);
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
  const made = await keyframesOf(data, blobs);
  if (!made) return null;
  const keyframes: Keyframe[] = [];
  for (const { webp, ...frame } of made.keyframes) keyframes.push({ ...frame, sha256: await blobs.put(webp) });
  const problem = made.problem === null ? null : `ffmpeg could not read its frames: ${made.problem}`;
  const gps = positionOf(data);
  return {
    item_id: data.id,
    revision: data.revision,
    pipeline: MEDIA_PIPELINE,
    keyframes,
    keyframe_problem: problem,
    place: gps ? places.nearest(gps.latitude, gps.longitude) : null,
  };
}

/** The pictures of an analysis: a photo's upright preview (its largest rendition), or a video's keyframes at their second. */
async function picturesOf(
  analysis: DataOf<typeof PhotoAnalyzed> | DataOf<typeof VideoAnalyzed>,
  blobs: BlobStore,
): Promise<FaceSource[]> {
  const images =
    'renditions' in analysis
      ? [...analysis.renditions]
          .sort((a, b) => b.width - a.width)
          .slice(0, 1)
          .map((r) => ({ sha256: r.sha256, frameAt: null }))
      : analysis.keyframes.map((k) => ({ sha256: k.sha256, frameAt: k.at }));
  const pictures: FaceSource[] = [];
  for (const { sha256, frameAt } of images) pictures.push({ image: await blobs.get(sha256), frameAt });
  return pictures;
}

/** Why an analysis has no pictures (its rendition or keyframe problem). */
function noPictures(analysis: DataOf<typeof PhotoAnalyzed> | DataOf<typeof VideoAnalyzed>): string {
  return (
    ('renditions' in analysis ? analysis.rendition_problem : analysis.keyframe_problem) ??
    'there was no image to look in'
  );
}

/** The faces in an analysis's pictures, found by the face model. */
export async function analyzeFaces(
  analysis: DataOf<typeof PhotoAnalyzed> | DataOf<typeof VideoAnalyzed>,
  model: FaceModel,
  blobs: BlobStore,
): Promise<DataOf<typeof FacesDetected>> {
  const pictures = await picturesOf(analysis, blobs);
  return {
    item_id: analysis.item_id,
    revision: analysis.revision,
    model: model.name,
    dims: model.dims,
    faces: await findFaces(analysis.item_id, pictures, model, blobs),
    problem: pictures.length === 0 ? noPictures(analysis) : null,
  };
}

/**
 * What an analysis's pictures show: the object detector's labels over all of them, and the vision
 * model's caption and tags of the first (a photo's preview, a video's opening frame). A failing
 * vision endpoint leaves the caption out with the reason, and the object tags stand.
 */
export async function analyzeTags(
  analysis: DataOf<typeof PhotoAnalyzed> | DataOf<typeof VideoAnalyzed>,
  tagger: ObjectTagger | null,
  captioner: VisionCaptioner | null,
  blobs: BlobStore,
): Promise<DataOf<typeof PhotoTagged>> {
  const pictures = await picturesOf(analysis, blobs);
  const best = new Map<string, number>();
  for (const picture of tagger ? pictures : []) {
    const { data, info } = await sharp(picture.image).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    for (const { label, score } of await tagger!.tag({ data, width: info.width, height: info.height }))
      best.set(`object:${label}`, Math.max(best.get(`object:${label}`) ?? 0, score));
  }
  let caption: Caption | null = null;
  let problem: string | null = null;
  if (captioner && pictures[0]) {
    try {
      caption = await captioner.caption(pictures[0].image, 'image/webp');
      for (const tag of caption.tags) if (!best.has(`tag:${tag}`)) best.set(`tag:${tag}`, 1);
    } catch (error) {
      problem = error instanceof Error ? error.message : String(error);
    }
  }
  return {
    item_id: analysis.item_id,
    revision: analysis.revision,
    tagger: tagger?.name ?? null,
    tags: [...best].slice(0, 50).map(([tag, score]) => ({ tag: tag.slice(0, 100), score })),
    caption: caption?.caption.slice(0, 2000) ?? null,
    caption_model: caption?.model ?? null,
    caption_problem: problem,
  };
}

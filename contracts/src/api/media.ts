import { Type } from '@sinclair/typebox';
import { defineMethod, type MethodDefinition } from './method.js';
import { Keyframe, Place, Rendition } from '../events/media.js';
import { ULID_PATTERN } from '../events/envelope.js';

const Timestamp = Type.String({ format: 'date-time' });

/** File extensions of photos and the MIME types the photo handler takes them as (clients send by extension). */
export const PHOTO_FILE_TYPES: Readonly<Record<string, string>> = {
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  heic: 'image/heic',
  heif: 'image/heif',
  jxl: 'image/jxl',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  // Windows bitmaps (a scanner's, Paint's, an old camera's): no EXIF, dated by the file's time.
  bmp: 'image/bmp',
  // Cameras' RAW files: each carries the camera's own JPEG preview, which is what is shown.
  cr2: 'image/x-canon-cr2',
  cr3: 'image/x-canon-cr3',
  crw: 'image/x-canon-crw',
  nef: 'image/x-nikon-nef',
  nrw: 'image/x-nikon-nrw',
  dng: 'image/x-adobe-dng',
  arw: 'image/x-sony-arw',
  orf: 'image/x-olympus-orf',
  rw2: 'image/x-panasonic-rw2',
  raf: 'image/x-fuji-raf',
  pef: 'image/x-pentax-pef',
  srw: 'image/x-samsung-srw',
  rwl: 'image/x-leica-rwl',
};

/**
 * File extensions of videos and audio recordings and the MIME types the video-audio handler takes:
 * today's, and those twenty years of cameras, phones and computers left (a compact camera's AVI,
 * a camcorder's AVCHD .MTS and MPEG-2 .MOD, an old phone's .3gp and .amr, Windows Media, CD rips).
 */
export const RECORDING_FILE_TYPES: Readonly<Record<string, string>> = {
  mp4: 'video/mp4',
  m4v: 'video/mp4',
  mov: 'video/quicktime',
  mkv: 'video/x-matroska',
  webm: 'video/webm',
  avi: 'video/x-msvideo',
  '3gp': 'video/3gpp',
  '3g2': 'video/3gpp2',
  mts: 'video/mp2t',
  m2ts: 'video/mp2t',
  mpg: 'video/mpeg',
  mpeg: 'video/mpeg',
  mod: 'video/mpeg',
  vob: 'video/mpeg',
  wmv: 'video/x-ms-wmv',
  flv: 'video/x-flv',
  mp3: 'audio/mpeg',
  m4a: 'audio/mp4',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  opus: 'audio/opus',
  flac: 'audio/flac',
  aac: 'audio/aac',
  wma: 'audio/x-ms-wma',
  aif: 'audio/aiff',
  aiff: 'audio/aiff',
  amr: 'audio/amr',
};

/** Photos, videos and recordings by file extension: what `memex import photos` sends. */
export const MEDIA_FILE_TYPES: Readonly<Record<string, string>> = { ...PHOTO_FILE_TYPES, ...RECORDING_FILE_TYPES };

export const PhotoView = Type.Object({
  item_id: Type.String(),
  /** photo, video or audio. */
  kind: Type.String(),
  title: Type.String(),
  occurred_at: Type.Union([Timestamp, Type.Null()]),
  /** The photo handler's metadata: capture time and offset, GPS, camera, lens, orientation, size. */
  meta: Type.Record(Type.String(), Type.Unknown()),
  /** `pending` until the media pipeline has read the pixels; `failed` when it gave up (see `analysis_problem`). */
  status: Type.Union([Type.Literal('pending'), Type.Literal('analyzed'), Type.Literal('failed')]),
  /** Why the media pipeline gave up on it, after its retries (`memex photos retry` runs it again). */
  analysis_problem: Type.Union([Type.String(), Type.Null()]),
  renditions: Type.Array(Rendition),
  rendition_problem: Type.Union([Type.String(), Type.Null()]),
  /** A video's frames at its scene changes. */
  keyframes: Type.Array(Keyframe),
  place: Type.Union([Place, Type.Null()]),
  /** How many faces the face model found (memex.faces.list shows them); null while it has not looked. */
  faces: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
  /** What it shows: `object:<label>` from the offline detector, `tag:<word>` from a vision model. */
  tags: Type.Array(Type.String()),
  /** A vision model's caption, when one is configured. */
  caption: Type.Union([Type.String(), Type.Null()]),
  /** The named people whose faces are in it. */
  people: Type.Array(Type.Object({ key: Type.String(), name: Type.String(), faces: Type.Integer() })),
  /**
   * A Live Photo (an iPhone's still and the seconds of motion around it, two items sharing Apple's
   * content identifier) when this item is one half and the other is here too: both items' ids.
   */
  live_photo: Type.Union([Type.Object({ still: Type.String(), motion: Type.String() }), Type.Null()]),
});

export const MediaGet = defineMethod({
  name: 'memex.media.get',
  service: 'media',
  kind: 'query',
  access: 'any',
  summary:
    'A photo, video or recording with its metadata, thumbnails or keyframes, and place, within the caller’s scope.',
  params: Type.Object({ item_id: Type.String({ pattern: ULID_PATTERN }) }),
  result: PhotoView,
});

/** A WebP picture media made: a photo's thumbnail or preview, a video's keyframe. */
const WebpPicture = Type.Object({
  content_type: Type.Literal('image/webp'),
  width: Type.Integer(),
  height: Type.Integer(),
  data: Type.String({ contentEncoding: 'base64' }),
});

export const MediaRendition = defineMethod({
  name: 'memex.media.rendition',
  service: 'media',
  kind: 'query',
  access: 'any',
  summary: 'A photo’s thumbnail or preview as WebP bytes (base64), orientation applied.',
  params: Type.Object({
    item_id: Type.String({ pattern: ULID_PATTERN }),
    name: Type.Optional(Type.Union([Type.Literal('thumb'), Type.Literal('preview')], { default: 'thumb' })),
  }),
  result: WebpPicture,
});

export const MediaKeyframe = defineMethod({
  name: 'memex.media.keyframe',
  service: 'media',
  kind: 'query',
  access: 'any',
  summary:
    'A video’s keyframe (the frame at a scene change, by its second as memex.media.get lists it) as WebP bytes (base64).',
  params: Type.Object({
    item_id: Type.String({ pattern: ULID_PATTERN }),
    /** The keyframe's `at`, as memex.media.get gives it. */
    at: Type.Number({ minimum: 0 }),
  }),
  result: WebpPicture,
});

export const MediaPlaces = defineMethod({
  name: 'memex.media.places',
  service: 'media',
  kind: 'query',
  access: 'any',
  summary: 'The places photos were taken at, with how many photos each and when first and last.',
  params: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) }),
  result: Type.Object({
    places: Type.Array(
      Type.Object({
        place: Place,
        photos: Type.Integer(),
        first: Type.Union([Timestamp, Type.Null()]),
        last: Type.Union([Timestamp, Type.Null()]),
      }),
    ),
  }),
});

export const MediaMoments = defineMethod({
  name: 'memex.media.moments',
  service: 'media',
  kind: 'query',
  access: 'any',
  summary:
    'Where in a video or recording words were said: the transcript segments holding every word, with their second, to open it there.',
  params: Type.Object({
    item_id: Type.String({ pattern: ULID_PATTERN }),
    q: Type.String({ minLength: 1, maxLength: 500 }),
  }),
  result: Type.Object({
    moments: Type.Array(Type.Object({ start: Type.Number(), end: Type.Number(), text: Type.String() })),
  }),
});

/** A photo or video the media pipeline gave up on. */
export const FailedAnalysis = Type.Object({
  item_id: Type.String(),
  kind: Type.String(),
  title: Type.String(),
  reason: Type.String(),
  attempts: Type.Integer(),
  failed_at: Timestamp,
});

export const MediaFailed = defineMethod({
  name: 'memex.media.failed',
  service: 'media',
  kind: 'query',
  access: 'owner',
  summary:
    'Photos and videos the media pipeline gave up on after its retries, oldest first, with the last error: they have no thumbnails, tags or faces until retried.',
  params: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })) }),
  result: Type.Object({ total: Type.Integer(), items: Type.Array(FailedAnalysis) }),
});

export const MediaRetry = defineMethod({
  name: 'memex.media.retry',
  service: 'media',
  kind: 'command',
  access: 'owner',
  summary:
    'Run the media pipeline again on the photos and videos it gave up on (all, or the items given); one that fails again is reported again with its new reason.',
  params: Type.Object({
    item_ids: Type.Optional(
      Type.Array(Type.String({ pattern: ULID_PATTERN }), { description: 'only these', maxItems: 10_000 }),
    ),
  }),
  result: Type.Object({
    retried: Type.Array(Type.String()),
    gone: Type.Array(Type.String(), { description: 'not a failed item (analysed or deleted since)' }),
  }),
});
/** A place as events and trips name it. */
const NamedPlace = Type.Object({ key: Type.String(), name: Type.String() });

export const MediaEvents = defineMethod({
  name: 'memex.media.events',
  service: 'media',
  kind: 'query',
  access: 'any',
  summary:
    'Photos and videos grouped into events (a gap of over 4 hours or a move of over 5 km starts a new one) and trips (a run of them away from home, the most photographed place, over at least one night).',
  params: Type.Object({
    from: Type.Optional(Timestamp),
    to: Type.Optional(Timestamp),
  }),
  result: Type.Object({
    home: Type.Union([NamedPlace, Type.Null()]),
    events: Type.Array(
      Type.Object({
        start: Timestamp,
        end: Timestamp,
        items: Type.Array(Type.String()),
        place: Type.Union([NamedPlace, Type.Null()]),
      }),
    ),
    trips: Type.Array(
      Type.Object({
        start: Timestamp,
        end: Timestamp,
        nights: Type.Integer({ minimum: 1 }),
        places: Type.Array(NamedPlace),
        items: Type.Array(Type.String()),
      }),
    ),
  }),
});

const FaceId = Type.String({ pattern: '^[0-9A-HJKMNP-TV-Z]{26}:[0-9]+$' });
const ClusterId = Type.String({ pattern: '^fc_[0-9A-HJKMNP-TV-Z]{26}_[0-9]+$' });

export const FaceView = Type.Object({
  face_id: FaceId,
  item_id: Type.String(),
  /** left, top, width, height as fractions of the upright image. */
  box: Type.Array(Type.Number()),
  score: Type.Number(),
  /** The second of the video keyframe it is on; null on a photo. */
  frame_at: Type.Union([Type.Number(), Type.Null()]),
  model: Type.String(),
  cluster_id: Type.Union([ClusterId, Type.Null()]),
  /** The cluster's person when it is named. */
  person: Type.Union([Type.Object({ key: Type.String(), name: Type.String() }), Type.Null()]),
  /** Placed by a user's correction (moved), which the model never overrides. */
  corrected: Type.Boolean(),
});

export const FacesClusters = defineMethod({
  name: 'memex.faces.clusters',
  service: 'media',
  kind: 'query',
  access: 'any',
  summary:
    'Face clusters (faces of one person, grouped as photos arrive), largest first, with their name and graph person once named, and how many faces wait unclustered.',
  params: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) }),
  result: Type.Object({
    clusters: Type.Array(
      Type.Object({
        cluster_id: ClusterId,
        name: Type.Union([Type.String(), Type.Null()]),
        person_key: Type.Union([Type.String(), Type.Null()]),
        faces: Type.Integer(),
        items: Type.Integer(),
        /** A face to show for it (the most confident). */
        cover_face_id: FaceId,
      }),
    ),
    unclustered: Type.Integer(),
  }),
});

export const FacesList = defineMethod({
  name: 'memex.faces.list',
  service: 'media',
  kind: 'query',
  access: 'any',
  summary: 'The faces of a cluster, or of a photo or video, within the caller’s scope.',
  params: Type.Object({
    cluster_id: Type.Optional(ClusterId),
    item_id: Type.Optional(Type.String({ pattern: ULID_PATTERN })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 5000 })),
  }),
  result: Type.Object({ faces: Type.Array(FaceView) }),
});

export const FacesCrop = defineMethod({
  name: 'memex.faces.crop',
  service: 'media',
  kind: 'query',
  access: 'any',
  summary: 'A face’s thumbnail as WebP bytes (base64).',
  params: Type.Object({ face_id: FaceId }),
  result: Type.Object({ content_type: Type.Literal('image/webp'), data: Type.String({ contentEncoding: 'base64' }) }),
});

const CorrectionResult = Type.Object({ seq: Type.Integer({ minimum: 1 }) });

export const FacesName = defineMethod({
  name: 'memex.faces.name',
  service: 'media',
  kind: 'command',
  access: 'owner',
  summary:
    'Name a face cluster: its photos then show that person in the graph (person_key joins an existing person; without it the name makes the key).',
  params: Type.Object({
    cluster_id: ClusterId,
    name: Type.String({ minLength: 1, maxLength: 200 }),
    person_key: Type.Optional(Type.String({ pattern: '^person:.+$', maxLength: 300 })),
  }),
  result: CorrectionResult,
});

export const FacesMove = defineMethod({
  name: 'memex.faces.move',
  service: 'media',
  kind: 'command',
  access: 'owner',
  summary:
    'Move a face into another cluster, or out of any (to_cluster null: not this person); the model never moves it back.',
  params: Type.Object({ face_id: FaceId, to_cluster: Type.Union([ClusterId, Type.Null()]) }),
  result: CorrectionResult,
});

export const FacesMerge = defineMethod({
  name: 'memex.faces.merge',
  service: 'media',
  kind: 'command',
  access: 'owner',
  summary: 'Merge a face cluster into another: its faces, and those that would join it later, are the other’s.',
  params: Type.Object({ from: ClusterId, into: ClusterId }),
  result: CorrectionResult,
});

export const mediaMethods: MethodDefinition[] = [
  MediaGet,
  MediaRendition,
  MediaKeyframe,
  MediaPlaces,
  MediaMoments,
  MediaEvents,
  FacesClusters,
  FacesList,
  FacesCrop,
  FacesName,
  FacesMove,
  FacesMerge,
  MediaFailed,
  MediaRetry,
];

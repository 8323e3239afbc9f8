import { Type } from '@sinclair/typebox';

/**
 * The attributes a photo, video or recording takes: what is not inside the file, from its name
 * and time on disk or a Google Takeout sidecar (`memex import photos`). The file's own metadata
 * wins where it has it.
 */
export const mediaAttributesSchema = Type.Object(
  {
    filename: Type.Optional(
      Type.String({ minLength: 1, description: "The file's name; the title when none is given." }),
    ),
    title: Type.Optional(Type.String({ minLength: 1, description: 'A title (Google Takeout sidecar `title`).' })),
    description: Type.Optional(Type.String({ description: 'A caption (Google Takeout sidecar `description`).' })),
    taken_at: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'When it was taken (Takeout `photoTakenTime`); the file wins when it states its own zone.',
      }),
    ),
    latitude: Type.Optional(
      Type.Number({ minimum: -90, maximum: 90, description: 'Where it was taken, when the file has no GPS.' }),
    ),
    longitude: Type.Optional(Type.Number({ minimum: -180, maximum: 180 })),
    altitude: Type.Optional(Type.Number()),
    modified: Type.Optional(
      Type.String({ format: 'date-time', description: "The file's time: its date when nothing better says it." }),
    ),
    people: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        description: 'People named in it (XMP `PersonInImage`, face region names from Apple Photos or Lightroom).',
      }),
    ),
    keywords: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), { description: 'Its keywords (XMP `dc:subject`, IPTC Keywords).' }),
    ),
  },
  { additionalProperties: false },
);

export interface MediaAttributes {
  filename?: string;
  title?: string;
  description?: string;
  taken_at?: string;
  latitude?: number;
  longitude?: number;
  altitude?: number;
  modified?: string;
  people?: string[];
  keywords?: string[];
}

export interface Position {
  latitude: number;
  longitude: number;
  altitude: number | null;
}

/** The position the attributes give, or null (Takeout writes 0,0 for "no location"). */
export function attributePosition(attrs: MediaAttributes): Position | null {
  if (attrs.latitude === undefined || attrs.longitude === undefined) return null;
  if (attrs.latitude === 0 && attrs.longitude === 0) return null;
  return { latitude: attrs.latitude, longitude: attrs.longitude, altitude: attrs.altitude ?? null };
}

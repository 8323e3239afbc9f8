import type { ImageFormat } from './sniff.js';

/** What a photo item's `meta` holds (item.ingested carries it; memex.items.get shows it). */
export interface PhotoMeta {
  format: ImageFormat;
  contentType: string;
  size: number;
  filename: string | null;
  /** As shown, orientation applied; null when the file does not say. */
  width: number | null;
  height: number | null;
  /** EXIF orientation 1–8 (thumbnails apply it). */
  orientation: number | null;
  /** The wall-clock capture time (`2021-04-11T15:47:53`, no zone), from EXIF. */
  takenAt: string | null;
  /** The zone offset of `takenAt` (`-05:00`), when something says it. */
  offset: string | null;
  offsetSource: 'exif' | 'gps' | 'takeout' | null;
  /** Where occurredAt came from: EXIF, a Takeout sidecar, the file's time, or nowhere. */
  timeSource: 'exif' | 'takeout' | 'file' | null;
  gps: { latitude: number; longitude: number; altitude: number | null } | null;
  gpsSource: 'exif' | 'takeout' | null;
  camera: { make: string | null; model: string | null } | null;
  lens: string | null;
  description: string | null;
  /** The text read in the image by OCR (also in the item's text), or null when not read. */
  ocr: {
    engine: string;
    /** The ONNX execution provider that ran: `cuda` or `cpu`. */
    provider: string;
    lines: number;
    confidence: number | null;
    text: string;
  } | null;
}

import type { NamedRegion } from '@memex/exports';
import type { Position } from './attributes.js';
import type { ImageFormat } from './sniff.js';
import type { Transcript } from './transcribe.js';

/** What a photo item's `meta` holds (item.ingested carries it; memex.items.get shows it). */
export interface PhotoMeta {
  format: ImageFormat;
  contentType: string;
  size: number;
  filename: string | null;
  /** As shown, orientation applied; null when the file does not say. */
  width: number | null;
  height: number | null;
  /** Bits a pixel, where the format states it plainly (a Windows bitmap's 1, 4, 8, 16, 24 or 32). */
  bitDepth?: number;
  /** EXIF orientation 1–8 (thumbnails apply it). */
  orientation: number | null;
  /** The wall-clock capture time (`2021-04-11T15:47:53`, no zone), from EXIF, else the photo's XMP or IPTC. */
  takenAt: string | null;
  /** The zone offset of `takenAt` (`-05:00`), when something says it. */
  offset: string | null;
  offsetSource: 'exif' | 'xmp' | 'iptc' | 'gps' | 'takeout' | null;
  /** Where occurredAt came from: EXIF, the XMP or IPTC in the file, a Takeout sidecar, the file's time, or nowhere. */
  timeSource: 'exif' | 'xmp' | 'iptc' | 'takeout' | 'file' | null;
  gps: Position | null;
  gpsSource: 'exif' | 'takeout' | 'xmp' | null;
  camera: { make: string | null; model: string | null } | null;
  lens: string | null;
  description: string | null;
  /** Apple's content identifier (MakerNote): a Live Photo's still and its motion clip share it. */
  contentIdentifier: string | null;
  /**
   * People named in it and its keywords: the caller's (an XMP sidecar), then those of the XMP or
   * IPTC in the file, once each whatever the case. The keywords are also its `keyword:` labels.
   */
  people: string[];
  keywords: string[];
  /** Who took it (XMP `dc:creator`, IPTC By-line), or null. */
  creator: string | null;
  /**
   * The faces its XMP names (MWG regions of type Face, Microsoft's people tags), each box a
   * fraction of the image from its top left, as the file states it (writers differ on whether
   * that is before or after the EXIF orientation turns the image).
   */
  regions: NamedRegion[];
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

/** What a video or audio item's `meta` holds (ffprobe's reading and the transcript). */
export interface AvMeta {
  contentType: string;
  size: number;
  filename: string | null;
  /** ffprobe's format name (`mov,mp4,m4a,3gp,3g2,mj2`, `matroska,webm`, `mp3`…). */
  container: string;
  /** Seconds. */
  duration: number | null;
  video: { codec: string | null; width: number | null; height: number | null } | null;
  audio: { codec: string | null; channels: number | null; sampleRate: number | null } | null;
  /** The container's creation time (QuickTime creationdate, else creation_time). */
  createdAt: string | null;
  gps: Position | null;
  camera: { make: string | null; model: string | null } | null;
  description: string | null;
  /** Apple's content identifier (QuickTime): a Live Photo's motion clip shares it with its still. */
  contentIdentifier: string | null;
  /** What was said, segment by segment with its time in seconds (also the item's text). */
  transcript: Transcript | null;
}

import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import ffmpeg, { type FfprobeData } from 'fluent-ffmpeg';
import { RECORDING_FILE_TYPES } from '@memex/contracts';
import { baseType, RejectedItem, type AvItem, type HandlerInput, type IngestHandler } from '../handler.js';
import { sha256Hex } from '../text.js';
import { attributePosition, mediaAttributesSchema, type MediaAttributes, type Position } from './attributes.js';
import type { AvMeta } from './media-item.js';
import { transcribeOffline, transcribeOverHttp, transcriptionEndpoint, type Transcript } from './transcribe.js';

/** The largest video taken in one memex.ingest item (a request carries at most 40 MB: longer films come by path later). */
export const AV_LIMIT_BYTES = 2 * 1024 * 1024 * 1024;

/** Every type RECORDING_FILE_TYPES names, and the aliases mail and browsers send them as. */
const TYPES = [
  ...new Set([
    ...Object.values(RECORDING_FILE_TYPES),
    'audio/x-m4a',
    'audio/x-wav',
    'audio/webm',
    'video/avi',
    'video/msvideo',
    'audio/x-flac',
    'audio/x-aiff',
    'audio/3gpp',
  ]),
];

function probe(file: string): Promise<FfprobeData> {
  return new Promise((resolve, reject) =>
    ffmpeg.ffprobe(file, (error: Error | null, data: FfprobeData) => (error ? reject(error) : resolve(data))),
  );
}

/** ISO 6709 (`+48.8584+002.2945+035.000/`, QuickTime's location tags) as a position. */
export function iso6709(value: string | undefined): Position | null {
  const match = value ? /^([+-]\d+(?:\.\d+)?)([+-]\d+(?:\.\d+)?)([+-]\d+(?:\.\d+)?)?/.exec(value.trim()) : null;
  if (!match) return null;
  const latitude = Number(match[1]);
  const longitude = Number(match[2]);
  if (Math.abs(latitude) > 90 || Math.abs(longitude) > 180) return null;
  return { latitude, longitude, altitude: match[3] ? Number(match[3]) : null };
}

/** 16 kHz mono WAV of the first audio stream: what both transcribers take. */
function extractSpeech(input: string, output: string): Promise<void> {
  return new Promise((resolve, reject) =>
    ffmpeg(input)
      .noVideo()
      .audioChannels(1)
      .audioFrequency(16_000)
      .format('wav')
      .on('error', reject)
      .on('end', () => resolve())
      .save(output),
  );
}

/** The transcript: the configured endpoint, else pocketsphinx offline; MEMEX_TRANSCRIBE=off skips it. */
async function transcribe(file: string, dir: string): Promise<Transcript | null> {
  if (process.env['MEMEX_TRANSCRIBE'] === 'off') return null;
  const wav = path.join(dir, 'speech.wav');
  await extractSpeech(file, wav);
  const endpoint = transcriptionEndpoint();
  if (endpoint) return transcribeOverHttp(await fs.readFile(wav), endpoint);
  return transcribeOffline(wav);
}

/**
 * A video or an audio recording: identity by content hash, container metadata from ffprobe
 * (duration, codecs, creation time, QuickTime GPS and camera), and the speech in it with the
 * time of each segment; the transcript is the item's text, so search finds the recording by
 * what was said, and `meta.transcript` says at which second.
 */
export async function parseAv({ bytes, type, attributes }: HandlerInput): Promise<AvItem> {
  const attrs = attributes as MediaAttributes;
  const contentType = baseType(type);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'memex-av-'));
  try {
    const file = path.join(dir, 'input');
    await fs.writeFile(file, bytes);
    const data = await probe(file).catch((error: Error) => {
      throw new RejectedItem(
        `not a playable recording: ffprobe says ${error.message.split('\n').filter(Boolean).pop() ?? 'nothing'}`,
      );
    });
    const video = data.streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic);
    const audio = data.streams.find((s) => s.codec_type === 'audio');
    if (!video && !audio) throw new RejectedItem('not a recording: it has no video or audio stream');
    const tags = { ...(data.format.tags ?? {}) } as Record<string, string | number | undefined>;
    const tag = (...names: string[]) =>
      names.map((n) => tags[n]).find((v) => v !== undefined && String(v).trim() !== '');
    const created = tag('com.apple.quicktime.creationdate', 'creation_time', 'date');
    const createdAt =
      created && !Number.isNaN(Date.parse(String(created))) ? new Date(String(created)).toISOString() : null;
    const gpsTag = iso6709(
      tag('com.apple.quicktime.location.ISO6709', 'location', 'location-eng') as string | undefined,
    );
    const gps = gpsTag ?? attributePosition(attrs);
    const warnings: string[] = [];
    let transcript: Transcript | null = null;
    if (audio) {
      try {
        transcript = await transcribe(file, dir);
      } catch (error) {
        warnings.push(`no transcript: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    const make = tag('com.apple.quicktime.make', 'make');
    const model = tag('com.apple.quicktime.model', 'model');
    const meta: AvMeta = {
      contentType,
      size: bytes.length,
      filename: attrs.filename ?? null,
      container: String(data.format.format_name ?? ''),
      duration: Number(data.format.duration ?? video?.duration ?? audio?.duration ?? 0) || null,
      video: video
        ? { codec: video.codec_name ?? null, width: video.width ?? null, height: video.height ?? null }
        : null,
      audio: audio
        ? {
            codec: audio.codec_name ?? null,
            channels: audio.channels ?? null,
            sampleRate: Number(audio.sample_rate) || null,
          }
        : null,
      createdAt,
      gps,
      camera: make || model ? { make: make ? String(make) : null, model: model ? String(model) : null } : null,
      description: attrs.description ?? null,
      contentIdentifier: String(tag('com.apple.quicktime.content.identifier') ?? '').trim() || null,
      transcript,
    };
    const title =
      attrs.title ?? attrs.filename ?? `${video ? 'Video' : 'Recording'} ${createdAt ?? sha256Hex(bytes).slice(0, 12)}`;
    const occurredAt =
      createdAt ??
      (attrs.taken_at
        ? new Date(attrs.taken_at).toISOString()
        : attrs.modified
          ? new Date(attrs.modified).toISOString()
          : null);
    return {
      kind: video ? 'video' : 'audio',
      identity: `sha256:${sha256Hex(bytes)}`,
      title,
      text: [title, attrs.description, ...(transcript?.segments.map((s) => s.text) ?? [])].filter(Boolean).join('\n'),
      occurredAt,
      warnings,
      meta,
    };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

export const avHandler: IngestHandler = {
  name: 'video-audio',
  types: TYPES,
  attributesSchema: mediaAttributesSchema,
  identityRule: 'Content hash (sha256 of the bytes): the same recording from two sources is one item.',
  limitBytes: AV_LIMIT_BYTES,
  produces: ['video', 'audio'],
  updatable: true,
  parse: parseAv,
};

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/** A stretch of speech: seconds from the start of the recording, and what was said. */
export interface TranscriptSegment {
  start: number;
  end: number;
  text: string;
}

export interface Transcript {
  /** Who transcribed: `openai:<model>@<url>` or `pocketsphinx-en-us`. */
  engine: string;
  language: string | null;
  segments: TranscriptSegment[];
}

const run = promisify(execFile);

/**
 * A speech-to-text endpoint speaking OpenAI's `/v1/audio/transcriptions` (OpenAI, a whisper.cpp
 * or faster-whisper server): MEMEX_TRANSCRIBE_URL (the base URL, e.g. http://gpu-box:8080),
 * MEMEX_TRANSCRIBE_MODEL (default whisper-1), MEMEX_TRANSCRIBE_KEY (a bearer token, never logged).
 */
export function transcriptionEndpoint(): { url: string; model: string; key: string | null } | null {
  const url = process.env['MEMEX_TRANSCRIBE_URL'];
  if (!url) return null;
  return {
    url: url.replace(/\/+$/, ''),
    model: process.env['MEMEX_TRANSCRIBE_MODEL'] ?? 'whisper-1',
    key: process.env['MEMEX_TRANSCRIBE_KEY'] ?? null,
  };
}

interface VerboseJson {
  language?: string;
  text?: string;
  segments?: Array<{ start: number; end: number; text: string }>;
}

/** Sends 16 kHz mono WAV audio to the endpoint, asking for segments with their times (verbose_json). */
export async function transcribeOverHttp(
  wav: Buffer,
  endpoint: NonNullable<ReturnType<typeof transcriptionEndpoint>>,
): Promise<Transcript> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(wav)], { type: 'audio/wav' }), 'audio.wav');
  form.append('model', endpoint.model);
  form.append('response_format', 'verbose_json');
  form.append('timestamp_granularities[]', 'segment');
  const response = await fetch(`${endpoint.url}/v1/audio/transcriptions`, {
    method: 'POST',
    body: form,
    headers: endpoint.key ? { authorization: `Bearer ${endpoint.key}` } : {},
    signal: AbortSignal.timeout(30 * 60_000),
  });
  if (!response.ok)
    throw new Error(`the transcription endpoint answered ${response.status} ${(await response.text()).slice(0, 200)}`);
  const body = (await response.json()) as VerboseJson;
  const segments = (body.segments ?? [])
    .map((s) => ({ start: s.start, end: s.end, text: s.text.trim() }))
    .filter((s) => s.text !== '');
  if (segments.length === 0 && body.text?.trim()) segments.push({ start: 0, end: 0, text: body.text.trim() });
  return {
    engine: `openai:${endpoint.model}@${new URL(endpoint.url).host}`,
    language: body.language ?? null,
    segments,
  };
}

/** A pause this long between words ends a segment. */
const SEGMENT_GAP_S = 0.6;

/**
 * The offline English default: CMU pocketsphinx (Debian `pocketsphinx` + `pocketsphinx-en-us`)
 * with word times, grouped into segments at pauses. Weak on accents and synthetic voices; its
 * timing is good. Null when pocketsphinx is not installed.
 */
export async function transcribeOffline(wavFile: string): Promise<Transcript | null> {
  let stdout: string;
  try {
    ({ stdout } = await run('pocketsphinx_continuous', ['-infile', wavFile, '-time', 'yes', '-logfn', '/dev/null'], {
      timeout: 60 * 60_000,
      maxBuffer: 64 * 1024 * 1024,
    }));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const segments: TranscriptSegment[] = [];
  let current: TranscriptSegment | null = null;
  for (const line of stdout.split('\n')) {
    const match = /^(\S+) (\d+\.\d+) (\d+\.\d+) [\d.]+$/.exec(line.trim());
    if (!match) continue;
    const word = match[1]!.replace(/\(\d+\)$/, '');
    if (word.startsWith('<') || word.startsWith('[') || word.startsWith('++')) continue;
    const start = Number(match[2]);
    const end = Number(match[3]);
    if (current && start - current.end <= SEGMENT_GAP_S) {
      current.text += ` ${word}`;
      current.end = end;
    } else {
      current = { start, end, text: word };
      segments.push(current);
    }
  }
  return { engine: 'pocketsphinx-en-us', language: 'en', segments };
}

import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A 9-second MP4 made on the spot: red, blue, then green (scene changes at 3 s and 6 s), with
 * `speech` spoken by espeak-ng from second `speechAt`, QuickTime creation time and location tags.
 */
export async function spokenVideo(speech: string, speechAt: number): Promise<Buffer> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'memex-video-'));
  try {
    const voice = path.join(dir, 'voice.wav');
    await run('espeak-ng', ['-s', '140', '-w', voice, speech]);
    const out = path.join(dir, 'clip.mp4');
    const colour = (c: string) => ['-f', 'lavfi', '-i', `color=c=${c}:s=320x240:d=3,format=yuv420p`];
    await run('ffmpeg', [
      '-y',
      '-loglevel',
      'error',
      ...colour('red'),
      ...colour('blue'),
      ...colour('green'),
      '-i',
      voice,
      '-filter_complex',
      `[0:v][1:v][2:v]concat=n=3:v=1:a=0[v];[3:a]adelay=${speechAt * 1000}:all=1,apad=whole_dur=9,aresample=16000[a]`,
      '-map',
      '[v]',
      '-map',
      '[a]',
      '-c:v',
      'libx264',
      '-c:a',
      'aac',
      '-t',
      '9',
      '-metadata',
      'creation_time=2024-05-01T10:00:00Z',
      '-metadata',
      'location=+48.8584+002.2945/',
      '-movflags',
      'use_metadata_tags',
      out,
    ]);
    return await fs.readFile(out);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** Whether espeak-ng and ffmpeg are here to make a spoken video (Debian packages; provision --with-media). */
export async function recordingToolsSkip(): Promise<string | false> {
  for (const tool of ['espeak-ng', 'ffmpeg', 'ffprobe']) {
    try {
      await run(tool, [tool === 'espeak-ng' ? '--version' : '-version']);
    } catch {
      return `needs ${tool} (deploy/local/provision.sh --with-media)`;
    }
  }
  return false;
}

export interface FakeTranscriber {
  url: string;
  /** What each request carried: its form fields and the audio's size. */
  requests: Array<{ model: string; format: string; audioBytes: number; audioIsWav: boolean }>;
  close(): Promise<void>;
}

/**
 * An OpenAI-compatible `/v1/audio/transcriptions` server (a real HTTP server, multipart in,
 * verbose_json out) answering with the given segments: what a whisper endpoint would say.
 */
export async function fakeTranscriber(
  segments: Array<{ start: number; end: number; text: string }>,
): Promise<FakeTranscriber> {
  const requests: FakeTranscriber['requests'] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const form = await new Request('http://fake', {
      method: 'POST',
      headers: req.headers as Record<string, string>,
      body: Buffer.concat(chunks),
    }).formData();
    if (req.url !== '/v1/audio/transcriptions' || req.method !== 'POST') {
      res.writeHead(404).end();
      return;
    }
    const file = form.get('file') as File;
    const audio = Buffer.from(await file.arrayBuffer());
    requests.push({
      model: String(form.get('model')),
      format: String(form.get('response_format')),
      audioBytes: audio.length,
      audioIsWav:
        audio.subarray(0, 4).toString('latin1') === 'RIFF' && audio.subarray(8, 12).toString('latin1') === 'WAVE',
    });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        task: 'transcribe',
        language: 'english',
        duration: 9,
        text: segments.map((s) => s.text).join(' '),
        segments,
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

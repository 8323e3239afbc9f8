import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { RECORDING_FILE_TYPES } from '@memex/contracts';
import { ffmpegFile, missingTool } from '@memex/testing';
import { createRegistry } from '../registry.js';
import { RejectedItem, type AvItem } from '../handler.js';

const run = promisify(execFile);
const registry = createRegistry();

/** Speech made by espeak-ng, encoded by ffmpeg, transcribed by pocketsphinx: all three, or why not. */
function missingTools(): string | false {
  const install = 'deploy/local/provision.sh --with-media';
  return (
    missingTool('espeak-ng', ['--version'], install) ||
    missingTool('ffmpeg', ['-version'], install) ||
    missingTool('pocketsphinx_continuous', ['-h'], install)
  );
}

/** Speech by espeak-ng starting at `at` seconds, as an MP3. */
async function spokenMp3(speech: string, at: number): Promise<Buffer> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'memex-speech-'));
  try {
    await run('espeak-ng', ['-s', '140', '-w', path.join(dir, 'voice.wav'), speech]);
    await run('ffmpeg', [
      '-y',
      '-loglevel',
      'error',
      '-i',
      path.join(dir, 'voice.wav'),
      '-af',
      `adelay=${at * 1000}:all=1,apad=pad_dur=1`,
      '-c:a',
      'libmp3lame',
      path.join(dir, 'speech.mp3'),
    ]);
    return await fs.readFile(path.join(dir, 'speech.mp3'));
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

describe('audio and video handler', { skip: missingTools() }, () => {
  it('transcribes offline with pocketsphinx when no endpoint is configured, each segment at its second', async () => {
    const item = (await registry.parse({
      type: 'audio/mpeg',
      bytes: await spokenMp3('please call me back about the invoice tomorrow morning', 3),
      attributes: { filename: 'voicemail.mp3' },
    })) as AvItem;
    assert.equal(item.kind, 'audio');
    assert.equal(item.meta.audio?.codec, 'mp3');
    assert.ok(Math.abs((item.meta.duration ?? 0) - 7) < 1.5, `duration ${item.meta.duration}`);
    const transcript = item.meta.transcript!;
    assert.equal(transcript.engine, 'pocketsphinx-en-us');
    // Its words on a synthetic voice are often wrong; its timing is right: speech starts at 3 s.
    assert.ok(transcript.segments.length > 0);
    assert.ok(Math.abs(transcript.segments[0]!.start - 3) < 0.6, `first segment at ${transcript.segments[0]!.start} s`);
    assert.ok(item.text.startsWith('voicemail.mp3\n'));
  });

  it('rejects bytes that are no recording, saying what ffprobe found', async () => {
    await assert.rejects(
      registry.parse({ type: 'video/mp4', bytes: Buffer.from('definitely not a video file, just some words') }),
      (error: RejectedItem) => /^not a playable recording: ffprobe says/.test(error.reason) && !error.unexpected,
    );
  });

  it("reads the recordings twenty years leave: a compact camera's AVI, a camcorder's .MTS, an old phone's .3gp, MPEG, Windows Media, FLAC", async () => {
    const made: Array<[name: string, args: string[], kind: 'video' | 'audio', date: string | null]> = [
      ['DSCN0001.AVI', ['-c:v', 'mjpeg', '-c:a', 'pcm_s16le', '-metadata', 'date=2009-06-01'], 'video', '2009-06-01'],
      ['00001.MTS', ['-c:v', 'mpeg2video', '-c:a', 'mp2'], 'video', null],
      [
        'VID_0001.3gp',
        [
          '-c:v',
          'h263',
          '-s',
          '176x144',
          '-ar',
          '8000',
          '-ac',
          '1',
          '-c:a',
          'aac',
          '-metadata',
          'creation_time=2008-03-02T09:15:00Z',
        ],
        'video',
        '2008-03-02T09:15:00',
      ],
      ['MOV001.MPG', ['-c:v', 'mpeg1video', '-c:a', 'mp2'], 'video', null],
      ['party.wmv', ['-c:v', 'wmv2', '-c:a', 'wmav2'], 'video', null],
      ['track01.flac', ['-vn'], 'audio', null],
    ];
    for (const [name, args, kind, date] of made) {
      const video = kind === 'video' ? ['-f', 'lavfi', '-i', 'testsrc=size=176x144:rate=25:duration=1'] : [];
      const bytes = await ffmpegFile(name, [...video, '-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', ...args]);
      const type = RECORDING_FILE_TYPES[path.extname(name).slice(1).toLowerCase()]!;
      assert.ok(type, `a type for ${name}`);
      const item = (await registry.parse({
        type,
        bytes,
        attributes: { filename: name, modified: '2020-01-01T00:00:00Z' },
      })) as AvItem;
      assert.equal(item.kind, kind, name);
      assert.ok(item.meta.audio, `${name}: its audio`);
      if (kind === 'video') assert.ok((item.meta.video?.width ?? 0) > 0, `${name}: its video`);
      // Dated by the recording's own tags where the container has them, else by the file.
      assert.ok(item.occurredAt?.startsWith(date ?? '2020-01-01'), `${name}: ${item.occurredAt}`);
    }
  });
});

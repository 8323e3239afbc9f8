import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import sharp from 'sharp';
import type { INestApplicationContext } from '@nestjs/common';
import {
  ItemsContent,
  ItemsGet,
  MediaGet,
  MemexError,
  OWNER_SCOPE,
  SourcesGet,
  SourcesList,
  SourcesRescan,
  type MethodDefinition,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { Bus, callMethod, readLog } from '@memex/bus';
import { REPO_ROOT } from '@memex/config';
import { IngestModule } from '@memex/ingest';
import { docx, pdf } from '@memex/ingest/testing';
import { MediaModule } from '@memex/media';
import { photographedSign } from '@memex/media/testing';
import { startService } from '@memex/runtime';
import { SourcesModule } from '@memex/sources';
import { createTestEnv, waitUntil, type TestEnv } from '@memex/testing';

const MEMEX = path.join(REPO_ROOT, 'cli', 'bin', 'memex.js');

/** Ingest and sources (which watches the workers' heartbeats) on their own NATS and database. */
interface Stack {
  env: TestEnv;
  bus: Bus;
  call<M extends MethodDefinition>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>>;
  restartSources(between: () => Promise<void>): Promise<void>;
  stop(): Promise<void>;
}

async function startStack(): Promise<Stack> {
  const env = await createTestEnv();
  const ingest = await startService((config) => IngestModule.register(config), env.config);
  // Media asks the worker for its photo's thumbnails (made there) and stores them; faces and object tags are not this test's.
  process.env['MEMEX_FACE_MODEL'] ??= 'off';
  process.env['MEMEX_OBJECT_TAGS'] ??= 'off';
  const media = await startService((config) => MediaModule.register(config), env.config);
  const startSources = () => startService((config) => SourcesModule.register(config), env.config);
  let sources: INestApplicationContext = await startSources();
  const bus = await Bus.connect(env.config.natsUrl, 'worker-test');
  return {
    env,
    bus,
    call: (method, params) => callMethod(bus, method, params, { scope: OWNER_SCOPE, timeoutMs: 60_000 }),
    async restartSources(between) {
      await sources.close();
      await between();
      sources = await startSources();
    },
    async stop() {
      await bus.close();
      await sources.close();
      await media.close();
      await ingest.close();
      await env.stop();
    },
  };
}

/** What the worker processes said on stderr (their log), over the test. */
let workerLog = '';

/** `memex worker` as its own process, on its own folder and data directory, joined to the test's NATS. */
function startWorker(stack: Stack, folder: string, dataDir: string, name = 'nas', ...more: string[]): ChildProcess {
  const child = spawn(
    process.execPath,
    [
      MEMEX,
      'worker',
      ...more,
      '--name',
      name,
      '--folder',
      folder,
      '--data',
      dataDir,
      '--nats',
      stack.env.config.natsUrl,
      '--heartbeat-seconds',
      '0.3',
      '--rescan-seconds',
      '600',
    ],
    { stdio: ['ignore', 'inherit', 'pipe'] },
  );
  child.stderr!.on('data', (chunk: Buffer) => {
    workerLog += chunk.toString();
    process.stderr.write(`[worker] ${chunk}`);
  });
  return child;
}

async function stopWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}

/** The items located on a worker (nas unless named), from the log: location → id. */
async function workerItems(stack: Stack, name = 'nas'): Promise<Map<string, string>> {
  const items = new Map<string, string>();
  for await (const { event } of readLog(stack.bus, { filter: 'memex.evt.item.ingested.>', untilCaughtUp: true })) {
    const data = event.data as { id: string; location?: string };
    if (data.location?.startsWith(`worker:${name}:`)) items.set(data.location, data.id);
  }
  return items;
}

/** The item of one file on a worker, once it is in the log and the read model. */
async function itemOf(stack: Stack, name: string, file: string): Promise<string> {
  let id: string | undefined;
  await waitUntil(
    async () => (id = (await workerItems(stack, name)).get(`worker:${name}:${file}`)) !== undefined,
    `${file} as an item`,
    {
      timeoutMs: 60_000,
      everyMs: 250,
    },
  );
  await waitUntil(async () => (await stack.call(ItemsGet, { id: id! }).catch(() => null)) !== null, `${file} read`);
  return id!;
}

/** The whole original, read through memex.items.content range by range. */
async function content(stack: Stack, id: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (let offset: number | null = 0; offset !== null;) {
    const part: { data: string; next_offset: number | null } = await stack.call(ItemsContent, { id, offset });
    parts.push(Buffer.from(part.data, 'base64'));
    offset = part.next_offset;
  }
  return Buffer.concat(parts);
}

describe('memex worker: folders on another machine', () => {
  let stack: Stack;
  let worker: ChildProcess | undefined;
  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    if (worker) await stopWorker(worker);
    await stack.stop();
  });

  test('its files become items located on it, their content comes through it, and they are unreachable while it is away', async () => {
    const folder = path.join(stack.env.home, 'nas', 'volume1', 'photos');
    fs.mkdirSync(path.join(folder, '2024'), { recursive: true });
    // A photo larger than one NATS reply (so content is read in chunks), with EXIF time and place;
    // a photographed sign (text by OCR); a note, a PDF, a Word file, an HTML page; a file nothing reads.
    const photo = await sharp({
      create: {
        width: 900,
        height: 700,
        channels: 3,
        background: { r: 0, g: 0, b: 0 },
        noise: { type: 'gaussian', mean: 128, sigma: 60 },
      },
    })
      .jpeg({ quality: 100 })
      .withExif({
        IFD0: { Make: 'TestPhone' },
        IFD2: { DateTimeOriginal: '2024:06:15 12:00:00', OffsetTimeOriginal: '+02:00' },
        IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '48/1 30/1 0/1', GPSLongitudeRef: 'E', GPSLongitude: '2/1 20/1 0/1' },
      })
      .toBuffer();
    assert.ok(photo.length > 600 * 1024, `the photo is ${photo.length} bytes`);
    fs.writeFileSync(path.join(folder, '2024', 'beach.jpg'), photo);
    fs.writeFileSync(path.join(folder, '2024', 'sign.jpg'), await photographedSign(['MAPLE STREET BAKERY']));
    fs.writeFileSync(path.join(folder, 'notes.md'), '# Camera settings\n\nISO 100 at the beach.\n');
    fs.writeFileSync(path.join(folder, 'report.pdf'), pdf([['Harbour report', 'Moorings for twelve boats.']]));
    fs.writeFileSync(path.join(folder, 'letter.docx'), docx([{ text: 'Dear harbour master, the pontoon leaks.' }]));
    fs.writeFileSync(
      path.join(folder, 'page.html'),
      '<html><head><title>Tide table</title></head><body><p>High water at 06:40.</p></body></html>',
    );
    fs.writeFileSync(path.join(folder, 'thumbs.db'), 'x');
    // A saved message: read with its folder as its label and its file's time, never a file name.
    fs.mkdirSync(path.join(folder, 'Mail'));
    fs.writeFileSync(
      path.join(folder, 'Mail', 'moorings.eml'),
      'From: Harbour Office <office@harbour.example>\r\nTo: me@example.org\r\nSubject: Mooring fees\r\n' +
        'Message-ID: <fees.2024@harbour.example>\r\n\r\nThe fees are due in June.\r\n',
    );
    const dataDir = path.join(stack.env.home, 'worker-data');
    // Every request to the worker, in order (a plain subscriber gets a copy of each): which read its bytes, which asked it for pictures.
    const asked: Array<{ what: string; path: string }> = [];
    stack.bus.nc.subscribe('memex.worker.nas.*', {
      callback: (_, message) => {
        const what = message.subject.split('.').at(-1)!;
        if (what !== 'heartbeat') asked.push({ what, path: message.json<{ path: string }>().path });
      },
    });

    worker = startWorker(stack, folder, dataDir);
    await waitUntil(async () => (await workerItems(stack)).size === 7, 'the worker’s seven files as items', {
      timeoutMs: 120_000,
      everyMs: 250,
    });
    const items = await workerItems(stack);
    const at = (relative: string) => items.get(`worker:nas:${path.join(folder, relative)}`)!;
    const photoId = at('2024/beach.jpg');
    const noteId = at('notes.md');
    assert.ok(photoId && noteId, [...items.keys()].join(', '));

    await waitUntil(
      async () => (await stack.call(ItemsGet, { id: photoId }).catch(() => null)) !== null,
      'the photo in the read model',
    );
    // The worker made the photo's thumbnails on its own CPU, asked by media, which stored them and
    // published photo.analyzed.
    await waitUntil(
      async () => ((await stack.call(MediaGet, { item_id: photoId }).catch(() => null))?.renditions.length ?? 0) > 0,
      'thumbnails of the worker’s photo',
      { timeoutMs: 60_000, everyMs: 250 },
    );
    const beach = path.join(folder, '2024', 'beach.jpg');
    assert.ok(
      asked.some((a) => a.what === 'derive' && a.path === beach),
      `media asked the worker for the photo's renditions: ${JSON.stringify(asked)}`,
    );
    assert.match(
      workerLog,
      new RegExp(`worker nas: renditions of ${beach.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: 2 pictures`),
    );
    const renditions = (await stack.call(MediaGet, { item_id: photoId })).renditions;
    assert.deepEqual(renditions.map((r) => [r.name, r.width, r.height]).sort(), [
      ['preview', 900, 700],
      ['thumb', 256, 199],
    ]);

    // Ingest asked the worker to extract each file, on the worker's CPU: text, EXIF, OCR came
    // back, and nothing on the memex host read a byte of any of them.
    assert.deepEqual(
      asked
        .filter((a) => a.what === 'extract')
        .map((a) => path.relative(folder, a.path))
        .sort(),
      ['2024/beach.jpg', '2024/sign.jpg', 'Mail/moorings.eml', 'letter.docx', 'notes.md', 'page.html', 'report.pdf'],
    );
    assert.deepEqual(
      asked.filter((a) => a.what === 'read'),
      [],
      'no bytes read through the worker',
    );
    const text = async (relative: string) => (await stack.call(ItemsGet, { id: at(relative) })).text;
    assert.match(await text('report.pdf'), /Moorings for twelve boats/);
    assert.match(await text('letter.docx'), /the pontoon leaks/);
    assert.match(await text('page.html'), /High water at 06:40/);
    assert.match(await text('notes.md'), /ISO 100 at the beach/);
    const mail = await stack.call(ItemsGet, { id: at('Mail/moorings.eml') });
    assert.equal(mail.kind, 'email');
    assert.equal(mail.title, 'Mooring fees');
    assert.deepEqual(mail.meta['labels'], ['Mail']);
    assert.match(await text('2024/sign.jpg'), /BAKERY/i, 'the sign read by OCR on the worker');
    const beachItem = await stack.call(ItemsGet, { id: photoId });
    assert.equal(beachItem.occurred_at, '2024-06-15T10:00:00.000Z', 'the EXIF capture time, read on the worker');
    const gps = beachItem.meta['gps'] as { latitude: number; longitude: number };
    assert.deepEqual([gps.latitude.toFixed(3), gps.longitude.toFixed(3)], ['48.500', '2.333']);
    assert.match(workerLog, /worker nas: extract of .*report\.pdf: document, \d+ characters of text/);

    // memex sources lists the worker: its folder, when it was last heard, that it makes its thumbnails.
    const listed = (await stack.call(SourcesList, {})).sources.find((s) => s.id === 'worker.nas');
    assert.equal(listed?.kind, 'worker');
    assert.equal(listed.state, 'active');
    assert.equal(listed.root, 'worker:nas:/');
    assert.deepEqual(listed.worker?.folders, [folder]);
    assert.equal(listed.worker.reachable, true);
    assert.equal(listed.worker.derives, true);
    assert.equal(listed.worker.extracts, true);
    // Its items, as its heartbeat counts them (the files of its record that are items).
    await waitUntil(
      async () => (await stack.call(SourcesGet, { id: 'worker.nas' })).source.counts.items === 7,
      'the worker’s seven items counted',
    );
    assert.ok(Date.now() - Date.parse(listed.worker.last_seen!) < 60_000, listed.worker.last_seen ?? 'never seen');

    const got = await stack.call(ItemsGet, { id: photoId });
    assert.equal(got.kind, 'photo');
    assert.equal(got.location, `worker:nas:${path.join(folder, '2024', 'beach.jpg')}`);
    assert.equal(got.unreachable ?? null, null);
    assert.equal(got.size, photo.length);
    assert.equal(got.content_type, 'image/jpeg');
    assert.ok(
      (await content(stack, photoId)).equals(photo),
      'memex.items.content returns the original bytes, read through the worker',
    );
    assert.equal((await content(stack, noteId)).toString(), '# Camera settings\n\nISO 100 at the beach.\n');
    const sha = createHash('sha256').update(photo).digest('hex');
    assert.equal(
      fs.existsSync(path.join(stack.env.config.blobsDir, sha.slice(0, 2), sha.slice(2, 4), sha)),
      false,
      'the memex keeps no copy of the photo',
    );

    // A file written while the worker runs is picked up as it happens (the rescan is 10 minutes away).
    const harbour = path.join(folder, '2024', 'harbour.md');
    fs.writeFileSync(harbour, '# Harbour\n\nBoats at dawn.\n');
    await waitUntil(async () => (await workerItems(stack)).has(`worker:nas:${harbour}`), 'the new file as an item', {
      timeoutMs: 30_000,
      everyMs: 250,
    });
    await waitUntil(
      async () => (await stack.call(SourcesGet, { id: 'worker.nas' })).source.counts.items === 8,
      'the new item counted',
    );

    // The worker goes away: its items are marked unreachable, not deleted; content says why.
    await stopWorker(worker);
    await waitUntil(
      async () => (await stack.call(ItemsGet, { id: photoId })).unreachable != null,
      'the photo marked unreachable',
      { timeoutMs: 30_000, everyMs: 200 },
    );
    const away = await stack.call(ItemsGet, { id: noteId });
    const gone = (await stack.call(SourcesGet, { id: 'worker.nas' })).source;
    assert.equal(gone.state, 'error');
    assert.equal(gone.counts.items, 8, 'its items still counted while it is away');
    assert.equal(gone.worker?.reachable, false);
    assert.match(gone.reason!, /unreachable: no heartbeat since /);
    assert.match(away.unreachable!.why, /worker "nas" has sent no heartbeat/);
    await assert.rejects(
      content(stack, photoId),
      (error: unknown) => error instanceof MemexError && error.code === 'unavailable',
    );

    // It comes back: the marks go, the content is there again, and nothing was ingested twice.
    worker = startWorker(stack, folder, dataDir);
    await waitUntil(
      async () => (await stack.call(ItemsGet, { id: photoId })).unreachable == null,
      'the photo reachable again',
      { timeoutMs: 30_000, everyMs: 200 },
    );
    assert.ok((await content(stack, photoId)).equals(photo));
    assert.equal((await workerItems(stack)).size, 8, 'no file became a second item');

    // The worker goes away while the sources service is down: once it is back, it knows the
    // worker from the log and marks its items when no heartbeat comes. Its items are counted
    // from the read model as soon as the service answers, before any heartbeat could be.
    const running = worker;
    await stack.restartSources(() => stopWorker(running));
    const restarted = (await stack.call(SourcesGet, { id: 'worker.nas' })).source;
    assert.deepEqual(
      [restarted.counts.items, restarted.counts.in_place, restarted.worker?.last_seen],
      [8, 8, null],
      'counted right after the restart',
    );
    await waitUntil(
      async () => (await stack.call(ItemsGet, { id: photoId })).unreachable != null,
      'the photo marked unreachable after the restart',
      { timeoutMs: 40_000, everyMs: 250 },
    );
  });

  test('a file its reader refuses is recorded once with why and read again on a rescan; jobs queued on the worker are its backlog', async () => {
    const folder = path.join(stack.env.home, 'shelf', 'docs');
    fs.mkdirSync(folder, { recursive: true });
    const broken = path.join(folder, 'broken.pdf');
    fs.writeFileSync(broken, 'this was never a PDF');
    const sign = path.join(folder, 'sign.jpg');
    fs.writeFileSync(sign, await photographedSign(['HARBOUR MASTER OFFICE']));
    fs.writeFileSync(path.join(folder, 'ok.md'), '# Shelf\n\nBooks about boats.\n');
    const refusals = () =>
      workerLog.split('\n').filter((line) => line.includes(`extract of ${broken}: rejected`)).length;
    // What the memex asks the worker to extract (a plain subscriber gets a copy of each request).
    const asked: string[] = [];
    const watching = stack.bus.nc.subscribe('memex.worker.shelf.extract', {
      callback: (_, message) => {
        asked.push(message.json<{ path: string }>().path);
      },
    });
    const shelf = startWorker(stack, folder, path.join(stack.env.home, 'shelf-data'), 'shelf', '--extract-jobs', '1');
    try {
      const ok = await itemOf(stack, 'shelf', path.join(folder, 'ok.md'));
      await itemOf(stack, 'shelf', sign);
      // The worker read each file before sending it: ingest's request was answered with that
      // reading (the OCR of the sign too), and the refused PDF was never sent, so no request
      // of the memex waited on a reading.
      assert.match(workerLog, /worker shelf: extract of .*ok\.md: document, \d+ characters of text \(read ahead\)/);
      assert.match(workerLog, /worker shelf: extract of .*sign\.jpg: photo, \d+ characters of text \(read ahead\)/);
      assert.deepEqual(asked.sort(), [path.join(folder, 'ok.md'), sign].sort());
      assert.match((await stack.call(ItemsGet, { id: ok })).text, /Books about boats/);
      const failures = async () => (await stack.call(SourcesGet, { id: 'worker.shelf' })).failures;
      await waitUntil(async () => (await failures()).length === 1, 'the refused PDF listed with why');
      const [failure] = await failures();
      assert.equal(failure!.path, broken);
      assert.match(failure!.reason, /PDF/);
      const listed = (await stack.call(SourcesGet, { id: 'worker.shelf' })).source;
      assert.deepEqual([listed.counts.items, listed.counts.failed], [2, 1]);
      assert.equal(refusals(), 1);

      // Another scan (a new file) does not read the refused one again.
      const more = path.join(folder, 'more.md');
      fs.writeFileSync(more, '# More\n\nA second shelf.\n');
      await itemOf(stack, 'shelf', more);
      assert.equal(refusals(), 1, 'the refused file is not read again until asked');

      // memex sources rescan worker.shelf: the worker scans now and reads the refused file again.
      const rescanned = await stack.call(SourcesRescan, { id: 'worker.shelf' });
      assert.deepEqual([rescanned.files, rescanned.failed, rescanned.ingested], [4, 1, 0]);
      assert.equal(refusals(), 2);
      assert.equal((await failures()).length, 1, 'still one failure, recorded again');

      // Jobs asked of the worker wait for its one slot: its heartbeat counts them, and they are
      // its source's pipelines backlog until done.
      const ended: string[] = [];
      const inbox = stack.bus.nc.subscribe(`_INBOX.shelf-test.${Date.now()}`, {
        callback: (_, message) => {
          if (message.data.length === 0) ended.push(message.headers?.get('Memex-Rejected') ?? 'done');
        },
      });
      for (let i = 0; i < 4; i++)
        stack.bus.nc.publish('memex.worker.shelf.extract', JSON.stringify({ path: sign, type: 'image/jpeg' }), {
          reply: inbox.getSubject(),
        });
      const source = async () => (await stack.call(SourcesGet, { id: 'worker.shelf' })).source;
      await waitUntil(async () => ((await source()).worker?.jobs_waiting ?? 0) > 0, 'the queued jobs heard');
      const busy = await source();
      assert.ok(busy.pipeline_backlog! >= busy.worker!.jobs_waiting!, JSON.stringify(busy));
      await waitUntil(async () => ended.length === 4, 'the four jobs done', { timeoutMs: 120_000, everyMs: 250 });
      await waitUntil(async () => (await source()).worker?.jobs_waiting === 0, 'no job left on the worker');
      assert.deepEqual(ended, ['done', 'done', 'done', 'done']);
      inbox.unsubscribe();
    } finally {
      watching.unsubscribe();
      await stopWorker(shelf);
    }
  });

  test('a worker started with --extract-jobs 0 leaves extraction to the memex, which reads its files through it', async () => {
    const folder = path.join(stack.env.home, 'lan', 'docs');
    fs.mkdirSync(folder, { recursive: true });
    const note = path.join(folder, 'minutes.md');
    fs.writeFileSync(note, '# Minutes\n\nThe pontoon is fixed.\n');
    // Only reads are watched: a subscriber on the extract subject would be a responder that never answers.
    const reads: string[] = [];
    const watching = stack.bus.nc.subscribe('memex.worker.lan.read', {
      callback: (_, message) => {
        reads.push(message.json<{ path: string }>().path);
      },
    });
    const lan = startWorker(stack, folder, path.join(stack.env.home, 'lan-data'), 'lan', '--extract-jobs', '0');
    try {
      const id = await itemOf(stack, 'lan', note);
      assert.match((await stack.call(ItemsGet, { id })).text, /The pontoon is fixed/);
      assert.ok(reads.includes(note), 'ingest read the note through the worker to extract it');
      const listed = (await stack.call(SourcesGet, { id: 'worker.lan' })).source;
      assert.equal(listed.worker?.extracts, false);
    } finally {
      watching.unsubscribe();
      await stopWorker(lan);
    }
  });

  test('a reading larger than one NATS message comes back in pieces and is whole', async () => {
    const folder = path.join(stack.env.home, 'big', 'books');
    fs.mkdirSync(folder, { recursive: true });
    const book = path.join(folder, 'book.md');
    // About 1.5 MB of text: its reading is three replies of at most 512 KB.
    const lines = Array.from({ length: 30_000 }, (_, i) => `Line ${i} of the long book, about tides and boats.`);
    fs.writeFileSync(book, `# The long book\n\n${lines.join('\n')}\n`);
    const big = startWorker(stack, folder, path.join(stack.env.home, 'big-data'), 'big');
    try {
      const id = await itemOf(stack, 'big', book);
      const text = (await stack.call(ItemsGet, { id })).text;
      assert.ok(text.length > 1_400_000, `${text.length} characters`);
      assert.match(text, /Line 0 of the long book/);
      assert.match(text, /Line 29999 of the long book, about tides and boats\.$/);
      assert.match(workerLog, /worker big: extract of .*book\.md: document, \d{7} characters of text/);
    } finally {
      await stopWorker(big);
    }
  });
});

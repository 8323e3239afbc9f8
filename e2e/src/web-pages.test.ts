// The web UI's pages for the newer services, in real headless Chromium against a running stack:
// photos (a timeline of thumbnails, face clusters named, merged and split from the page, a photo
// with its faces and time), a video playing (seeking by Range requests) beside its transcript found
// to the second, the calendar (a week, an event's attendees and brief), the mail client's views, a
// mail composed and sent (a real dovecot and SMTP server), sources and jobs (a watched folder's state and last scan), with axe-core on every page and
// screenshots; an agent token's session never shows photos.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page, Response as PlaywrightResponse } from 'playwright-core';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  AccountsAddImap,
  CalendarBrief,
  CalendarList,
  FacesClusters,
  FacesList,
  Ingest,
  MediaEvents,
  NotesPut,
  SourcesAdd,
  SourcesList,
  TokensCreate,
} from '@memex/contracts';
import { AckPolicy } from '@nats-io/jetstream';
import { Bus, encodeJson, JOBS_STREAM, readLog, typeFilter } from '@memex/bus';
import { ics } from '@memex/calendar-sync/testing';
import { Dovecot, dovecotSkip, TestSmtp } from '@memex/mail-sync/testing';
import {
  faceTestSet,
  faceTestSetSkip,
  fakeTranscriber,
  recordingToolsSkip,
  spokenVideo,
  type FakeTranscriber,
} from '@memex/media/testing';
import { waitUntil } from '@memex/testing';
import { mailItem, mime } from './mail.js';
import { speakWorkerHeartbeat } from './worker-heartbeat.js';
import { startStack, type TestStack } from './stack.js';
import {
  assertWebBuilt,
  browserSkip,
  DESKTOP,
  launchBrowser,
  openContext,
  PHONE,
  screenshot,
  seriousViolations,
  signIn,
} from './web-browser.js';

const skip = browserSkip() || faceTestSetSkip();
const videoSkip = await recordingToolsSkip();
const mailSkip = dovecotSkip();
/** The connected IMAP account mail is sent from. */
const ACCOUNT = 'owner@example.com';

/** A meeting written in Paris time, with an organizer and two attendees. */
const REVIEW = [
  'UID:review-42@example.com',
  'DTSTART;TZID=Europe/Paris:20260318T100000',
  'DTEND;TZID=Europe/Paris:20260318T110000',
  'SUMMARY:Quarterly review',
  'LOCATION:Harbour office',
  'ORGANIZER;CN=Ada Lovelace:mailto:ada@example.com',
  'ATTENDEE;CN=Bob Stone;PARTSTAT=ACCEPTED:mailto:bob@example.com',
  'ATTENDEE;CN=Carol Diaz;PARTSTAT=NEEDS-ACTION:mailto:carol@example.com',
];

describe('the web UI pages for photos, the calendar, mail and sources in headless Chromium', { skip }, () => {
  let stack: TestStack;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let photoIds: string[] = [];
  let hopperIds: string[] = [];
  let agentToken = '';
  let mailId = '';
  let folder = '';
  let videoId = '';
  let transcriber: FakeTranscriber | undefined;
  let dovecot: Dovecot | undefined;
  let smtp: TestSmtp | undefined;

  /**
   * No serious or critical axe-core violation at either width, and a screenshot of each. Pages
   * showing the faces test set's portraits (not ours to commit) are never written to the committed
   * set (MEMEX_SCREENSHOTS), only to the temporary folder.
   */
  async function check(name: string, p: Page = page, { portraits = false } = {}): Promise<void> {
    const shoot = !portraits || !process.env['MEMEX_SCREENSHOTS'];
    assert.deepEqual(await seriousViolations(p), [], name);
    if (shoot) await screenshot(p, `${name}-desktop`);
    await p.setViewportSize(PHONE);
    if (shoot) await screenshot(p, `${name}-phone`);
    assert.deepEqual(await seriousViolations(p), [], `${name} at phone width`);
    await p.setViewportSize(DESKTOP);
  }

  /** Photos of one person from the faces test set, ingested with a capture time on that day: their ids. */
  async function portraits(person: 'collins' | 'hopper', count: number, day: string): Promise<string[]> {
    const photos = (await faceTestSet())
      .filter((p) => p.people.length === 1 && p.people[0]!.person === person)
      .slice(0, count);
    const { results } = await stack.owner.call(Ingest, {
      items: photos.map((photo, i) => ({
        type: 'image/jpeg',
        data: photo.jpeg.toString('base64'),
        source: { kind: 'folder', id: 'e2e-web-photos' },
        external_id: `${person}-${i}.jpg`,
        // A Takeout-style capture time (these JPEGs carry no EXIF): events need a time.
        attributes: { filename: `${person}-${i}.jpg`, taken_at: `${day}T10:0${i}:00Z` },
      })),
    });
    const ids = results.map((r) => r.id!);
    assert.equal(ids.filter(Boolean).length, count, JSON.stringify(results));
    return ids;
  }

  before(async () => {
    assertWebBuilt();
    // Faces cluster from two (the default three is Immich's); events form soon after photos stop.
    process.env['MEMEX_FACE_MIN_FACES'] = '2';
    process.env['MEMEX_PHOTO_EVENTS_SETTLE_MS'] = '300';
    process.env['MEMEX_OBJECT_TAGS'] = 'off';
    if (!videoSkip) {
      // What a whisper endpoint would say of the clip: the words, at the second they start.
      transcriber = await fakeTranscriber([
        { start: 0.2, end: 3, text: ' Welcome aboard.' },
        { start: 3, end: 6.5, text: ' The boat leaves the harbour at nine.' },
      ]);
      process.env['MEMEX_TRANSCRIBE_URL'] = transcriber.url;
    }
    if (!mailSkip) {
      dovecot = await Dovecot.start(ACCOUNT);
      smtp = await new TestSmtp(dovecot, ACCOUNT).start();
    }
    stack = await startStack(['ingest', 'media', 'graph', 'calendar-sync', 'sources', 'mail-sync']);
    if (!videoSkip) {
      const video = await stack.owner.call(Ingest, {
        items: [
          {
            type: 'video/mp4',
            data: (await spokenVideo('Welcome aboard. The boat leaves the harbour at nine.', 0)).toString('base64'),
            source: { kind: 'folder', id: 'e2e-web-videos' },
            external_id: 'harbour.mp4',
            attributes: { filename: 'harbour.mp4' },
          },
        ],
      });
      videoId = video.results[0]!.id!;
      assert.ok(videoId, JSON.stringify(video.results));
    }
    folder = mkdtempSync(path.join(os.tmpdir(), 'memex-web-notes-'));
    writeFileSync(path.join(folder, 'harbour.md'), '# Harbour\n\nThe boat leaves at nine.\n');
    await stack.owner.call(SourcesAdd, { kind: 'folder', path: folder, id: 'web-notes' });
    const calendar = await stack.owner.call(Ingest, {
      items: [
        {
          type: 'text/calendar',
          data: Buffer.from(ics('PUBLISH', [REVIEW])).toString('base64'),
          source: { kind: 'upload', id: 'e2e-web-calendar' },
          external_id: 'review.ics',
        },
      ],
    });
    assert.equal(calendar.results[0]?.status, 'created', JSON.stringify(calendar.results));
    // Three photos of one person, and two of another a year earlier: a second cluster to merge and split.
    photoIds = await portraits('collins', 3, '2024-06-01');
    hopperIds = await portraits('hopper', 2, '2023-06-01');
    await waitUntil(
      async () => {
        const { clusters } = await stack.owner.call(FacesClusters, {});
        return clusters.some((c) => c.faces >= 3) && clusters.some((c) => c.faces === 2);
      },
      'a face cluster of the three photos and one of the other two',
      { everyMs: 500, timeoutMs: 180_000 },
    );
    await waitUntil(
      async () => (await stack.owner.call(MediaEvents, {})).events.some((e) => e.items.length === 3),
      'the photos grouped into an event',
      { everyMs: 300 },
    );
    const mail = await stack.owner.call(Ingest, {
      items: [
        mailItem(
          mime(
            [
              ['From', 'Ann Lee <ann@acme-corp.example>'],
              ['To', 'Bob Stone <bob@gmail.com>'],
              ['Subject', 'Dock keys'],
              ['Date', 'Tue, 4 Mar 2025 10:00:00 +0000'],
              ['Message-ID', '<k1@acme-corp.example>'],
            ],
            'Bob, where are the dock keys? Ann\n',
          ),
          'e2e-web-mail',
          'k1',
        ),
      ],
    });
    mailId = mail.results[0]!.id!;
    await waitUntil(
      async () =>
        (await stack.owner.call(CalendarList, { from: '2026-03-16T00:00:00Z', to: '2026-03-23T00:00:00Z' })).instances
          .length === 1,
      'the meeting in the calendar',
      { everyMs: 300 },
    );
    await waitUntil(
      async () =>
        (await stack.owner.call(CalendarBrief, { uid: 'review-42@example.com' })).brief.lines.some((l) =>
          l.text.includes('Carol Diaz attended'),
        ),
      "the graph's facts for the meeting's brief",
      { everyMs: 300 },
    );
    await waitUntil(
      async () => (await stack.owner.call(SourcesList, {})).sources.some((x) => x.id === 'web-notes' && x.last_scan),
      'the folder scanned once',
      { everyMs: 300 },
    );
    agentToken = (await stack.owner.call(TokensCreate, { name: 'helper', labels: ['client:acme'] })).token;
    browser = await launchBrowser();
    ({ page, errors } = await openContext(browser));
    await signIn(page, stack.url, stack.ownerToken);
  });

  after(async () => {
    await browser?.close();
    await stack?.stop();
    if (folder) rmSync(folder, { recursive: true, force: true });
    await transcriber?.close();
    await smtp?.stop();
    await dovecot?.stop();
    delete process.env['MEMEX_TRANSCRIBE_URL'];
    for (const name of ['MEMEX_FACE_MIN_FACES', 'MEMEX_PHOTO_EVENTS_SETTLE_MS', 'MEMEX_OBJECT_TAGS'])
      delete process.env[name];
  });

  test('photos: a timeline of thumbnails and a face cluster named from the page', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Photos' }).click();
    await page.waitForURL(/\/photos$/);
    const grid = page.locator('.photo-grid').first();
    await grid.locator('img.thumb').nth(2).waitFor();
    assert.equal(await grid.locator('img.thumb').count(), 3);
    // Each thumbnail is a real decoded image, not a broken one.
    assert.ok(
      await grid
        .locator('img.thumb')
        .first()
        .evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0),
    );
    const cluster = page.locator('.cluster').first();
    await cluster.getByText('Unnamed person', { exact: true }).waitFor();
    await cluster.locator('img.face-crop').waitFor();
    await check('photos', page, { portraits: true });
    await cluster.getByLabel('Name of Unnamed person').fill('Eileen Collins');
    await cluster.getByRole('button', { name: 'Name' }).click();
    await cluster.getByRole('link', { name: 'Eileen Collins' }).waitFor();
    const { clusters } = await stack.owner.call(FacesClusters, {});
    assert.ok(
      clusters.some((c) => c.name === 'Eileen Collins' && c.person_key !== null),
      JSON.stringify(clusters),
    );
  });

  test('a photo page shows its preview, time and the named face', async () => {
    await page.locator('.photo-grid a').first().click();
    await page.waitForURL(/\/item\//);
    await page.locator('figure.photo img.preview').waitFor();
    await page.getByRole('heading', { name: 'About this photo' }).waitFor();
    const faces = page.getByRole('list', { name: 'Faces' });
    await faces.getByRole('link', { name: 'Eileen Collins' }).waitFor();
    assert.match((await page.locator('dt:text-is("Taken") + dd').textContent()) ?? '', /2024/);
    await check('photo', page, { portraits: true });
    assert.deepEqual(errors, []);
  });

  test('faces: a cluster merged into another from the page, then a face moved out of it (a split)', async () => {
    const { clusters } = await stack.owner.call(FacesClusters, {});
    const collins = clusters.find((c) => c.name === 'Eileen Collins')!;
    const other = clusters.find((c) => c.name === null && c.faces === 2)!;
    assert.ok(collins && other, JSON.stringify(clusters));
    await page.goto(`${stack.url}/photos`);
    // A wrong merge, as a person might make one: the other person's two faces into Collins's.
    const card = page.locator(`li.cluster[data-cluster="${other.cluster_id}"]`);
    await card.getByLabel('Same person as').selectOption({ label: `Eileen Collins (${collins.faces} faces)` });
    await card.getByRole('button', { name: 'Merge' }).click();
    await card.waitFor({ state: 'detached' });
    const merged = page.locator(`li.cluster[data-cluster="${collins.cluster_id}"]`);
    const total = collins.faces + other.faces;
    await merged.getByText(`${total} faces in`).waitFor();
    const afterMerge = await stack.owner.call(FacesList, { cluster_id: collins.cluster_id });
    assert.equal(afterMerge.faces.length, total);
    // The split: one of the other person's faces moved out (not Collins), from the list of faces.
    await merged.getByText('Faces of Eileen Collins').click();
    const faces = merged.getByRole('list', { name: 'Faces of Eileen Collins' });
    await faces
      .locator('li')
      .nth(total - 1)
      .waitFor();
    await check('photos-faces', page, { portraits: true });
    const wrong = afterMerge.faces.find((f) => hopperIds.includes(f.item_id))!;
    const row = faces.locator('li', { has: page.locator(`a[href="/item/${wrong.item_id}"]`) }).first();
    await row.getByRole('combobox').selectOption({ label: 'no one (not Eileen Collins)' });
    await row.getByRole('button', { name: /^Move face/ }).click();
    await merged.getByText(`${total - 1} faces in`).waitFor();
    const [moved] = (await stack.owner.call(FacesList, { item_id: wrong.item_id })).faces.filter(
      (f) => f.face_id === wrong.face_id,
    );
    assert.equal(moved?.cluster_id, null, JSON.stringify(moved));
    assert.equal(moved?.corrected, true);
    assert.deepEqual(errors, []);
  });

  test("a video's page: its transcript, and a word found opens at its second", { skip: videoSkip }, async () => {
    await page.goto(`${stack.url}/item/${videoId}`);
    const transcript = page.getByRole('list', { name: 'Transcript' });
    await transcript.getByText('The boat leaves the harbour at nine.').waitFor();
    await page.getByLabel('Find in transcript').fill('harbour');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByRole('list', { name: 'Moments found' }).getByRole('link', { name: '0:03' }).click();
    await page.waitForURL(/\?t=3$/);
    const current = transcript.locator('li[aria-current="true"]');
    await current.waitFor();
    assert.match((await current.textContent()) ?? '', /0:03 The boat leaves the harbour at nine\./);
    await check('video');
  });

  test(
    'a video plays in the page: the player loads its metadata from the gateway and seeks by Range requests',
    { skip: videoSkip },
    async () => {
      const answers: Array<{ status: number; range: string | null }> = [];
      const listen = (response: PlaywrightResponse) => {
        if (response.url().includes(`/api/v1/content/${videoId}`))
          answers.push({ status: response.status(), range: response.headers()['content-range'] ?? null });
      };
      page.on('response', listen);
      try {
        await page.goto(`${stack.url}/item/${videoId}?t=3`);
        const video = page.getByLabel(/^Video: /);
        await video.waitFor();
        const duration = await video.evaluate(
          (v: HTMLVideoElement) =>
            new Promise<number>((resolve, reject) => {
              if (v.readyState >= HTMLMediaElement.HAVE_METADATA) resolve(v.duration);
              v.addEventListener('loadedmetadata', () => resolve(v.duration));
              v.addEventListener('error', () =>
                reject(new Error(`the video failed: ${v.error?.message ?? v.error?.code}`)),
              );
            }),
        );
        assert.ok(duration > 8 && duration < 10, `the 9-second clip's duration, not ${duration}`);
        // ?t=3 started it at the second the transcript marks.
        await page.waitForFunction(() => Math.abs((document.querySelector('video')?.currentTime ?? 0) - 3) < 0.5);
        // Seeking from a keyframe's button: the player asks for the bytes it needs and shows that frame.
        const keyframes = page.getByRole('list', { name: 'Keyframes' }).getByRole('button');
        assert.ok((await keyframes.count()) >= 2, 'the red, blue and green scenes give keyframes');
        // Each is its picture (memex.media.keyframe's WebP), decoded and drawn.
        await page.waitForFunction(() => {
          const pictures = [...document.querySelectorAll<HTMLImageElement>('.keyframes button img')];
          return pictures.length >= 2 && pictures.every((img) => img.complete && img.naturalWidth > 0);
        });
        assert.equal(await keyframes.locator('img').count(), await keyframes.count());
        const seekedTo = video.evaluate(
          (v: HTMLVideoElement) =>
            new Promise<number>((resolve) =>
              v.addEventListener('seeked', () => resolve(v.currentTime), { once: true }),
            ),
        );
        const last = keyframes.last();
        const label = (await last.textContent()) ?? '';
        await last.click();
        const [minutes, seconds] = label.split(':').map(Number);
        assert.ok(Math.abs((await seekedTo) - (minutes! * 60 + seconds!)) < 1, `seeked to ${label}`);
        assert.ok(
          await video.evaluate((v: HTMLVideoElement) => v.readyState >= HTMLMediaElement.HAVE_CURRENT_DATA),
          'the frame there is loaded',
        );
        assert.ok(
          answers.some((a) => a.status === 206 && /^bytes \d+-\d+\/\d+$/.test(a.range ?? '')),
          `partial answers to the player's Range requests: ${JSON.stringify(answers)}`,
        );
        await check('video-player');
        assert.deepEqual(errors, []);
      } finally {
        page.off('response', listen);
      }
    },
  );

  test('calendar: a week with the meeting at its Paris time, its attendees and its brief', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Calendar' }).click();
    await page.getByRole('heading', { name: /^Calendar: week of/ }).waitFor();
    await page.goto(`${stack.url}/calendar?week=2026-03-16`);
    const meeting = page.getByRole('link', { name: 'Quarterly review' });
    await meeting.waitFor();
    // The browser runs in UTC (the test's default): 10:00 in Paris is 09:00 here, said both ways.
    const line = (await page.locator('.agenda ul li', { has: meeting }).textContent()) ?? '';
    assert.match(line, /^09:00 AM–10:00 AM \(10:00 AM Europe\/Paris\) Quarterly review · Harbour office$/, line);
    await check('calendar');
    await page.getByRole('button', { name: 'Next week' }).click();
    await page.waitForURL(/week=2026-03-23/);
    await page.getByText('Nothing.').first().waitFor();
    assert.equal(await page.getByRole('link', { name: 'Quarterly review' }).count(), 0);
    await page.goBack();
    await meeting.click();
    await page.getByRole('heading', { name: 'Quarterly review', level: 1 }).waitFor();
    const attendees = page.getByRole('table', { name: 'Attendees' });
    await attendees.getByRole('row', { name: /Bob Stone accepted/ }).waitFor();
    await attendees.getByRole('row', { name: /Carol Diaz needs-action/ }).waitFor();
    const brief = page.getByRole('list', { name: 'Brief' });
    await brief.locator('li', { hasText: /^Carol Diaz attended Quarterly review since 2026-03-18 source$/ }).waitFor();
    await brief.getByRole('link', { name: 'source' }).first().click();
    await page.waitForURL(/\/item\//);
    await page.goBack();
    await brief.waitFor();
    await check('calendar-event');
    assert.deepEqual(errors, []);
  });

  test('mail: views as links, a reply opened from the thread; compose without a connected account says why', async () => {
    await page.goto(`${stack.url}/mail`);
    const views = page.getByRole('navigation', { name: 'Mail views' });
    for (const name of ['Inbox', 'Needs reply', 'Waiting', 'Sent', 'Drafts', 'Scheduled'])
      await views.getByRole('link', { name, exact: true }).waitFor();
    await page.getByRole('link', { name: 'Dock keys' }).waitFor();
    await check('mail-views');
    await views.getByRole('link', { name: 'Drafts' }).click();
    await page.getByRole('heading', { name: 'Mail: Drafts' }).waitFor();
    await page.getByText('No drafts.').waitFor();
    await page.goto(`${stack.url}/item/${mailId}`);
    await page.getByRole('link', { name: 'Reply' }).click();
    await page.waitForURL(/\/mail\/compose\?reply=/);
    await page.getByRole('heading', { name: 'Reply: Dock keys' }).waitFor();
    await page.getByText('To Ann Lee, answering').waitFor();
    await page.getByLabel('Message').fill('In the top drawer.');
    await check('mail-compose');
    // Only a connected account sends: this stack has imported mail alone, and the form says so.
    await page.getByRole('alert').filter({ hasText: 'No connected mail account to send from' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Send' }).isDisabled(), true);
    assert.equal(await page.getByRole('button', { name: 'Save draft' }).isDisabled(), true);
  });

  test(
    'mail: composed in the browser and sent from a connected IMAP account, it reaches the SMTP server',
    { skip: mailSkip },
    async () => {
      await stack.owner.call(AccountsAddImap, {
        host: '127.0.0.1',
        port: dovecot!.port,
        tls: false,
        user: ACCOUNT,
        password: dovecot!.password,
        smtp_port: smtp!.port,
        smtp_tls: false,
      });
      await page.goto(`${stack.url}/mail/compose`);
      await page.getByRole('heading', { name: 'New mail' }).waitFor();
      await page.getByLabel('From account').getByRole('option', { name: ACCOUNT }).waitFor({ state: 'attached' });
      await page.getByLabel('From account').selectOption(ACCOUNT);
      await page.getByLabel('To (addresses, separated by commas)').fill('friend@example.net');
      await page.getByLabel('Subject').fill('Boat at nine');
      await page.getByLabel('Message').fill('See you at the harbour.');
      await check('mail-send');
      await page.getByRole('button', { name: 'Send' }).click();
      // The undo window counts down, then the mail goes.
      await page.getByText(/^Sending in \d+ s…/).waitFor();
      await page.getByText('Sent (or on its way).').waitFor({ timeout: 60_000 });
      await waitUntil(
        async () => smtp!.accepted.some((m) => /^Subject: Boat at nine$/m.test(m.raw.toString('utf8'))),
        'the mail at the SMTP server',
        { everyMs: 300, timeoutMs: 60_000 },
      );
      const took = smtp!.accepted.find((m) => /^Subject: Boat at nine$/m.test(m.raw.toString('utf8')))!;
      assert.equal(took.from, ACCOUNT);
      assert.ok(took.to.includes('friend@example.net'), JSON.stringify(took.to));
      assert.match(took.raw.toString('utf8'), /See you at the harbour\./);
      assert.equal(smtp!.accepted.filter((m) => m.messageId === took.messageId).length, 1, 'sent once');
      assert.deepEqual(errors, []);
    },
  );

  test("sources and jobs: a watched folder's state, last scan, items and pipeline backlog, live", async () => {
    await page.goto(`${stack.url}/status`);
    const sources = page.getByRole('table', { name: 'Sources' });
    const row = sources.getByRole('row', { name: /web-notes/ });
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /active.*1 files, 1 new, 0 failed.*1 items\s*nothing waiting$/);
    await page.getByText('Live: connected').waitFor();
    await check('sources-jobs');

    // A job queued for the folder's note (no pipelines service runs here, so it stays queued) is
    // its pipeline backlog once an event refreshes the page; taken, it goes — the page never reloaded.
    const bus = await Bus.connect(stack.config.natsUrl, 'web-pages-backlog');
    try {
      let noteId: string | undefined;
      for await (const { event } of readLog(bus, { filter: typeFilter('item.ingested'), untilCaughtUp: true })) {
        const data = event.data as { id: string; source: { id: string } };
        if (data.source.id === 'web-notes') noteId = data.id;
      }
      assert.ok(noteId, 'the folder’s note in the log');
      await bus.ensureStreams();
      const job = { task: 'text', item_id: noteId, revision: 1, source_seq: 1, spaces: [] };
      await bus.js.publish('memex.job.t1.text.new', encodeJson(job));
      await stack.owner.call(NotesPut, { title: 'Backlog', body: 'An event while the page watches the backlog.' });
      await sources.getByRole('row', { name: /web-notes.*1 items\s*1 waiting$/ }).waitFor({ timeout: 60_000 });
      await bus.jsm.consumers.add(JOBS_STREAM, { durable_name: 'web_pages_backlog', ack_policy: AckPolicy.Explicit });
      const consumer = await bus.js.consumers.get(JOBS_STREAM, 'web_pages_backlog');
      for (let taken = 0; taken < 1;)
        for await (const msg of await consumer.fetch({ max_messages: 1, expires: 2_000 })) {
          await msg.ackAck();
          taken++;
        }
      await sources.getByRole('row', { name: /web-notes.*1 items\s*nothing waiting$/ }).waitFor({ timeout: 60_000 });

      // A worker (this test speaks its heartbeat) with jobs queued on it and a file it could not
      // read: its row says the failure and counts those jobs in its pipelines backlog.
      const silence = speakWorkerHeartbeat(bus.nc, {
        name: 'web-nas',
        folders: ['/volume1/photos'],
        counts: { files: 0, items: 0, failed: 1 },
        jobs: { extract: 2, derive: 1 },
        failures: [{ path: '/volume1/photos/scan.pdf', reason: 'unreadable PDF', modified_at: '2026-01-01T00:00:00Z' }],
      });
      try {
        await stack.owner.call(NotesPut, { title: 'Worker', body: 'An event while the page watches the workers.' });
        await sources
          .getByRole('row', {
            name: /web-nas \(worker\).*0 items, 1 files failed, reachable\s*3 waiting \(3 on the worker\)$/,
          })
          .waitFor({ timeout: 60_000 });
      } finally {
        silence();
      }
    } finally {
      await bus.close();
    }
  });

  test("an agent token's session never shows photos", async () => {
    const agent = await openContext(browser);
    try {
      await signIn(agent.page, stack.url, agentToken);
      assert.equal(await agent.page.getByRole('link', { name: 'Photos' }).count(), 0);
      await agent.page.goto(`${stack.url}/photos`);
      await agent.page.getByRole('alert').filter({ hasText: 'scope has no photos' }).waitFor();
      await agent.page.goto(`${stack.url}/item/${photoIds[0]}`);
      await agent.page.getByRole('alert').waitFor();
      assert.equal(await agent.page.locator('img').count(), 0, 'no photo reaches the agent');
    } finally {
      await agent.context.close();
    }
  });
});

// The web UI in real headless Chromium against a running stack with data: sign-in and the session
// cookie, search and a mail thread, a person's card corrected, the graph explorer, a trail, the
// review queue, a signal, a token made in Settings' scopes editor, a scope rule edited there, and an agent token that never
// see mail, an item's original by Range over /api/v1/content, a hostile HTML mail that can neither
// run script nor load a remote image, axe-core on every page, and screenshots.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import {
  AdminReplay,
  Ingest,
  ItemsContent,
  MemexError,
  NotesPut,
  ReviewList,
  ScopesGet,
  ScopesSet,
  Search,
  SignalsList,
  TokensCreate,
  TokensList,
  TokensRevoke,
} from '@memex/contracts';
import { Bus } from '@memex/bus';
import { BlobStore } from '@memex/blobs';
import { waitUntil } from '@memex/testing';
import { logWithoutItsText } from './lost-text.js';
import { mailItem, mime } from './mail.js';
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

const skip = browserSkip();

/** An HTTP server that records every request: remote images and links in mail point here. */
async function startTrap(): Promise<{ url: string; hits: string[]; server: Server }> {
  const hits: string[] = [];
  const server = createServer((request, response) => {
    hits.push(request.url ?? '');
    response.writeHead(200, { 'content-type': 'image/gif' }).end(Buffer.from('R0lGODlhAQABAAAAACw=', 'base64'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, server };
}

function hostileHtml(trap: string): string {
  return `<html><head><meta http-equiv="refresh" content="0;url=${trap}/refresh"><link rel="stylesheet" href="${trap}/style.css">
<script>parent.__pwned = 'script'; new Image().src = '${trap}/script';</script></head>
<body><p>Claim your <b>prize</b> now!</p>
<img src="${trap}/pixel.gif" width="1" height="1" alt="">
<img src="x" onerror="parent.__pwned = 'onerror'" alt="">
<div style="background-image:url(${trap}/background.png)">styled</div>
<a href="javascript:parent.__pwned='link'">open</a>
<iframe src="${trap}/frame"></iframe>
<svg><script>parent.__pwned = 'svg'</script></svg>
<form action="${trap}/form"><input name="card"></form>
</body></html>`;
}

describe('the web UI in headless Chromium', { skip }, () => {
  let stack: TestStack;
  let browser: Browser;
  let trap: Awaited<ReturnType<typeof startTrap>>;
  let page: Page;
  let errors: string[];
  const ids: Record<string, string> = {};
  let agentToken = '';

  /** No serious or critical axe-core violation on the page as shown, and a desktop and a phone screenshot. */
  async function check(name: string, p: Page = page): Promise<void> {
    const violations = await seriousViolations(p);
    assert.deepEqual(violations, [], `${name}: ${JSON.stringify(violations, null, 1)}`);
    await screenshot(p, `${name}-desktop`);
    await p.setViewportSize(PHONE);
    await screenshot(p, `${name}-phone`);
    assert.deepEqual(await seriousViolations(p), [], `${name} at phone width`);
    await p.setViewportSize(DESKTOP);
  }

  before(async () => {
    assertWebBuilt();
    trap = await startTrap();
    stack = await startStack(['ingest', 'pipelines', 'search', 'graph', 'insights']);
    const thread = [
      mime(
        [
          ['From', 'Ann Lee <ann@acme-corp.example>'],
          ['To', 'Bob Stone <bob@gmail.com>'],
          ['Subject', 'Warehouse renewal'],
          ['Date', 'Tue, 4 Mar 2025 10:00:00 +0000'],
          ['Message-ID', '<r1@acme-corp.example>'],
        ],
        'Bob, the harbour warehouse renewal is attached. Ann\n',
      ),
      mime(
        [
          ['From', 'Bob Stone <bob@gmail.com>'],
          ['To', 'Ann Lee <ann@acme-corp.example>'],
          ['Subject', 'Re: Warehouse renewal'],
          ['Date', 'Tue, 4 Mar 2025 12:00:00 +0000'],
          ['Message-ID', '<r2@gmail.com>'],
          ['In-Reply-To', '<r1@acme-corp.example>'],
          ['Content-Type', 'text/html; charset=utf-8'],
        ],
        '<p>Thanks Ann, the renewal is <b>signed</b>.</p>',
      ),
      mime(
        [
          ['From', 'Bob Stone <bob@gmail.com>'],
          ['To', 'Dave Moss <dave@moss.example>'],
          ['Subject', 'Boat trip'],
          ['Date', 'Sat, 8 Mar 2025 09:00:00 +0000'],
          ['Message-ID', '<b1@gmail.com>'],
        ],
        'Dave, the boat leaves the harbour at nine.\n',
      ),
      mime(
        [
          ['From', 'Ann Lee <ann.lee@gmail.com>'],
          ['To', 'Bob Stone <bob@gmail.com>'],
          ['Subject', 'Weekend'],
          ['Date', 'Sun, 9 Mar 2025 09:00:00 +0000'],
          ['Message-ID', '<w1@gmail.com>'],
        ],
        'See you at the harbour on Sunday.\n',
      ),
      mime(
        [
          ['From', 'Mallory Prize <mallory@prize.example>'],
          ['To', 'Bob Stone <bob@gmail.com>'],
          ['Subject', 'You won a prize'],
          ['Date', 'Mon, 10 Mar 2025 09:00:00 +0000'],
          ['Message-ID', '<p1@prize.example>'],
          ['Content-Type', 'text/html; charset=utf-8'],
        ],
        hostileHtml(trap.url),
      ),
      // A colleague writing from Ann's domain too: several people make acme-corp.example an organization, so Ann works_at it.
      mime(
        [
          ['From', 'Raj Patel <raj@acme-corp.example>'],
          ['To', 'Ann Lee <ann@acme-corp.example>'],
          ['Subject', 'Quarterly figures'],
          ['Date', 'Mon, 3 Feb 2025 09:00:00 +0000'],
          ['Message-ID', '<q1@acme-corp.example>'],
        ],
        'Ann, the figures for the quarter are in the shared folder. Raj\n',
      ),
    ];
    const ingested = await stack.owner.call(Ingest, {
      items: [
        ...thread.map((bytes, i) => mailItem(bytes, 'e2e-web', `m${i}`)),
        {
          type: 'text/markdown',
          text: '# Harbour plan\n\nThe harbour warehouse lease runs until 2027; renewal talks start in spring.\n',
          source: { kind: 'upload', id: 'e2e-web' },
          external_id: 'plan',
          attributes: { filename: 'harbour-plan.md' },
        },
      ],
    });
    assert.deepEqual(
      ingested.results.map((r) => r.status),
      ['created', 'created', 'created', 'created', 'created', 'created', 'created'],
      JSON.stringify(ingested.results),
    );
    ['renewal', 'reply', 'boat', 'weekend', 'hostile', 'colleague', 'plan'].forEach(
      (name, i) => (ids[name] = ingested.results[i]!.id!),
    );
    await stack.owner.call(NotesPut, {
      title: 'Harbour questions',
      body: 'Ask about [[Warehouse Lease Terms]] before the renewal.',
    });
    agentToken = (await stack.owner.call(TokensCreate, { name: 'helper', labels: ['client:acme'] })).token;
    await waitUntil(
      async () => (await stack.owner.call(Search, { q: 'renewal' })).hits.some((h) => h.id === ids.renewal),
      'the mail to be searchable',
      { everyMs: 200 },
    );
    await waitUntil(
      async () => (await stack.owner.call(ReviewList, {})).items.some((i) => i.kind === 'merge'),
      'a merge suggestion for the two Ann Lees',
      { everyMs: 200 },
    );
    await waitUntil(
      async () => (await stack.owner.call(SignalsList, {})).signals.some((s) => s.kind === 'dangling_link'),
      'a dangling_link signal',
      { everyMs: 500 },
    );
    browser = await launchBrowser();
    ({ page, errors } = await openContext(browser));
  });

  after(async () => {
    await browser?.close();
    await stack?.stop();
    trap?.server.close();
  });

  test('sign-in sets an HttpOnly SameSite=Strict cookie; a write without the CSRF header is refused', async () => {
    await page.goto(`${stack.url}/search`);
    await check('signin');
    const index = await page.request.get(`${stack.url}/`);
    const policy = index.headers()['content-security-policy'] ?? '';
    assert.match(policy, /script-src 'self'(;|$)/);
    assert.match(policy, /frame-ancestors 'none'/);
    assert.equal(index.headers()['cache-control'], 'no-cache');
    const script = /src="(\/assets\/index-[\w-]+\.js)"/.exec(await index.text())![1]!;
    const asset = await page.request.get(`${stack.url}${script}`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(asset.headers()['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(asset.headers()['content-encoding'], 'gzip');
    assert.equal((await page.request.get(`${stack.url}/assets/..%2f..%2fpackage.json`)).status(), 404);
    await page.getByLabel('Token').fill('mxa_not-a-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'invalid or revoked token' }).waitFor();
    await signIn(page, stack.url, stack.ownerToken);
    const cookies = await page.context().cookies();
    assert.equal(cookies.length, 1);
    assert.deepEqual([cookies[0]!.name, cookies[0]!.httpOnly, cookies[0]!.sameSite], ['memex_session', true, 'Strict']);
    assert.equal(await page.evaluate(() => document.cookie), '', 'script cannot read the session cookie');
    const forged = await page.evaluate(async () => {
      const response = await fetch('/api/v1/memex/search', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"q":"renewal"}',
      });
      return { status: response.status, body: await response.text() };
    });
    assert.equal(forged.status, 403, forged.body);
    assert.match(forged.body, /x-memex-csrf/);
  });

  test("an item's original at /api/v1/content: whole, by Range (206, from the end, 416), a download unless media, within the caller's scope", async () => {
    const get = (id: string, token: string, range?: string) =>
      fetch(`${stack.url}/api/v1/content/${id}`, {
        headers: { authorization: `Bearer ${token}`, ...(range ? { range } : {}) },
      });
    const plan = ids.plan!;
    const { data, size } = await stack.owner.call(ItemsContent, { id: plan });
    const whole = Buffer.from(data, 'base64');
    const all = await get(plan, stack.ownerToken);
    assert.equal(all.status, 200);
    assert.deepEqual(Buffer.from(await all.arrayBuffer()), whole);
    assert.equal(all.headers.get('accept-ranges'), 'bytes');
    // Not video or audio: a download, sandboxed, never a page of this origin.
    assert.equal(all.headers.get('content-disposition'), "attachment; filename*=UTF-8''harbour-plan.md");
    assert.equal(all.headers.get('content-security-policy'), "default-src 'none'; sandbox");
    const part = await get(plan, stack.ownerToken, 'bytes=2-9');
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 2-9/${size}`);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), whole.subarray(2, 10));
    const tail = await get(plan, stack.ownerToken, 'bytes=-5');
    assert.equal(tail.headers.get('content-range'), `bytes ${size - 5}-${size - 1}/${size}`);
    assert.deepEqual(Buffer.from(await tail.arrayBuffer()), whole.subarray(size - 5));
    const beyond = await get(plan, stack.ownerToken, `bytes=${size}-`);
    assert.equal(beyond.status, 416);
    assert.equal(beyond.headers.get('content-range'), `bytes */${size}`);
    const backwards = await get(plan, stack.ownerToken, 'bytes=9-2');
    assert.equal(backwards.status, 400);
    assert.match(await backwards.text(), /ends before it starts/);
    // An agent without mail reads a mail's bytes here no more than through the API.
    assert.equal((await get(ids.renewal!, agentToken)).status, 404);
    assert.equal((await get(plan, agentToken)).status, 200);
    assert.equal((await fetch(`${stack.url}/api/v1/content/${plan}`)).status, 401);
  });

  test('search as you type, grouped by kind, from: completion, j/k and Enter open a mail thread', async () => {
    await page.locator('#q').press('Escape');
    await page.keyboard.press('/');
    await page.waitForFunction(() => document.activeElement?.id === 'q'); // `/` focuses the search box
    await page.keyboard.type('renewal');
    const results = page.locator('.results[data-query="renewal"]');
    await results.waitFor();
    await results.getByRole('region', { name: 'email results' }).waitFor();
    await results
      .getByRole('region', { name: 'document results' })
      .getByRole('link', { name: 'Harbour plan' })
      .waitFor();
    assert.ok(
      await results
        .locator('.why')
        .first()
        .textContent()
        .then((t) => /words: #\d/.test(t ?? '')),
    );
    await check('search');
    // from: completes people the graph knows.
    await page.locator('#q').fill('renewal from:an');
    await page
      .getByRole('option', { name: /Ann Lee/ })
      .first()
      .waitFor();
    await page.keyboard.press('Enter');
    assert.match(await page.locator('#q').inputValue(), /^renewal from:ann(\.lee@gmail\.com|@acme-corp\.example) $/);
    await page.locator('#q').fill('renewal kind:email');
    await page.locator('.results[data-query="renewal kind:email"]').waitFor();
    await page.keyboard.press('Escape');
    await page.keyboard.press('j');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/item\//);
    const thread = page.getByRole('list', { name: 'Conversation' });
    await thread.locator('.message').nth(1).waitFor();
    assert.equal(await thread.locator('.message').count(), 2);
    // The HTML reply is shown in a sandboxed frame without scripts.
    const frame = thread.locator('iframe.mail-frame');
    assert.equal(await frame.getAttribute('sandbox'), 'allow-popups allow-popups-to-escape-sandbox');
    await page.frameLocator('iframe.mail-frame').getByText('signed').waitFor();
    await thread.getByText('the harbour warehouse renewal is attached').waitFor();
    await check('mail-thread');
  });

  test('a hostile HTML mail runs no script and loads no remote image until its sender is allowed', async () => {
    await page.goto(`${stack.url}/item/${ids.hostile}`);
    const frameElement = page.locator('iframe.mail-frame');
    await page.frameLocator('iframe.mail-frame').getByText('Claim your').waitFor();
    await page.getByText(/remote images? blocked/).waitFor();
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned), undefined);
    assert.deepEqual(trap.hits, [], 'nothing reached the remote server');
    const frame = (await frameElement.elementHandle())!.contentFrame();
    const inside = await (await frame)!.evaluate(() => ({
      scripts: document.querySelectorAll('script').length,
      handlers: [...document.querySelectorAll('*')].filter((e) =>
        [...e.attributes].some((a) => a.name.startsWith('on')),
      ).length,
      javascriptLinks: [...document.querySelectorAll('a')].filter((a) => a.href.startsWith('javascript:')).length,
      frames: document.querySelectorAll('iframe, form, meta[http-equiv="refresh"]').length,
    }));
    assert.deepEqual(inside, { scripts: 0, handlers: 0, javascriptLinks: 0, frames: 0 });
    assert.deepEqual(errors, []);
    await check('hostile-mail');
    // Asked for, the sender's images load (and nothing else: scripts still never ran).
    await page.getByRole('button', { name: /Show images from mallory@prize.example/ }).click();
    await waitUntil(async () => trap.hits.includes('/pixel.gif'), 'the allowed remote image to load', {
      timeoutMs: 10_000,
    });
    assert.deepEqual(
      trap.hits.filter((h) => !['/pixel.gif', '/background.png'].includes(h)),
      [],
    );
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned), undefined);
  });

  test("a person's card: facts with sources, timeline by month; a link retracted and one added in place", async () => {
    await page.goto(`${stack.url}/thing/${encodeURIComponent('person:ann@acme-corp.example')}`);
    await page.getByRole('heading', { name: 'Ann Lee', level: 1 }).waitFor();
    const facts = page.getByRole('region', { name: 'Facts' });
    const worksAt = facts.locator('li', { hasText: 'works_at' });
    await worksAt.waitFor();
    await worksAt.locator('.sources a').first().waitFor();
    await page.getByRole('region', { name: 'By month' }).getByText('2025-03').waitFor();
    await check('person-card');
    await worksAt.getByRole('button', { name: 'Retract works_at link' }).click();
    await page.getByText('Link retracted.').waitFor();
    await facts.locator('li', { hasText: 'works_at' }).waitFor({ state: 'detached' });
    await page.getByLabel('Link').selectOption('knows');
    await page.locator('#link-dst').fill('person:dave@moss.example');
    await page.getByRole('button', { name: 'Add link' }).click();
    await facts.locator('li', { hasText: 'knows' }).getByText('Dave Moss').waitFor();
  });

  test("an organization's card says what made it one; a person's own domain is no organization", async () => {
    await page.goto(`${stack.url}/thing/${encodeURIComponent('org:acme-corp.example')}`);
    const why = page.locator('p.why', { hasText: 'Why an organization' });
    await why.waitFor();
    assert.match((await why.textContent()) ?? '', /writes? from acme-corp\.example: .*Raj Patel/);
    await page.goto(`${stack.url}/thing/${encodeURIComponent('person:mallory@prize.example')}`);
    await page.locator('p.why', { hasText: 'Own mail domains: prize.example' }).waitFor();
  });

  test('the graph explorer: neighbours drawn, a click on Expand adds that thing’s neighbours, filters hide kinds and times', async () => {
    await page.goto(`${stack.url}/graph/${encodeURIComponent('person:ann@acme-corp.example')}`);
    const list = page.getByRole('list', { name: 'Things in the graph' });
    await list.getByText('Bob Stone').waitFor();
    assert.equal(
      (await list.getByText('Dave Moss').count()) + (await list.getByText('Mallory Prize').count()),
      1,
      'Dave is linked now; Mallory is not',
    );
    const size = page.getByTestId('graph-size');
    const before = await size.textContent();
    await page.getByRole('button', { name: 'Expand Bob Stone' }).click();
    await list.getByText('Mallory Prize').waitFor();
    assert.notEqual(await size.textContent(), before);
    assert.ok((await page.locator('.graph-canvas canvas').count()) > 0, 'cytoscape drew on a canvas');
    await check('graph');
    await page.getByRole('group', { name: 'Things' }).getByLabel('org').uncheck();
    assert.equal(await list.getByText('acme-corp.example').count(), 0);
    // A time: Ann's mail with Bob is of 4 March, so from the 5th Bob is not her neighbour, and a
    // range holding the 4th brings him back (the server counts only items and links of that time).
    await page.locator('#graph-from').fill('2025-03-05');
    await list.getByText('Bob Stone').waitFor({ state: 'detached' });
    await page.locator('#graph-from').fill('2025-03-01');
    await page.locator('#graph-to').fill('2025-03-04');
    await list.getByText('Bob Stone').waitFor();
    await page.getByRole('button', { name: 'Any time' }).click();
  });

  test('a trail: created, a thing appended with a comment, steps moved (by click and key), commentary, shared as Markdown', async () => {
    await page.goto(`${stack.url}/trails`);
    await page.locator('#trail-name').fill('The warehouse renewal');
    await page.getByRole('button', { name: 'Start a trail' }).click();
    await page.waitForURL(/\/trails\/[0-9A-Z]{26}$/);
    await page.locator('#step-target').fill('person:ann@acme-corp.example');
    await page.getByLabel('Comment', { exact: true }).fill('she sent the renewal');
    await page.getByRole('button', { name: 'Append' }).click();
    await page.locator('.steps li').getByText('Ann Lee').waitFor();
    await page.locator('#step-target').fill(ids.renewal!);
    await page.getByRole('button', { name: 'Append' }).click();
    await page.locator('.steps li').nth(1).getByText('Warehouse renewal').waitFor();
    // Reordered: the renewal up by a click, then back down from the keyboard (the focus follows the step).
    await page.getByRole('button', { name: 'Move Warehouse renewal up' }).click();
    await page.locator('.steps li').first().getByText('Warehouse renewal').waitFor();
    await page.waitForFunction(
      () => document.activeElement?.getAttribute('aria-label') === 'Move Warehouse renewal down',
    );
    await page.keyboard.press('Enter');
    await page.locator('.steps li').first().getByText('Ann Lee').waitFor();
    await page.locator('#trail-comment').fill('Signed in March.');
    await page.getByRole('form', { name: 'Comment on the trail' }).getByRole('button', { name: 'Comment' }).click();
    await page.getByRole('region', { name: 'Commentary' }).getByText('Signed in March.').waitFor();
    await page.getByRole('button', { name: 'Share as Markdown' }).click();
    const markdown = await page.locator('#trail-markdown').inputValue();
    assert.match(markdown, /^# The warehouse renewal\n/);
    assert.match(
      markdown,
      /\n1\. \[Ann Lee\]\(http:\/\/127\.0\.0\.1:\d+\/thing\/person%3Aann%40acme-corp\.example\) — she sent the renewal\n/,
    );
    assert.match(markdown, /\n2\. \[Warehouse renewal\]\(.*\/item\/[0-9A-Z]{26}\)\n/);
    assert.match(markdown, /\n- Signed in March\. \(\w+, \d{4}-\d{2}-\d{2}\)\n$/);
    await check('trail');
  });

  test('the review queue: a merge suggestion accepted with a key', async () => {
    await page.goto(`${stack.url}/review`);
    const entry = page.locator('.review .entry', { hasText: 'may be Ann Lee' });
    await entry.waitFor();
    await check('review');
    await page.locator('body').press('a');
    await page.getByText('Accepted.').waitFor();
    await entry.waitFor({ state: 'detached' });
    await page.goto(`${stack.url}/thing/${encodeURIComponent('person:ann.lee@gmail.com')}`);
    await page.getByText(/\(was person:ann\.lee@gmail\.com\)/).waitFor();
  });

  test('a signal dismissed; inferences listed', async () => {
    await page.goto(`${stack.url}/signals`);
    const signal = page.locator('.signal', { hasText: 'Warehouse Lease Terms' });
    await signal.waitFor();
    await check('signals');
    await signal.getByRole('button', { name: 'Dismiss' }).click();
    await page.getByText('Dismissed.').waitFor();
    await signal.waitFor({ state: 'detached' });
    await page.getByLabel('Show').selectOption('dismissed');
    await page
      .locator('.signal', { hasText: 'Warehouse Lease Terms' })
      .locator('.status-tag', { hasText: 'dismissed' })
      .waitFor();
  });

  test('mail views: the inbox lists messages newest first and opens their conversation', async () => {
    await page.goto(`${stack.url}/mail`);
    const rows = page.locator('.mail-list tbody tr');
    await rows.first().waitFor();
    assert.match((await rows.first().textContent()) ?? '', /You won a prize/);
    await page.getByRole('navigation', { name: 'Mail views' }).getByRole('link', { name: 'All mail' }).click();
    await page.getByRole('link', { name: 'Warehouse renewal', exact: true }).click();
    await page.getByRole('list', { name: 'Conversation' }).locator('.message').nth(1).waitFor();
    await page.goto(`${stack.url}/mail`);
    await rows.first().waitFor();
    await check('mail');
  });

  test('sources and jobs live over SSE', async () => {
    await page.goto(`${stack.url}/status`);
    await page.getByText('Live: connected').waitFor();
    await page.getByRole('cell', { name: 'search' }).first().waitFor();
    await page.getByRole('heading', { name: 'Events that failed to project' }).waitFor();
    await page.getByRole('heading', { name: 'Jobs that failed' }).waitFor();
    await page.getByRole('heading', { name: 'Photos and videos given up on' }).waitFor();
    await stack.owner.call(NotesPut, { title: 'Live', body: 'An event while the page watches.' });
    await page.getByText(/Live: connected · [1-9]\d* events/).waitFor();
    await check('status');
  });

  test('settings: a token made with labels chosen from those that exist shows what it sees; its session never shows mail; revoked, it is signed out', async () => {
    await page.goto(`${stack.url}/settings`);
    await page.locator('#token-name').fill('reader');
    const labels = page.getByRole('group', { name: 'Labels' });
    // The labels that exist: the scope rules' (mail, photos) and the helper token's.
    for (const label of ['client:acme', 'mail', 'photos'])
      await labels.getByRole('checkbox', { name: label }).waitFor();
    await labels.getByRole('checkbox', { name: 'mail' }).check();
    await page.getByText(/^It will see: .*\bemail\b.* — items labelled mail, or with no label\.$/).waitFor();
    await labels.getByRole('checkbox', { name: 'mail' }).uncheck();
    await labels.getByRole('checkbox', { name: 'client:acme' }).check();
    const preview = page.getByText(/^It will see: .* — items labelled client:acme, or with no label\.$/);
    await preview.waitFor();
    assert.doesNotMatch((await preview.textContent()) ?? '', /\bemail\b/);
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByText(/The new token \(shown once\): mxa_\S+\. Its labels: client:acme\./).waitFor();
    const secret = (await page.locator('code.secret').textContent()) ?? '';
    const row = page.getByRole('row', { name: /reader/ });
    await row.getByRole('cell', { name: 'client:acme', exact: true }).waitFor();
    // The tokens and the rules (which say what each token sees) reload side by side after a create.
    const seesCell = row
      .getByRole('cell')
      .nth(2)
      .filter({ hasText: /\bdocument\b/ });
    await seesCell.waitFor();
    const sees = (await seesCell.textContent()) ?? '';
    assert.match(sees, /\bdocument\b/);
    assert.doesNotMatch(sees, /\bemail\b/);
    // The scope rules, in their editor: the defaults, mail opening email and attachments.
    const mailKinds = page
      .getByRole('form', { name: 'Scope rules' })
      .getByRole('textbox', { name: 'Kinds mail opens' });
    await mailKinds.waitFor();
    assert.equal(await mailKinds.inputValue(), 'email, attachment');
    await check('settings');
    const reader = await openContext(browser);
    try {
      await signIn(reader.page, stack.url, secret);
      assert.equal(await reader.page.getByRole('link', { name: 'Mail' }).count(), 0);
      await reader.page.locator('#q').fill('renewal');
      const results = reader.page.locator('.results[data-query="renewal"]');
      await results.getByRole('link', { name: 'Harbour plan' }).waitFor();
      assert.equal(await results.getByRole('region', { name: 'email results' }).count(), 0);
      await reader.page.goto(`${stack.url}/item/${ids.renewal}`);
      await reader.page.getByRole('alert').waitFor();
      // Revoked from Settings, its session ends at its next request.
      await row.getByRole('button', { name: 'Revoke reader' }).click();
      await row.getByText(/revoked/).waitFor();
      await reader.page.goto(`${stack.url}/search`);
      await reader.page.getByLabel('Token', { exact: true }).waitFor();
    } finally {
      await reader.context.close();
    }
    assert.deepEqual(errors, []);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Token', { exact: true }).waitFor();
    assert.deepEqual(await page.context().cookies(), []);
    await signIn(page, stack.url, stack.ownerToken);
  });

  test('settings: a scope rule added in the editor opens mail to client:acme tokens at once, a replay keeps it, removed it is gone; only the owner sets rules', async () => {
    await page.goto(`${stack.url}/settings`);
    const editor = page.getByRole('form', { name: 'Scope rules' });
    await editor.getByText(/These rules are the defaults until they are saved here\./).waitFor();
    await editor.getByRole('button', { name: 'Add rule' }).click();
    await editor.getByRole('textbox', { name: 'Label of rule 4' }).fill('client:acme');
    await editor.getByRole('textbox', { name: 'Kinds client:acme opens' }).fill('email, attachment');
    await editor.getByRole('button', { name: 'Save rules' }).click();
    await editor.getByText(/These rules are set here\./).waitFor();
    await editor.getByText('Scope rules saved.').waitFor();
    // The helper token (client:acme) sees mail now: in the tokens table and in its own session.
    const helper = page.getByRole('row', { name: /^helper/ });
    await helper.getByRole('cell', { name: /\bemail\b/ }).waitFor();
    const agent = await openContext(browser);
    try {
      await signIn(agent.page, stack.url, agentToken);
      await agent.page.getByRole('link', { name: 'Mail' }).waitFor();
      await agent.page.locator('#q').fill('renewal');
      await agent.page
        .locator('.results[data-query="renewal"]')
        .getByRole('region', { name: 'email results' })
        .waitFor();

      // The rules are logged: the gateway's read model rebuilt from the log still has them.
      await stack.owner.call(AdminReplay, { projector: 'gateway' });
      const replayed = await stack.owner.call(ScopesGet, {});
      assert.equal(replayed.from, 'set');
      assert.deepEqual(
        replayed.rules.find((rule) => rule.when === 'client:acme'),
        { when: 'client:acme', kinds: ['attachment', 'email'] },
      );
      // An agent token can neither set the rules nor read them.
      const asAgent = stack.clientFor(agentToken);
      await assert.rejects(
        asAgent.call(ScopesSet, { rules: [{ when: '*', kinds: ['email'] }] }),
        (e: MemexError) => e.code === 'forbidden',
      );
      await assert.rejects(asAgent.call(ScopesGet, {}), (e: MemexError) => e.code === 'forbidden');

      // Removed and saved: the token's next request is under the rules without it.
      await page.reload();
      await editor.getByRole('button', { name: 'Remove the rule for client:acme' }).click();
      await editor.getByRole('button', { name: 'Save rules' }).click();
      await helper.getByRole('cell', { name: /\bemail\b/ }).waitFor({ state: 'detached' });
      await agent.page.goto(`${stack.url}/search`);
      await agent.page.locator('#q').fill('renewal');
      const results = agent.page.locator('.results[data-query="renewal"]');
      await results.getByRole('link', { name: 'Harbour plan' }).waitFor();
      assert.equal(await results.getByRole('region', { name: 'email results' }).count(), 0);
      assert.equal(await agent.page.getByRole('link', { name: 'Mail' }).count(), 0);
    } finally {
      await agent.context.close();
    }
    assert.deepEqual(
      (await stack.owner.call(ScopesGet, {})).rules.map((rule) => rule.when),
      ['*', 'mail', 'photos'],
    );
    assert.deepEqual(errors, []);
  });

  test("an agent token's session never shows mail", async () => {
    const agent = await openContext(browser);
    try {
      await signIn(agent.page, stack.url, agentToken);
      await agent.page.getByText('agent: client:acme').waitFor();
      assert.equal(await agent.page.getByRole('link', { name: 'Review' }).count(), 0);
      assert.equal(await agent.page.getByRole('link', { name: 'Mail' }).count(), 0);
      await agent.page.locator('#q').fill('renewal');
      const results = agent.page.locator('.results[data-query="renewal"]');
      await results.getByRole('link', { name: 'Harbour plan' }).waitFor();
      assert.equal(await results.getByRole('region', { name: 'email results' }).count(), 0);
      assert.equal(await results.getByText('Warehouse renewal').count(), 0);
      await check('agent-search', agent.page);
      await agent.page.goto(`${stack.url}/item/${ids.renewal}`);
      await agent.page.getByRole('alert').waitFor();
      assert.equal(await agent.page.getByText('harbour warehouse renewal is attached').count(), 0);
      await agent.page.goto(`${stack.url}/thing/${encodeURIComponent('person:ann@acme-corp.example')}`);
      await agent.page.getByRole('alert').waitFor();
      // The event stream under this session carries no mail either.
      const events = await agent.page.evaluate(async () => {
        const controller = new AbortController();
        setTimeout(() => controller.abort(), 1500);
        let text = '';
        try {
          const response = await fetch('/api/v1/memex/events?from_seq=1', { signal: controller.signal });
          const reader = response.body!.getReader();
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            text += new TextDecoder().decode(value);
          }
        } catch {
          // aborted: what arrived is enough
        }
        return text;
      });
      assert.match(events, /"kind":"document"/);
      assert.doesNotMatch(events, /"kind":"email"/);
      // Revoking the token ends its browser session at the next request.
      const tokens = (await stack.owner.call(TokensList, {})).tokens;
      await stack.owner.call(TokensRevoke, { id: tokens.find((t) => t.name === 'helper')!.id });
      await agent.page.goto(`${stack.url}/search`);
      await agent.page.getByLabel('Token').waitFor();
    } finally {
      await agent.context.close();
    }
  });
  test('work that failed every retry is listed on the status page with why, and run again from it', async () => {
    const bus = await Bus.connect(stack.config.natsUrl, 'web-failed-work');
    try {
      const { seq, text } = await logWithoutItsText(bus, 'A page the disk lost for a while.');
      await page.goto(`${stack.url}/status`);
      const row = page.getByRole('row').filter({ hasText: `#${seq} item.ingested` });
      await row.waitFor();
      assert.match(await row.innerText(), /no such file or directory.*\(1×, /s);
      await page.getByRole('button', { name: 'Retry them' }).click();
      await page.getByRole('alert').filter({ hasText: '0 fixed; 1 still fail' }).waitFor();
      await check('status-failures');
      // The text back (a disk restored): retried from the page, fixed and gone from the list.
      await new BlobStore(stack.config.blobsDir).put(text);
      await page.getByRole('button', { name: 'Retry them' }).click();
      await page.getByRole('status').filter({ hasText: 'All fixed.' }).waitFor();
      assert.equal(await row.count(), 0);
    } finally {
      await bus.close();
    }
  });
});

/// <reference lib="dom" />
// Real headless Chromium (Debian's, driven by playwright-core) against the gateway's web UI:
// launching it, signing in, the axe-core accessibility check and screenshots. The web tests and
// `npm run bench -- web` share these.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
/**
 * Where the tests write screenshots of the main pages. The committed set the README links is in
 * web/screenshots, refreshed by `MEMEX_SCREENSHOTS=web/screenshots`; by default a run writes them
 * beside its other output, so a test run leaves the checkout as it found it.
 */
export const SCREENSHOTS = path.resolve(
  process.env.MEMEX_SCREENSHOTS
    ? path.resolve(fileURLToPath(new URL('../../', import.meta.url)), process.env.MEMEX_SCREENSHOTS)
    : path.join(os.tmpdir(), 'memex-screenshots'),
);
export const WEB_DIST_INDEX = fileURLToPath(new URL('../../web/dist/index.html', import.meta.url));

export const DESKTOP = { width: 1280, height: 860 };
export const PHONE = { width: 390, height: 844 };

/** Why the browser tests cannot run here, or false when they can. */
export function browserSkip(): string | false {
  if (!existsSync(CHROMIUM))
    return `${CHROMIUM} is missing (deploy/local/provision.sh --with-browser installs Debian's chromium)`;
  return false;
}

export function assertWebBuilt(): void {
  if (!existsSync(WEB_DIST_INDEX))
    throw new Error(`${WEB_DIST_INDEX} is missing: run \`npm run build\` (it builds web/)`);
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage'],
  });
}

/** A fresh browser profile (its own cookies) at a viewport, its page errors collected. */
export async function openContext(
  browser: Browser,
  viewport = DESKTOP,
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({
    viewport,
    ...(viewport === PHONE ? { isMobile: true, hasTouch: true } : {}),
  });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  return { context, page, errors };
}

/** Signs in through the form, the way a person does. */
export async function signIn(page: Page, url: string, token: string): Promise<void> {
  await page.goto(`${url}/search`);
  await page.getByLabel('Token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/**
 * axe-core's serious and critical violations on the page as it is now (WCAG 2.1 A and AA). It is
 * evaluated through the DevTools protocol, which the page's CSP does not govern: the CSP stays on.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(`${axeSource}\n;0`);
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: { run: (context: Document, options: object) => Promise<{ violations: AxeViolation[] }> };
      }
    ).axe;
    const result = await axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
    });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target })),
    }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: false });
}

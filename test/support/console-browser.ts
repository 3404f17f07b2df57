/**
 * The web console in a real browser for the tests: Debian's Chromium (`/usr/bin/chromium`, or
 * `CHROMIUM_PATH`) driven by puppeteer-core (nothing downloaded), one incognito context per person,
 * axe-core's rules run in the page, and screenshots at a desktop's and a phone's size written to
 * test/screenshots/ (git-ignored) for a person to look at.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOTS = join(import.meta.dirname, '..', 'screenshots');
export const SIZES = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;

const axeSource = () => readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Root in a container has no user namespace for the sandbox; loopback pages only.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--no-first-run'],
  });
}

/** A fresh person: a page of its own incognito context (no shared memory, cookies or storage). */
export async function personPage(browser: Browser, size: keyof typeof SIZES = 'desktop'): Promise<Page> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.setViewport(SIZES[size]);
  page.setDefaultTimeout(10_000);
  return page;
}

/** Opens the console at `url` and, when it asks, signs in with `token`. */
export async function openConsole(page: Page, url: string, token?: string): Promise<void> {
  await page.goto(`${url}/`, { waitUntil: 'domcontentloaded' });
  if (token) {
    await page.waitForSelector('input[name=token]');
    await page.type('input[name=token]', token);
    await page.click('form.signin button[type=submit]');
  }
  await page.waitForSelector('[data-field=who]');
}

/** axe-core's violations of impact serious or critical on the page as it is now. */
export async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol: the page's Content-Security-Policy does not apply.
  await page.evaluate(axeSource());
  const found = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: {
          run(): Promise<{ violations: { id: string; impact: string; nodes: { target: unknown }[] }[] }>;
        };
      }
    ).axe;
    const r = await axe.run();
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      targets: v.nodes.map((n) => JSON.stringify(n.target)),
    }));
  });
  return found
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.targets.slice(0, 3).join(' ')}`);
}

/** The page at both sizes, full length, as test/screenshots/<name>-<size>.png. */
export async function screenshots(page: Page, name: string): Promise<string[]> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const before = page.viewport();
  const files: string[] = [];
  for (const [size, viewport] of Object.entries(SIZES)) {
    await page.setViewport(viewport);
    const path = join(SCREENSHOTS, `${name}-${size}.png`) as `${string}.png`;
    await page.screenshot({ path, fullPage: true });
    files.push(path);
  }
  if (before) await page.setViewport(before);
  return files;
}

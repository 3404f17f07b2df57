/**
 * Benchmark: the web console (issue #29) at the size of a large deployment. 10,000 Collectors
 * in 10 rollouts are written to Redis through the real store (one rollout of 5,000 on the
 * worklist, nine of 556 half done), the daemon's HTTP server runs in a process of its own
 * (bench/lib/console-server.ts), and Debian's Chromium (puppeteer-core) opens the console.
 *
 * Reported: the console's files and their gzipped size (the budget: 300 KB); the overview's time
 * from navigation to its 10 rollouts drawn (best and worst of `--runs`; budget 1 s); the rollout
 * page's time to its worklist of 5,000 rows (paged by 100) and the slowest page turn and filter;
 * the server process's CPU over `--seconds` with no console open, then with `--consoles` open
 * (each asks /status every 1.5 s), as a share of one core (budget: 5 %).
 *
 * Run: npm run bench -- console [--consoles 20] [--seconds 30] [--runs 3]   (needs npm run build)
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Page } from 'puppeteer-core';
import { provisionRedis } from '../scripts/provision-redis.mjs';
import { createState } from '../src/cli/boot/create-state.js';
import { loadConsoleAssets } from '../src/http/serve-console.js';
import { createLogger } from '../src/lib/logger.js';
import { closeRedis, createRedis } from '../src/lib/redis/create-redis.js';
import { ensureRedis } from '../src/lib/redis/redis-server.js';
import { type LifeSettings, newRecord } from '../src/rollout/collector/index.js';
import {
  type CollectorEvent,
  type CollectorRecord,
  type RolloutSettings,
  transition,
} from '../src/rollout/index.js';
import { launchChromium, personPage } from '../test/support/console-browser.js';
import { TEST_SETTINGS } from '../test/support/rollout-settings.js';

/** The page's globals that the functions run in the browser use (this file has no DOM types). */
declare const document: {
  querySelectorAll(selector: string): Iterable<{ textContent: string | null; click(): void }>;
  querySelector(
    selector: string,
  ): { value: string; textContent: string | null; dispatchEvent(e: unknown): boolean } | null;
};
declare class Event {
  constructor(type: string, init?: { bubbles?: boolean });
}
declare function requestAnimationFrame(callback: () => void): number;

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}
const CONSOLES = arg('consoles', 20);
const SECONDS = arg('seconds', 30);
const RUNS = arg('runs', 3);
const SETTINGS: RolloutSettings = TEST_SETTINGS;

const assets = loadConsoleAssets();
if (!assets) throw new Error('the console is not built: npm run build');
const logger = createLogger({ level: 'silent', name: 'bench' });
const provisioned = await provisionRedis({ ensureRedis, logger });
const redis = createRedis(provisioned.url, { name: 'bench-console' });
const prefix = `bench:${randomBytes(6).toString('hex')}:`;
const state = createState(redis, prefix);
const now = Date.now();

const PENDING: CollectorEvent[] = [
  { type: 'admit' },
  { type: 'send' },
  { type: 'created', taskId: '424242', requestTime: now, createdBy: 'bench' },
];
const MANUAL: CollectorEvent = {
  type: 'manual',
  message: 'not enough disk space',
  failureClass: 'disk_space',
  status: 3,
};
const SUCCEEDED: CollectorEvent = { type: 'succeeded', status: 2 };

/** Writes `count` Collectors into rollout `id`, moving the first `moved` along `path`, 500 at a time. */
async function seed(id: string, first: number, count: number, moved: number, path: CollectorEvent[]) {
  const settings: LifeSettings = { ...SETTINGS, notAliveAttempts: 1_000, errorAttempts: 1_000 };
  for (let from = 0; from < count; from += 500) {
    let batch: CollectorRecord[] = Array.from({ length: Math.min(500, count - from) }, (_, i) =>
      newRecord(
        { id: first + from + i, name: `c-${first + from + i}`, collectorVersion: '19.400-5' },
        id.split('@')[1] as string,
        now,
      ),
    );
    await state.store.discover(id, batch);
    batch = batch.filter((_, i) => from + i < moved);
    for (const event of path) {
      const moves = batch.map((r) => {
        const t = transition(r, event, { now, settings, random: () => 0.5 });
        if (!t.ok) throw new Error(t.reason);
        return t.move;
      });
      await state.store.apply(id, moves, { limit: 100_000 });
      batch = moves.map((m) => m.next);
    }
  }
}

const ids: string[] = [];
let next = 1;
const seeded = performance.now();
for (let i = 0; i < 10; i++) {
  const { rollout } = await state.rollouts.start({
    policy: `policy-${i}`,
    target: 'latest',
    build: '19.470-4',
    maxInFlight: 100,
    settings: SETTINGS,
    now,
  });
  ids.push(rollout.id);
  const count = i === 0 ? 5_000 : 556;
  await seed(
    rollout.id,
    next,
    count,
    i === 0 ? count : count / 2,
    i === 0 ? [...PENDING, MANUAL] : [...PENDING, SUCCEEDED],
  );
  next += count;
}
const total = next - 1;
const seedSeconds = (performance.now() - seeded) / 1000;

// The server, alone in its process.
const child = spawn(
  process.execPath,
  ['--import', 'tsx', join(import.meta.dirname, 'lib', 'console-server.ts')],
  {
    env: { ...process.env, REDIS_URL: provisioned.url, FLEET_UPGRADE_KEY_PREFIX: prefix },
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
const line = await new Promise<string>((resolve) =>
  createInterface({ input: child.stdout }).once('line', resolve),
);
const { url } = JSON.parse(line) as { url: string };
const ticks = () => {
  const f = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return Number(f[11]) + Number(f[12]);
};
const HZ = 100;

const browser = await launchChromium();
const timeTo = async (page: Page, path: string, ready: string) => {
  await page.goto(`${url}${path}`, { waitUntil: 'domcontentloaded' });
  await page.waitForFunction(ready, { timeout: 30_000 });
  return page.evaluate(() => performance.now());
};
const overview: number[] = [];
const rolloutPage: number[] = [];
let turn = 0;
let filter = 0;
for (let r = 0; r < RUNS; r++) {
  const page = await personPage(browser);
  overview.push(
    await timeTo(page, '/', "document.querySelectorAll('tr[data-rollout]:not([data-org])').length === 10"),
  );
  rolloutPage.push(
    await timeTo(
      page,
      `/#/rollout/${encodeURIComponent(ids[0] as string)}`,
      "document.querySelector('[data-field=worklist-count]')?.textContent === '5000 of 5000 Collectors' && document.querySelectorAll('.worklist tbody tr').length === 100",
    ),
  );
  for (let p = 0; p < 5; p++) {
    const t = await page.evaluate(async () => {
      const start = performance.now();
      const nextButton = [...document.querySelectorAll('.pager button')].find(
        (b) => b.textContent === 'Next',
      );
      nextButton?.click();
      await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
      return performance.now() - start;
    });
    turn = Math.max(turn, t);
  }
  // One keystroke's worth of filtering over the 5,000 rows: the input event to the next frame.
  filter = Math.max(
    filter,
    await page.evaluate(async () => {
      const input = document.querySelector('.worklist input[type=search]');
      const start = performance.now();
      if (input) {
        input.value = 'c-4';
        input.dispatchEvent(new Event('input', { bubbles: true }));
      }
      await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
      return performance.now() - start;
    }),
  );
  if (
    !(await page.evaluate(() =>
      document.querySelector('[data-field=worklist-count]')?.textContent?.startsWith('1111 of 5000'),
    ))
  )
    throw new Error('the filter did not narrow the worklist to c-4*');
  await page.browserContext().close();
}

const cpu = async (seconds: number) => {
  const t0 = ticks();
  const w0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  return (ticks() - t0) / HZ / ((performance.now() - w0) / 1000);
};
const idle = await cpu(Math.min(SECONDS, 10));
const open: Page[] = [];
for (let i = 0; i < CONSOLES; i++) {
  const page = await personPage(browser);
  await page.goto(`${url}/`, { waitUntil: 'domcontentloaded' });
  open.push(page);
}
const busy = await cpu(SECONDS);
const requests = Math.round((CONSOLES * SECONDS * 1000) / 1500);

await browser.close();
child.kill('SIGTERM');
const keys = await redis.keys(`${prefix}*`);
for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
await closeRedis(redis);
await provisioned.stop();

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
const sizes = assets.sizes();
const ms = (xs: number[]) => `best ${Math.min(...xs).toFixed(0)} ms, worst ${Math.max(...xs).toFixed(0)} ms`;
process.stdout.write(
  [
    `web console: ${total} Collectors in 10 rollouts (seeded in ${seedSeconds.toFixed(1)} s), ${RUNS} runs`,
    `  assets               ${sizes.map((s) => `${s.name} ${kb(s.gzipped)}`).join(', ')}; gzipped total ${kb(sizes.reduce((a, s) => a + s.gzipped, 0))} (budget 300 KB)`,
    `  overview drawn       ${ms(overview)} from navigation (budget 1 s)`,
    `  rollout + worklist   ${ms(rolloutPage)} to 5,000 rows read, first page of 100 drawn`,
    `  worklist page turn   slowest ${turn.toFixed(0)} ms; filter over 5,000 rows ${filter.toFixed(0)} ms`,
    `  server CPU           ${(idle * 100).toFixed(1)} % of a core idle; ${(busy * 100).toFixed(1)} % with ${CONSOLES} consoles open for ${SECONDS} s (~${requests} /status reads; budget 5 %)`,
    '',
  ].join('\n'),
);

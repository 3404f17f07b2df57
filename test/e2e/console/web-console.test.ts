/**
 * The web console (issue #29) through the real path: `run` of the built CLI with `access:`, two
 * simulator organizations (emea, apac), the test Redis, and Debian's Chromium driven by
 * puppeteer-core, one incognito context per person. A person signed in by the proxy's headers
 * from its address (ignored from another); the overview shows the numbers of `status --json`,
 * each rollout's time left (`GET /eta`), follows a change without a reload and puts a problem of
 * the daemon first; a viewer sees no action and a request forged in the page is refused; an
 * operator of emea pauses emea from the rollout page; each confirmation says what the command's
 * `--help` says; two people approve a wave from two browser sessions; the worklist's CSV is
 * `report --worklist --format csv`; the fleet page shows the builds of `fleet --format json` and
 * compliance over time (`GET /fleet/history`) moved by the rollout; the plan page what `plan
 * --json` lists, `minAge` and `after` weighed alike; axe-core finds nothing serious or critical on
 * any page; screenshots at 1280×800 and 390×844 go to test/screenshots/.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InventoryStore } from '../../../src/inventory/index.js';
import type { FleetStatus, RolloutStatus } from '../../../src/rollout/index.js';
import {
  launchChromium,
  openConsole,
  personPage,
  screenshots,
  seriousViolations,
} from '../../support/console-browser.js';
import { type OrgsHarness, orgFleet, startOrgsHarness } from '../../support/orgs-harness.js';
import { freePort } from '../../support/redis-topology.js';
import { exitOf } from '../../support/rollout-harness.js';

/** The page's globals that the functions run in the browser use (this file has no DOM types). */
declare const document: {
  cookie: string;
  querySelector(selector: string): { textContent: string | null } | null;
  querySelectorAll(selector: string): { length: number };
  activeElement: { hasAttribute(name: string): boolean; textContent: string | null } | null;
};
declare const location: { href: string };
declare const localStorage: unknown;
declare const sessionStorage: unknown;
declare const window: { loadedOnce?: number };
declare class Event {
  constructor(type: string, init?: { bubbles?: boolean });
}

const TOKENS = {
  vera: 'vera-token-0123456789abcdef',
  olga: 'olga-token-0123456789abcdef',
  omar: 'omar-token-0123456789abcdef',
  otto: 'otto-token-0123456789abcdef',
} as const;
const ID = 'fleet@19.470-4';
const HASH = `#/rollout/${encodeURIComponent(ID)}`;

let h: OrgsHarness;
let browser: Browser;
let url: string;
const pages: Page[] = [];

/** A fleet of 4 whose Collector 103 fails for want of disk space (the worklist). */
function fleet(org: string) {
  const f = orgFleet(org, { count: 4, upgradeSeconds: 60 });
  const last = f.collectors?.[3];
  if (last) Object.assign(last, { outcome: 'fail', failureCause: 'disk_space' });
  return f;
}

async function cli(args: string[]): Promise<string> {
  const child = h.spawnCli(args);
  const code = await exitOf(child, 30_000);
  expect(code, child.output()).toBe(0);
  return child.output();
}

const statusJson = async () => JSON.parse(await cli(['status', '--json'])) as FleetStatus;
const rolloutOf = (s: FleetStatus): RolloutStatus | undefined => s.rollouts.find((r) => r.id === ID);

async function post(action: string, token: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}/rollouts/${encodeURIComponent(ID)}/${action}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

async function person(token: string | undefined, hash = ''): Promise<Page> {
  const page = await personPage(browser);
  pages.push(page);
  await openConsole(page, url, token);
  if (hash) await page.goto(`${url}/${hash}`);
  return page;
}

/** The numbers a row of the overview shows (data-field cells). */
function rowNumbers(page: Page, selector: string) {
  return page.$eval(selector, (row) => {
    const n = (f: string) => Number(row.querySelector(`[data-field=${f}]`)?.textContent);
    return { done: n('done'), total: n('total'), inflight: n('inflight'), succeeded: n('succeeded') };
  });
}

/** The action buttons shown on the rollout page, by their words. */
const buttons = (page: Page) =>
  page.$$eval('[data-action] > button', (bs) => bs.map((b) => b.textContent?.trim() ?? ''));

async function act(page: Page, label: string): Promise<{ status: string; text: string }> {
  const action = await page.waitForSelector(
    `::-p-xpath(//div[@data-action][button[normalize-space()="${label}"]])`,
  );
  if (!action) throw new Error(`no action ${label}`);
  await (await action.$('button'))?.click();
  await action.waitForSelector('fieldset.confirm button[data-confirm]');
  // It says what it will do (the words of the command's help) and names the command.
  expect(await action.$eval('fieldset.confirm [data-field=sentence]', (p) => p.textContent)).toMatch(/\w/);
  const name = await action.evaluate((a) => a.getAttribute('data-action'));
  expect(await action.$eval('fieldset.confirm [data-field=command]', (c) => c.textContent)).toMatch(
    new RegExp(`^fleet-upgrade ${name} `),
  );
  // The keyboard's focus is on the confirmation: Enter confirms.
  await page.waitForFunction(() => document.activeElement?.hasAttribute('data-confirm') === true);
  await page.keyboard.press('Enter');
  const answer = await action.waitForSelector('[data-answer]');
  return {
    status: (await answer?.evaluate((a) => a.getAttribute('data-answer'))) ?? '',
    text: (await answer?.evaluate((a) => a.textContent)) ?? '',
  };
}

const HISTORY_BUCKET_MS = 5 * 60_000;
interface HistorySeries {
  org: string;
  policy: string;
  points: { at: number; target: string | null; compliant: number; selected: number }[];
}

/**
 * GET /fleet/history once its last sample of each organization counts what status says succeeded
 * (the rollout done, an inventory pass since): the series of policy `fleet`.
 */
async function historyMoved(): Promise<HistorySeries[]> {
  const s = await h.waitFor((x) => {
    const r = rolloutOf(x);
    return r !== undefined && r.total > 0 && r.done === r.total;
  }, 60_000);
  const succeeded = new Map(rolloutOf(s)?.byOrg?.map((p) => [p.org, p.counts.succeeded ?? 0]));
  expect([...succeeded.values()]).toEqual([3, 3]);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await fetch(`${url}/fleet/history`, { headers: { authorization: `Bearer ${TOKENS.vera}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { bucketMs: number; series: HistorySeries[] };
    expect(body.bucketMs).toBe(HISTORY_BUCKET_MS);
    const fleet = body.series.filter((x) => x.policy === 'fleet');
    const done =
      fleet.length === 2 && fleet.every((x) => x.points.at(-1)?.compliant === succeeded.get(x.org));
    if (done) return fleet;
    if (Date.now() > deadline)
      throw new Error(`the history did not reach status's counts: ${JSON.stringify(fleet)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function accessible(page: Page, name: string): Promise<void> {
  expect(await seriousViolations(page), name).toEqual([]);
  await screenshots(page, name);
}

beforeAll(async () => {
  h = await startOrgsHarness({
    orgs: [
      { name: 'emea', fleet: fleet('emea') },
      { name: 'apac', fleet: fleet('apac') },
    ],
    policy: {
      name: 'fleet',
      maxInFlight: 8,
      verify: false,
      poll: { initial: '20s', max: '1m' },
      waves: [{ size: 2, approval: { approvers: 2 } }, '100%'],
    },
    timeScale: 300,
  });
  const dir = dirname(h.settingsFile);
  const files: Record<string, string> = {};
  for (const name of Object.keys(TOKENS) as (keyof typeof TOKENS)[]) {
    files[name] = join(dir, `${name}.token`);
    writeFileSync(files[name], `${TOKENS[name]}\n`, { mode: 0o600 });
  }
  const { parse, stringify } = await import('yaml');
  const settings = parse(readFileSync(h.settingsFile, 'utf8')) as Record<string, unknown>;
  settings.access = {
    // Single sign-on: the proxy is on this machine (127.0.0.1); the same headers from any other
    // address are ignored.
    proxy: {
      userHeader: 'X-Forwarded-User',
      groupsHeader: 'X-Forwarded-Groups',
      trustedAddresses: ['127.0.0.1/32'],
      groups: { 'emea-ops': { role: 'operator', orgs: ['emea'] } },
    },
    users: [
      { name: 'vera', tokenFile: files.vera, role: 'viewer' },
      { name: 'olga', tokenFile: files.olga, role: 'operator', orgs: ['emea'] },
      { name: 'omar', tokenFile: files.omar, role: 'operator' },
      { name: 'otto', tokenFile: files.otto, role: 'operator' },
    ],
  };
  writeFileSync(h.settingsFile, stringify(settings));
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  h.spawnRun(`127.0.0.1:${port}`);
  browser = await launchChromium();
  // The first wave (2 Collectors) done, the second waits for two approvals.
  await h.waitFor((s) => rolloutOf(s)?.wave?.waitingFor === 'approval', 60_000);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe('the web console', () => {
  it('asks a token of whoever the daemon does not know, and keeps it out of the URL and storage', async () => {
    const page = await personPage(browser);
    pages.push(page);
    await page.goto(`${url}/`);
    await page.waitForSelector('form.signin');
    await accessible(page, 'sign-in');
    await page.type('input[name=token]', 'nobody-token-0123456789abcdef');
    await page.click('form.signin button[type=submit]');
    const alert = await page.waitForSelector('[role=alert]');
    expect(await alert?.evaluate((a) => a.textContent)).toBe(
      'the bearer token is not the token of anyone in access.users',
    );
    await page.type('input[name=token]', TOKENS.vera);
    await page.click('form.signin button[type=submit]');
    await page.waitForSelector('[data-field=who]');
    expect(await page.$eval('[data-field=who]', (w) => w.textContent)).toMatch(/^vera \(viewer\)/);
    const kept = await page.evaluate(() => ({
      url: location.href,
      local: JSON.stringify(localStorage),
      session: JSON.stringify(sessionStorage),
      cookie: document.cookie,
    }));
    expect(JSON.stringify(kept)).not.toContain(TOKENS.vera);
  });

  it("signs in a person by the proxy's headers from its address, and ignores them from another", async () => {
    const page = await personPage(browser);
    pages.push(page);
    // As oauth2-proxy in front of the daemon would send them, on every request of the page.
    await page.setExtraHTTPHeaders({ 'X-Forwarded-User': 'pat', 'X-Forwarded-Groups': 'emea-ops' });
    await openConsole(page, url);
    expect(await page.$('form.signin')).toBeNull();
    expect(await page.$eval('[data-field=who]', (w) => w.textContent)).toBe('pat (operator of emea)');
    await page.goto(`${url}/${HASH}`);
    await page.waitForSelector('[data-action]');
    expect(await buttons(page)).toEqual(['Pause emea']);
    // The same headers from 127.0.0.2 (loopback too, but not the proxy's address): nobody.
    const whoami = async (localAddress: string) => {
      const dispatcher = new Agent({ localAddress });
      try {
        const res = await request(`${url}/whoami`, {
          dispatcher,
          headers: { 'x-forwarded-user': 'pat', 'x-forwarded-groups': 'emea-ops' },
        });
        return { status: res.statusCode, body: await res.body.text() };
      } finally {
        await dispatcher.close();
      }
    };
    const trusted = await whoami('127.0.0.1');
    expect(trusted.status).toBe(200);
    expect(JSON.parse(trusted.body)).toMatchObject({ name: 'pat', role: 'operator', via: 'proxy' });
    const untrusted = await whoami('127.0.0.2');
    expect(untrusted.status, untrusted.body).toBe(401);
    expect(untrusted.body).not.toContain('pat');
  });

  it('shows on the overview the numbers of status --json, and follows a change without a reload', async () => {
    const page = await person(TOKENS.vera);
    const row = `tr[data-rollout="${ID}"]:not([data-org])`;
    await page.waitForSelector(row);
    await page.evaluate(() => {
      window.loadedOnce = 1;
    });
    // Waiting for approvals: the numbers hold still while both are read.
    const r = rolloutOf(await statusJson());
    expect(r?.phase).toBe('running');
    expect(await rowNumbers(page, row)).toEqual({
      done: r?.done,
      total: r?.total,
      inflight: r?.inflight,
      succeeded: r?.counts.succeeded ?? 0,
    });
    for (const part of r?.byOrg ?? [])
      expect(await rowNumbers(page, `tr[data-rollout="${ID}"][data-org="${part.org}"]`)).toEqual({
        done: part.done,
        total: part.total,
        inflight: part.inflight,
        succeeded: part.counts.succeeded ?? 0,
      });
    expect(await page.$eval(`${row} [data-field=phase]`, (c) => c.textContent)).toBe(r?.phaseText);
    expect(await page.$eval('body', (b) => b.textContent)).toContain('2 more approvals for wave 2');
    await accessible(page, 'overview');

    // A change made elsewhere shows within 2 s, in the same page.
    expect((await post('pause', TOKENS.omar, { org: 'apac' })).status).toBe(200);
    const changed = Date.now();
    await page.waitForFunction(
      (id) =>
        document.querySelector(`tr[data-rollout="${id}"][data-org="apac"]`)?.textContent?.includes('paused'),
      { timeout: 2000 },
      ID,
    );
    expect(Date.now() - changed).toBeLessThan(2000);
    expect(await page.evaluate(() => window.loadedOnce)).toBe(1);
    expect((await post('resume', TOKENS.omar, { org: 'apac' })).status).toBe(200);
  });

  it("shows each rollout's and part's time left: its upgrades left, its limit, its median duration", async () => {
    const page = await person(TOKENS.vera);
    const row = `tr[data-rollout="${ID}"]:not([data-org])`;
    await page.waitForSelector(`${row} [data-field=eta][data-eta-ms]`);
    // Waiting for approvals: nothing moves while the page and the truth are read.
    const r = rolloutOf(await statusJson());
    expect(r?.wave?.waitingFor).toBe('approval');
    const durations = (await h.redis.lrange(h.state.keys.durations(ID), 0, 99))
      .map(Number)
      .sort((a, b) => a - b);
    expect(durations.length).toBeGreaterThan(0);
    const median = durations[Math.floor(durations.length / 2)] as number;
    const expected = (left: number) => Math.ceil(left / (r?.maxInFlight ?? 1)) * median;
    const shown = (selector: string) =>
      page.$eval(`${selector} [data-field=eta]`, (c) => ({
        ms: Number(c.getAttribute('data-eta-ms')),
        text: c.textContent,
      }));
    const whole = await shown(row);
    expect(whole.ms).toBe(expected((r?.total ?? 0) - (r?.done ?? 0)));
    expect(whole.text).toMatch(/ of upgrades \(then approval\)$/);
    for (const part of r?.byOrg ?? [])
      expect((await shown(`tr[data-rollout="${ID}"][data-org="${part.org}"]`)).ms, part.org).toBe(
        expected(part.total - part.done),
      );
    // The API says the same, with what it is made of.
    const res = await fetch(`${url}/eta`, { headers: { authorization: `Bearer ${TOKENS.vera}` } });
    const eta = (await res.json()) as {
      rollouts: { id: string; etaMs: number; medianMs: number; samples: number }[];
    };
    expect(eta.rollouts.find((e) => e.id === ID)).toMatchObject({
      etaMs: whole.ms,
      medianMs: median,
      samples: durations.length,
    });
  });

  it('shows a viewer no action, and refuses a request forged in the page', async () => {
    const page = await person(TOKENS.vera, HASH);
    await page.waitForSelector('[data-field=org-state]');
    expect(await buttons(page)).toEqual([]);
    await accessible(page, 'rollout-viewer');
    const forged = await page.evaluate(
      async (id, token) => {
        const send = async (headers: Record<string, string>) => {
          const res = await fetch(`/rollouts/${encodeURIComponent(id)}/pause`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...headers },
            body: '{}',
          });
          return { status: res.status, body: await res.text() };
        };
        return { asVera: await send({ authorization: `Bearer ${token}` }), asNobody: await send({}) };
      },
      ID,
      TOKENS.vera,
    );
    expect(forged.asVera.status).toBe(403);
    expect(forged.asVera.body).toContain('vera is a viewer: pause needs the role operator');
    expect(forged.asNobody.status).toBe(401);
    // A page of another origin gets nothing, even with a token (the Origin rule of the control API).
    const foreign = await post('pause', TOKENS.omar, {}, { origin: 'http://evil.example' });
    expect(foreign.status).toBe(403);
    const crossSite = await post('pause', TOKENS.omar, {}, { origin: url, 'sec-fetch-site': 'cross-site' });
    expect(crossSite.status).toBe(403);
    const r = rolloutOf(await statusJson());
    expect(r?.phase).toBe('running');
    expect(r?.pausedOrgs ?? []).toEqual([]);
  });

  it('lets an operator of emea pause emea from the rollout page, and status shows it', async () => {
    const page = await person(TOKENS.olga, HASH);
    await page.waitForSelector('[data-action]');
    // Only what olga may do: emea's part, nothing of apac's nor of the whole rollout.
    expect(await buttons(page)).toEqual(['Pause emea']);
    const answer = await act(page, 'Pause emea');
    expect(answer.status).toBe('200');
    expect(answer.text).toMatch(/^200: .*paused by olga/);
    const r = rolloutOf(await statusJson());
    expect(r?.pausedOrgs).toEqual([expect.objectContaining({ org: 'emea', by: 'olga' })]);
    await page.waitForFunction(() =>
      document
        .querySelector('[data-org=emea] [data-field=org-state]')
        ?.textContent?.startsWith('paused by olga'),
    );
    await accessible(page, 'rollout-operator');
    expect((await act(page, 'Resume emea')).status).toBe('200');
    expect(rolloutOf(await statusJson())?.pausedOrgs ?? []).toEqual([]);
  });

  it("confirms each action in the words of its command's help, naming the command", {
    timeout: 60_000,
  }, async () => {
    const page = await person(TOKENS.omar, HASH);
    // emea resumed by the test before: its button says Pause again (the page follows within 1.5 s).
    await page.waitForSelector('::-p-xpath(//div[@data-action][button[normalize-space()="Pause emea"]])');
    const shown = await buttons(page);
    expect(shown).toEqual(expect.arrayContaining(['Pause emea', 'Approve', 'Abort']));
    const helps = new Map<string, string>();
    const flat = (text: string) => text.replace(/\s+/g, ' ').trim();
    for (const label of shown) {
      const action = await page.waitForSelector(
        `::-p-xpath(//div[@data-action][button[normalize-space()="${label}"]])`,
      );
      const name = (await action?.evaluate((a) => a.getAttribute('data-action'))) ?? '';
      await (await action?.$('button'))?.click();
      await action?.waitForSelector('fieldset.confirm [data-field=sentence]');
      const said = (await action?.$$eval('fieldset.confirm [data-field=sentence]', (ps) =>
        ps.map((p) => p.textContent ?? ''),
      )) as string[];
      const command = await action?.$eval('fieldset.confirm [data-field=command]', (c) => c.textContent);
      if (!helps.has(name)) helps.set(name, flat(await cli([name, '--help'])));
      const help = helps.get(name) ?? '';
      const [sentence, orgSentence] = said;
      // The help's description, word for word; with an organization, its --org option's words.
      expect(help, label).toContain(flat(sentence ?? '-'));
      const org = label.match(/^(?:Pause|Resume) (\S+)$/)?.[1];
      if (org) {
        expect(orgSentence?.startsWith(`--org ${org}: `), label).toBe(true);
        expect(help, label).toContain(
          `--org <name> ${flat(orgSentence?.slice(`--org ${org}: `.length) ?? '-')}`,
        );
        expect(command).toBe(`fleet-upgrade ${name} ${ID} --org ${org}`);
      } else {
        expect(said, label).toHaveLength(1);
        expect(command, label).toMatch(new RegExp(`^fleet-upgrade ${name} ${ID.replace(/[.@]/g, '\\$&')}`));
      }
      // Escape closes it: nothing was sent.
      await page.keyboard.press('Escape');
      await page.waitForFunction(() => !document.querySelector('fieldset.confirm'));
    }
    // The confirmation has the focus as soon as it is drawn; Escape on the opener closes it too (a
    // key pressed before the focus moved), and the focus goes back to the opener.
    const abort = await page.waitForSelector(
      '::-p-xpath(//div[@data-action][button[normalize-space()="Abort"]])',
    );
    await (await abort?.$('button'))?.click();
    expect(await page.evaluate(() => document.activeElement?.hasAttribute('data-confirm'))).toBe(true);
    await (await abort?.$('button'))?.focus();
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => !document.querySelector('fieldset.confirm'));
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Abort');
    expect(rolloutOf(await statusJson())?.wave.waitingFor).toBe('approval');
  });

  it('completes a two-person approval from two browser sessions', async () => {
    const omar = await person(TOKENS.omar, HASH);
    const otto = await person(TOKENS.otto, HASH);
    const first = await act(omar, 'Approve');
    expect(first.status, first.text).toBe('200');
    expect(rolloutOf(await statusJson())?.wave.waitingFor).toBe('approval');
    // The same person twice is refused (a new session: a reload forgets the token), in the server's words.
    const again = await act(await person(TOKENS.omar, HASH), 'Approve');
    expect(again.status).toBe('409');
    expect(again.text).toMatch(/a second approval must come from another person/);
    const second = await act(otto, 'Approve');
    expect(second.status, second.text).toBe('200');
    const s = await h.waitFor((x) => rolloutOf(x)?.wave.index === 1, 20_000);
    expect(rolloutOf(s)?.wave.approval).toBeUndefined();
    const audit = await person(TOKENS.vera, '#/audit');
    await audit.waitForFunction(() => document.querySelectorAll('tbody tr').length > 0);
    const rows = await audit.$$eval('tbody tr', (trs) => trs.map((t) => t.textContent ?? ''));
    expect(rows.filter((t) => /approve/.test(t) && /allowed/.test(t)).length).toBe(2);
    await accessible(audit, 'audit');
  });

  it('downloads the worklist as the CSV of report --worklist --format csv', async () => {
    await h.waitFor((s) => {
      const r = rolloutOf(s);
      return r !== undefined && r.total > 0 && r.done === r.total;
    }, 60_000);
    const page = await person(TOKENS.vera, HASH);
    await page.waitForFunction(
      () => document.querySelector('[data-field=worklist-count]')?.textContent === '2 of 2 Collectors',
    );
    const dir = mkdtempSync(join(tmpdir(), 'console-download-'));
    try {
      const cdp = await page.createCDPSession();
      await cdp.send('Browser.setDownloadBehavior', {
        behavior: 'allow',
        downloadPath: dir,
        browserContextId: page.browserContext().id,
        eventsEnabled: true,
      });
      await page.click('::-p-text(Download CSV)');
      const deadline = Date.now() + 10_000;
      let files: string[] = [];
      while (Date.now() < deadline) {
        files = readdirSync(dir).filter((f) => f.endsWith('.csv'));
        if (files.length) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(files).toEqual([`${ID}-worklist.csv`]);
      const csv = readFileSync(join(dir, files[0] as string), 'utf8');
      expect(csv).toBe(await cli(['report', ID, '--worklist', '--format', 'csv']));
      expect(csv.trim().split('\n')).toHaveLength(3);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    await accessible(page, 'rollout-worklist');
  }, 90_000);

  it("shows the fleet's builds by organization as fleet --format json does", {
    timeout: 60_000,
  }, async () => {
    // The daemon's first inventory pass of both organizations (it starts with the daemon).
    const store = new InventoryStore(h.redis, h.state.keys);
    const deadline = Date.now() + 30_000;
    while ((await store.read(['emea', 'apac'])).some((o) => !o.pass)) {
      if (Date.now() > deadline) throw new Error('no inventory pass of emea and apac within 30 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    const fleetJson = async () => {
      const fleet = JSON.parse(await cli(['fleet', '--config', h.settingsFile, '--format', 'json'])) as {
        orgs: { org: string; builds: { build: string; collectors: number }[] }[];
      };
      return fleet.orgs.flatMap((o) => o.builds.map((b) => `${b.build} ${o.org} ${b.collectors}`)).sort();
    };
    // The inventory moves on once a pass (at this time scale, every few seconds): a page and the
    // command are compared when the command reads the same before and after the page did.
    for (let attempt = 1; ; attempt++) {
      const before = await fleetJson();
      expect(before.length).toBeGreaterThan(0);
      const page = await person(TOKENS.vera, '#/fleet');
      await page.waitForSelector('[data-table=builds] tbody tr');
      const shown = await page.$$eval('[data-table=builds] tbody tr', (rows) =>
        rows.flatMap((row) =>
          [...row.querySelectorAll('td[data-org]')]
            .filter((td) => td.textContent)
            .map(
              (td) =>
                `${row.getAttribute('data-build')} ${td.getAttribute('data-org')} ${Number.parseInt(td.textContent ?? '', 10)}`,
            ),
        ),
      );
      const after = await fleetJson();
      if (JSON.stringify(before) !== JSON.stringify(after) && attempt < 5) continue;
      expect(shown.sort()).toEqual(after);
      await accessible(page, 'fleet');
      break;
    }
  });

  it("keeps compliance over time: the rollout moved each organization's line (GET /fleet/history)", {
    timeout: 60_000,
  }, async () => {
    const series = await historyMoved();
    for (const s of series) {
      const known = s.points.filter((p) => p.target !== null && p.selected > 0);
      expect(
        known.every((p) => p.target === '19.470-4' && p.selected === 4),
        s.org,
      ).toBe(true);
      // Before the rollout had moved them all: fewer on target than now.
      expect(Math.min(...known.map((p) => p.compliant)), s.org).toBeLessThan(known.at(-1)?.compliant ?? 0);
      // One sample per bucket, oldest first.
      const ats = s.points.map((p) => p.at);
      expect(ats).toEqual([...new Set(ats)].sort((a, b) => a - b));
      expect(ats.every((at) => at % HISTORY_BUCKET_MS === 0)).toBe(true);
    }
  });

  it('draws that line on the fleet page', { timeout: 60_000 }, async () => {
    const series = await historyMoved();
    const page = await person(TOKENS.vera, '#/fleet');
    for (const s of series) {
      const last = s.points.at(-1);
      const item = await page.waitForSelector(`li[data-series="${s.org}/fleet"]`);
      expect(await item?.evaluate((li) => li.getAttribute('data-compliant'))).toBe(String(last?.compliant));
      expect(await item?.evaluate((li) => li.getAttribute('data-selected'))).toBe('4');
      // The line goes up: its points' heights (SVG y grows downwards) are not all the same.
      const ys = await page.$eval(`polyline[data-series="${s.org}/fleet"]`, (line) =>
        (line.getAttribute('points') ?? '').split(' ').map((xy: string) => Number(xy.split(',')[1])),
      );
      expect(ys.length).toBeGreaterThanOrEqual(2);
      expect(Math.max(...ys)).toBeGreaterThan(ys.at(-1) ?? Number.POSITIVE_INFINITY);
    }
    await accessible(page, 'fleet-history');
  });

  it('weighs minAge and after in POST /plan as plan does, and shows what they decided', {
    timeout: 60_000,
  }, async () => {
    const dir = dirname(h.settingsFile);
    const policies = {
      // Every build was first seen when the daemon started: none is 30 days old.
      young: 'name: young\ntarget: latest\nminAge: 30d\nverify: false\n',
      // The ring of policy fleet: its build once fleet's rollout has converged and soaked.
      ring: 'name: ring\ntarget: latest\nafter: { policy: fleet, soak: 1m }\nverify: false\n',
    };
    const planned: Record<string, { notes: string[]; collectors: unknown[] }> = {};
    for (const [name, text] of Object.entries(policies)) {
      const file = join(dir, `${name}.yaml`);
      writeFileSync(file, text);
      const fromCli = JSON.parse(await cli(['plan', '--policy', file, '--config', h.settingsFile, '--json']));
      const res = await fetch(`${url}/plan`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKENS.vera}`, 'content-type': 'application/json' },
        body: JSON.stringify({ policy: text }),
      });
      expect(res.status).toBe(200);
      const fromApi = (await res.json()) as { notes: string[]; collectors: unknown[] } & Record<
        string,
        unknown
      >;
      const same = ['policy', 'target', 'build', 'builds', 'listed', 'collectors', 'held', 'notes', 'failed'];
      const pick = (o: Record<string, unknown>) => Object.fromEntries(same.map((k) => [k, o[k]]));
      expect(pick(fromApi), name).toEqual(pick(fromCli));
      planned[name] = fromApi;
    }
    expect(planned.young?.collectors).toEqual([]);
    expect(planned.young?.notes).toContain('policy young: no build would start now (minAge)');
    const page = await person(TOKENS.vera, '#/plan');
    await page.waitForSelector('textarea#policy-text');
    await page.$eval(
      'textarea#policy-text',
      (t, text) => {
        const area = t as unknown as { value: string; dispatchEvent(e: unknown): boolean };
        area.value = text;
        area.dispatchEvent(new Event('input', { bubbles: true }));
      },
      policies.young,
    );
    await page.click('form.plan button[type=submit]');
    await page.waitForSelector('[data-field=plan-note]');
    const notes = await page.$$eval('[data-field=plan-note]', (ps) => ps.map((p) => p.textContent));
    expect(notes).toEqual(planned.young?.notes);
    expect(await page.$eval('[data-field=plan-summary]', (p) => p.textContent)).toContain(
      'would move to (none); nothing was created.',
    );
  });

  it('shows what plan would do with a pasted policy, and a bad one with its line', async () => {
    const cliPlan = JSON.parse(
      await cli(['plan', '--policy', h.policyFile, '--config', h.settingsFile, '--json']),
    ) as { listed: number; collectors: { org: string; id: number }[] };
    const page = await person(TOKENS.vera, '#/plan');
    await page.waitForSelector('textarea#policy-text');
    await page.$eval(
      'textarea#policy-text',
      (t, text) => {
        const area = t as unknown as { value: string; dispatchEvent(e: unknown): boolean };
        area.value = text;
        area.dispatchEvent(new Event('input', { bubbles: true }));
      },
      readFileSync(h.policyFile, 'utf8'),
    );
    await page.click('form.plan button[type=submit]');
    await page.waitForSelector('[data-field=plan-summary]');
    const moving = await page.$$eval('[data-table=plan] tbody tr', (rows) =>
      rows.map((r) => r.getAttribute('data-collector')),
    );
    expect(moving.sort()).toEqual(cliPlan.collectors.map((c) => `${c.org}/${c.id}`).sort());
    expect(await page.$eval('[data-field=plan-summary]', (p) => p.textContent)).toContain(
      `${cliPlan.collectors.length} of ${cliPlan.listed} offered Collectors`,
    );
    await accessible(page, 'plan');
    await page.$eval('textarea#policy-text', (t) => {
      const area = t as unknown as { value: string; dispatchEvent(e: unknown): boolean };
      area.value = 'name: broken\ntarget: latest\nmaxInFlight: many\n';
      area.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await page.click('form.plan button[type=submit]');
    const alert = await page.waitForSelector('[role=alert][data-answer="400"]');
    expect(await alert?.evaluate((a) => a.textContent)).toMatch(/^400: .*policy\.yaml:3:\d+: maxInFlight/);
  });
  it("puts the daemon's problems first on the overview, named with the alert rule they raise", {
    timeout: 60_000,
  }, async () => {
    const page = await person(TOKENS.vera);
    await page.waitForSelector(`tr[data-rollout="${ID}"]`);
    expect(await page.$('[data-alert]')).toBeNull();
    const valid = readFileSync(h.policyFile, 'utf8');
    // A policy file broken under the running daemon: it keeps the last valid one and says so.
    writeFileSync(h.policyFile, `${valid}maxInFlight: many\n`);
    try {
      const item = await page.waitForSelector('li[data-alert=FleetUpgradeDaemonProblem]', {
        timeout: 10_000,
      });
      const shown = (await item?.evaluate((li) => li.textContent)) ?? '';
      const problems = (await statusJson()).daemonProblems;
      expect(problems.length).toBe(1);
      expect(shown).toContain(problems[0]?.reason);
      expect(shown).toContain(problems[0]?.fix);
      expect(shown).toContain('(alert rule FleetUpgradeDaemonProblem (after 5 min))');
      // First: the problems come before what waits and before every rollout.
      const order = await page.$$eval('main section h2', (hs) => hs.map((x) => x.textContent));
      expect(order[0]).toBe('Problems and alerts');
      await accessible(page, 'overview-problem');
    } finally {
      writeFileSync(h.policyFile, valid);
    }
    // Valid again: the problem goes at the daemon's next heartbeat (5 s), and the page follows.
    await page.waitForFunction(() => !document.querySelector('[data-alert]'), { timeout: 20_000 });
  });
});

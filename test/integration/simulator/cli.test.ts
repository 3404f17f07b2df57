/**
 * The `fleet-upgrade simulate` command, run as a real process from the build in dist/ (made by
 * `npm test` before vitest, or `npm run build`): the logged listening URL, a request through it,
 * --time-scale, --lenient-content-type, a fleet file with an error (exit 78 naming file, line and
 * field), a fleet file of several organizations, the vendor's 10,000-Collector cap (exit 78), and
 * --help.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth, type Credentials, tick } from '../../support/simulator.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const BIN = join(ROOT, 'bin', 'fleet-upgrade.js');
/** The fleet file schema's default user, used by generated fleets. */
const DEMO: Credentials = { accessId: 'demo', accessKey: 'demo-secret' };

const children: ChildProcess[] = [];
const tempDirs: string[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
  }
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist', 'cli', 'main.js'))) {
    throw new Error('dist/cli/main.js is missing: run "npm run build" (npm test does it before vitest)');
  }
});

function tempFile(name: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-upgrade-cli-'));
  tempDirs.push(dir);
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

interface Started {
  child: ChildProcess;
  url: string;
  stderr: () => string;
}

/** Spawns `fleet-upgrade simulate ARGS` and resolves with the URL of its "simulator listening" log line. */
function startCli(args: string[]): Promise<Started> {
  const child = spawn(process.execPath, [BIN, 'simulate', ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no "simulator listening" line within 20 s\nstdout: ${out}\nstderr: ${err}`)),
      20_000,
    );
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      for (const line of out.split('\n')) {
        let entry: { msg?: unknown; url?: unknown };
        try {
          entry = JSON.parse(line);
        } catch {
          continue;
        }
        if (entry.msg === 'simulator listening' && typeof entry.url === 'string') {
          clearTimeout(timer);
          resolve({ child, url: entry.url, stderr: () => err });
          return;
        }
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(
        new Error(`simulate exited (${code ?? signal}) before listening\nstdout: ${out}\nstderr: ${err}`),
      );
    });
  });
}

async function get(url: string, headers: Record<string, string>) {
  const res = await request(url, { headers });
  const text = await res.body.text();
  return { status: res.statusCode, text, json: text ? (JSON.parse(text) as unknown) : undefined };
}

const jsonHeaders = (auth: Credentials) => ({
  'content-type': 'application/json',
  accept: 'application/json',
  authorization: basicAuth(auth),
});

describe('fleet-upgrade simulate', () => {
  it('--port 0 --collectors 50 --seed 3 --time-scale 60: logs the listening URL and serves the API there', async () => {
    const { child, url } = await startCli([
      '--port',
      '0',
      '--collectors',
      '50',
      '--seed',
      '3',
      '--time-scale',
      '60',
    ]);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(url).not.toMatch(/:0$/);
    const targets = await get(`${url}/api/v1/collectors/upgrades/targets`, jsonHeaders(DEMO));
    expect(targets.status, targets.text).toBe(200);
    const body = targets.json as { targets: { version: string; latest: boolean }[] };
    expect(body.targets.length).toBeGreaterThan(0);
    expect(body.targets.at(-1)?.latest).toBe(true);
    const list = await get(`${url}/api/v1/collectors/upgrades/collectors?limit=1000`, jsonHeaders(DEMO));
    expect(list.status, list.text).toBe(200);
    const sim = await get(`${url}/_sim/collectors`, { accept: 'application/json' });
    expect((sim.json as { collectors: unknown[] }).collectors).toHaveLength(50);
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once('exit', (code, signal) => resolve([code, signal])),
    );
    child.kill('SIGTERM');
    const [code, signal] = await exited;
    expect(code === 0 || signal === 'SIGTERM').toBe(true);
  });

  it('the same seed generates the same fleet', async () => {
    const a = await startCli(['--port', '0', '--collectors', '30', '--seed', '3']);
    const b = await startCli(['--port', '0', '--collectors', '30', '--seed', '3']);
    const names = async (url: string) =>
      (
        (await get(`${url}/_sim/collectors`, { accept: 'application/json' })).json as {
          collectors: { id: number; name: string; version: string }[];
        }
      ).collectors.map((c) => [c.id, c.name, c.version]);
    expect(await names(a.url)).toEqual(await names(b.url));
  });

  it('--time-scale 60: simulated time runs 60 times faster than the wall clock', async () => {
    const { url } = await startCli(['--port', '0', '--collectors', '5', '--seed', '1', '--time-scale', '60']);
    const now = async () =>
      ((await get(`${url}/_sim/stats`, { accept: 'application/json' })).json as { now: number }).now;
    const realStart = Date.now();
    const simStart = await now();
    await tick(200);
    const simEnd = await now();
    const real = Date.now() - realStart;
    expect(simEnd - simStart).toBeGreaterThan(real * 60 * 0.5);
    expect(simEnd - simStart).toBeLessThan(real * 60 * 2);
    // Timestamps are simulated epoch ms starting from the real now.
    expect(Math.abs(simStart - realStart)).toBeLessThan(60 * 60_000);
  });

  it('--lenient-content-type: a GET without Content-Type is accepted (and refused without the flag)', async () => {
    const lenient = await startCli(['--port', '0', '--collectors', '5', '--lenient-content-type']);
    const strict = await startCli(['--port', '0', '--collectors', '5']);
    const headers = { accept: 'application/json', authorization: basicAuth(DEMO) };
    expect((await get(`${lenient.url}/api/v1/collectors/upgrades/targets`, headers)).status).toBe(200);
    expect((await get(`${strict.url}/api/v1/collectors/upgrades/targets`, headers)).status).toBe(415);
  });

  it('--fleet FILE (JSON) serves that fleet and its users', async () => {
    const file = tempFile(
      'fleet.json',
      JSON.stringify({
        builds: ['19.400-5', '19.470-4'],
        users: [{ accessId: 'ops', accessKey: 'ops-secret' }],
        collectors: [
          { id: 101, name: 'web-1', version: '19.400-5' },
          { id: 900, name: 'hosted-1', type: 'Hosted' },
        ],
      }),
    );
    const { url } = await startCli(['--port', '0', '--fleet', file]);
    const ops = { accessId: 'ops', accessKey: 'ops-secret' };
    const list = await get(`${url}/api/v1/collectors/upgrades/collectors`, jsonHeaders(ops));
    expect(list.status, list.text).toBe(200);
    expect((list.json as { collectors: { id: number }[] }).collectors.map((c) => c.id)).toEqual([101]);
    expect((await get(`${url}/api/v1/collectors/upgrades/targets`, jsonHeaders(DEMO))).status).toBe(401);
  });

  it('--fleet FILE (YAML) with an error: exit 78, stderr names the file, the line and the field', () => {
    const yaml = [
      'builds: ["19.400-5", "19.470-4"]',
      'collectors:',
      '  - { id: 1, name: good, version: "19.400-5" }',
      '  - id: 2',
      '    name: bad',
      '    version: "abc"',
      '',
    ].join('\n');
    const file = tempFile('fleet.yaml', yaml);
    const r = spawnSync(process.execPath, [BIN, 'simulate', '--port', '0', '--fleet', file], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.status, `stdout: ${r.stdout}\nstderr: ${r.stderr}`).toBe(78);
    expect(r.stderr).toContain(`${file}:6`);
    expect(r.stderr).toContain('collectors[1].version');
  });

  it('--fleet FILE with orgs: one port serves each organization to its own credentials', async () => {
    const file = tempFile(
      'orgs.yaml',
      [
        'orgs:',
        '  - name: acme',
        '    builds: ["19.400-5", "19.470-4"]',
        '    users: [{ accessId: acme-ops, accessKey: acme-secret }]',
        '    collectors: [{ id: 101, version: "19.400-5" }]',
        '  - name: globex',
        '    builds: ["19.400-5", "19.480-1"]',
        '    users: [{ accessId: globex-ops, accessKey: globex-secret }]',
        '    collectors: [{ id: 101, version: "19.400-5" }, { id: 102, version: "19.400-5" }]',
        '',
      ].join('\n'),
    );
    const { url } = await startCli(['--port', '0', '--fleet', file]);
    const acme = { accessId: 'acme-ops', accessKey: 'acme-secret' };
    const globex = { accessId: 'globex-ops', accessKey: 'globex-secret' };
    const ids = async (auth: Credentials) =>
      (
        (await get(`${url}/api/v1/collectors/upgrades/collectors`, jsonHeaders(auth))).json as {
          collectors: { id: number }[];
        }
      ).collectors.map((c) => c.id);
    expect(await ids(acme)).toEqual([101]);
    expect(await ids(globex)).toEqual([101, 102]);
    const stats = (await get(`${url}/_sim/stats`, { accept: 'application/json' })).json as { orgs: object };
    expect(Object.keys(stats.orgs)).toEqual(['acme', 'globex']);
  });

  it("--collectors above 10000: exit 78 naming the vendor's limit", () => {
    const r = spawnSync(process.execPath, [BIN, 'simulate', '--port', '0', '--collectors', '10001'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.status, `stdout: ${r.stdout}\nstderr: ${r.stderr}`).toBe(78);
    expect(r.stderr).toMatch(
      /--collectors: an organization holds at most 10,000 Collectors \(the vendor's limit\)/,
    );
  });

  it('--fleet FILE with more than 10000 Collectors in an organization: exit 78 at the file, line and field', () => {
    const yaml = [
      'orgs:',
      '  - name: big',
      '    builds: ["19.400-5"]',
      '    generate:',
      '      count: 10001',
      '',
    ].join('\n');
    const file = tempFile('big.yaml', yaml);
    const r = spawnSync(process.execPath, [BIN, 'simulate', '--port', '0', '--fleet', file], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.status, `stdout: ${r.stdout}\nstderr: ${r.stderr}`).toBe(78);
    expect(r.stderr).toContain(`${file}:5`);
    expect(r.stderr).toContain('orgs[0].generate.count');
    expect(r.stderr).toMatch(/at most 10,000 Collectors \(the vendor's limit\)/);
  });

  it('--fleet FILE that does not exist: exit 78 naming the file', () => {
    const missing = join(tmpdir(), 'fleet-upgrade-no-such-fleet.yaml');
    const r = spawnSync(process.execPath, [BIN, 'simulate', '--port', '0', '--fleet', missing], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.status, r.stderr).toBe(78);
    expect(r.stderr).toContain(missing);
  });

  it('--help lists the options (exit 0)', () => {
    const r = spawnSync(process.execPath, [BIN, 'simulate', '--help'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.status, r.stderr).toBe(0);
    for (const option of [
      '--port',
      '--host',
      '--fleet',
      '--collectors',
      '--seed',
      '--time-scale',
      '--lenient-content-type',
    ]) {
      expect(r.stdout).toContain(option);
    }
  });

  it('fleet-upgrade --help names the simulate command', () => {
    const r = spawnSync(process.execPath, [BIN, '--help'], { cwd: ROOT, encoding: 'utf8', timeout: 20_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/\bsimulate\b/);
  });

  it('an unknown option is a usage error (exit 64)', () => {
    const r = spawnSync(process.execPath, [BIN, 'simulate', '--no-such-option'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.status).toBe(64);
  });
});

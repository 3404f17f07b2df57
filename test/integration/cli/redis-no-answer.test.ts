/**
 * A Redis that accepts connections and never answers (a stopped server, a port that is not Redis)
 * must not hang a command: `run`, `worker`, `status`, `report`, `history` and `pause`, run as real
 * processes from the build in dist/, each give up within their time limit, say in one sentence
 * what they waited for and where (the URL without its credentials), and exit 1. So does a
 * command whose Redis answered its first look and then went silent, and one whose private Redis
 * (the server of a `run` on this machine) never answers.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { type FakeRedis, startFakeRedis } from './fake-redis.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const BIN = join(ROOT, 'bin', 'fleet-upgrade.js');
/** Longest a child may take before the test calls it hung (the commands' own limit is 10 s). */
const HUNG_MS = 25_000;

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist', 'cli', 'main.js')))
    throw new Error('dist/cli/main.js is missing: run "npm run build" first');
});

interface Ended {
  code: number | null;
  hung: boolean;
  ms: number;
  stdout: string;
  stderr: string;
}

/** Runs `fleet-upgrade ARGS` in an empty folder; kills it after HUNG_MS (then `hung` is true). */
function runCli(args: string[], env: Record<string, string>): Promise<Ended> {
  const cwd = mkdtempSync(join(tmpdir(), 'fleet-no-answer-'));
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    LOG_LEVEL: 'warn',
    FLEET_UPGRADE_DATA_DIR: join(cwd, '.data'),
  };
  delete childEnv.REDIS_URL; // the test run's own Redis must not be found
  const started = Date.now();
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: { ...childEnv, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  let hung = false;
  const timer = setTimeout(() => {
    hung = true;
    child.kill('SIGKILL');
  }, HUNG_MS);
  return new Promise((resolve) => {
    child.on('close', (code) => {
      clearTimeout(timer);
      rmSync(cwd, { recursive: true, force: true });
      resolve({ code, hung, ms: Date.now() - started, stdout, stderr });
    });
  });
}

async function withFake<T>(
  mode: 'silent' | 'answersFirst',
  work: (fake: FakeRedis) => Promise<T>,
): Promise<T> {
  const fake = await startFakeRedis(mode);
  try {
    return await work(fake);
  } finally {
    await fake.close();
  }
}

/** Exit 1 in time, and one sentence on stderr naming what was waited for and the URL without credentials. */
function expectToldInOneSentence(ended: Ended, port: number, waitedFor: RegExp): void {
  expect(ended.hung, `still running after ${HUNG_MS} ms; stderr: ${ended.stderr}`).toBe(false);
  expect(ended.code, ended.stderr).toBe(1);
  const lines = ended.stderr.trim().split('\n');
  expect(lines, ended.stderr).toHaveLength(1);
  const line = lines[0] as string;
  expect(line).toMatch(/^fleet-upgrade: /);
  expect(line).toContain(`redis://127.0.0.1:${port}`);
  expect(line).not.toMatch(/secret|user/);
  expect(line).toMatch(waitedFor);
}

const API_ENV = {
  SUMOLOGIC_ACCESSID: 'demo',
  SUMOLOGIC_ACCESSKEY: 'demo-secret',
  SUMOLOGIC_BASE_URL: 'http://127.0.0.1:9/',
};

describe.concurrent('a Redis that accepts connections and never answers', () => {
  it('run gives up within its limit, says so in one sentence, exits 1', async () => {
    await withFake('silent', async (fake) => {
      const ended = await runCli(
        ['run', '--listen', '127.0.0.1:0', '--policies', join(ROOT, 'config', 'policies')],
        { ...API_ENV, REDIS_URL: fake.url },
      );
      expectToldInOneSentence(ended, fake.port, /did not answer PING within 10 s/);
      expect(ended.ms).toBeLessThan(20_000);
    });
  });

  it('worker gives up within its limit, says so in one sentence, exits 1', async () => {
    await withFake('silent', async (fake) => {
      const ended = await runCli(['worker', '--listen', '127.0.0.1:0'], { ...API_ENV, REDIS_URL: fake.url });
      expectToldInOneSentence(ended, fake.port, /did not answer PING within 10 s/);
    });
  });

  it.each([['status'], ['report'], ['history', 'linux-fleet@19.470-4'], ['pause', 'linux-fleet@19.470-4']])(
    '%s gives up within its limit, says so in one sentence, exits 1',
    async (...args: string[]) => {
      await withFake('silent', async (fake) => {
        const ended = await runCli(args, { REDIS_URL: fake.url });
        expectToldInOneSentence(ended, fake.port, /did not answer PING within \d+ s/);
        expect(ended.ms).toBeLessThan(15_000);
      });
    },
  );

  it('status whose Redis answered its first look and then went silent gives up too', async () => {
    await withFake('answersFirst', async (fake) => {
      const ended = await runCli(['status'], { REDIS_URL: fake.url });
      expect(fake.connections()).toBeGreaterThanOrEqual(2);
      expectToldInOneSentence(ended, fake.port, /did not answer .* within 10 s/);
    });
  });

  it('status whose private Redis (the server of a running `run`) never answers says which server', async () => {
    await withFake('silent', async (fake) => {
      const dataDir = mkdtempSync(join(tmpdir(), 'fleet-no-answer-data-'));
      try {
        mkdirSync(join(dataDir, 'redis'), { recursive: true });
        const url = `redis://127.0.0.1:${fake.port}`;
        writeFileSync(join(dataDir, 'redis-url'), `${url}\n`);
        // This test process stands for the `run` that holds the folder: it is alive.
        writeFileSync(
          join(dataDir, 'redis.lock'),
          JSON.stringify({ pid: process.pid, role: 'run', name: 'run', host: hostname() }),
        );
        const ended = await runCli(['status'], { FLEET_UPGRADE_DATA_DIR: dataDir });
        expectToldInOneSentence(ended, fake.port, /did not answer PING within \d+ s/);
        expect(ended.stderr).toContain(`pid ${process.pid}`);
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });
});

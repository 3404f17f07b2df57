/**
 * Names and reasons from outside (the vendor's Collector names, host names and OS names; reasons
 * and cohorts stored with a rollout) never reach a terminal with their control characters: `plan`
 * and `status`, run as real processes from the build in dist/, print no terminal escape (CSI, OSC 8
 * hyperlinks), bell, backspace, C1 control or bidi override, in their tables and in their JSON
 * (where such characters are escaped, so that the JSON still holds the text as it was).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { closeRedis, createRedis } from '../../../src/lib/redis/create-redis.js';
import { createKeys } from '../../../src/rollout/index.js';
import { type RunningSimulator, startSimulator } from '../../../src/simulator/start-simulator.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const BIN = join(ROOT, 'bin', 'fleet-upgrade.js');

/** What must never reach a terminal: C0 controls but line feed, DEL, C1 controls, bidi controls. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/** Names a hostile vendor (or a proxy in its place) could give, each with one kind of control. */
const EVIL = {
  csi: 'red-\u001b[31mALERT\u001b[0m-\u001b[2J\u001b[H',
  osc8: '\u001b]8;;https://evil.example/\u0007click-me\u001b]8;;\u0007',
  bellBackspace: 'bell\u0007back\b\b\b\bspace',
  c1: 'c1-\u009b31m-\u0085-\u009d0;title\u009c',
  bidi: 'bidi-\u202egnp.exe\u202c-\u2066isolate\u2069-\u202a\u202b\u202d',
};

const cleanups: (() => Promise<unknown> | unknown)[] = [];

afterEach(async () => {
  for (const step of cleanups.splice(0).reverse()) await step();
});

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist', 'cli', 'main.js')))
    throw new Error('dist/cli/main.js is missing: run "npm run build" first');
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-untrusted-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs `fleet-upgrade ARGS` to its end (at most 20 s). */
function runCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: tempDir(),
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
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
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise((resolve) => {
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function expectNoUnsafe(text: string): void {
  const found = UNSAFE.exec(text);
  expect(
    found,
    found
      ? `U+${found[0].codePointAt(0)?.toString(16).padStart(4, '0')} at ${found.index}: ${JSON.stringify(text.slice(Math.max(0, found.index - 40), found.index + 40))}`
      : '',
  ).toBeNull();
}

async function evilSimulator(): Promise<RunningSimulator> {
  const names = Object.values(EVIL);
  const sim = await startSimulator({
    fleet: {
      builds: ['19.400-5', '19.470-4'],
      users: [{ accessId: 'ops', accessKey: 'ops-secret' }],
      collectors: names.map((name, i) => ({
        id: 101 + i,
        name,
        hostName: `${name}.host`,
        osName: `Linux ${name}`,
        version: '19.400-5',
      })),
    },
  });
  cleanups.push(() => sim.close());
  return sim;
}

describe('plan shows vendor names without their control characters', () => {
  it('in the table and in --json (escaped there, the names kept)', async () => {
    const sim = await evilSimulator();
    const dir = tempDir();
    const policy = join(dir, 'evil.yaml');
    writeFileSync(policy, 'name: evil\ntarget: latest\n');
    const env = {
      SUMOLOGIC_ACCESSID: 'ops',
      SUMOLOGIC_ACCESSKEY: 'ops-secret',
      SUMOLOGIC_BASE_URL: sim.baseUrl,
      REDIS_URL: '',
    };
    const table = await runCli(['plan', '--policy', policy], env);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain('5 of 5 offered Collectors would move');
    expect(table.stdout).toContain('ALERT');
    expectNoUnsafe(table.stdout);
    expectNoUnsafe(table.stderr);

    const json = await runCli(['plan', '--policy', policy, '--json'], env);
    expect(json.code, json.stderr).toBe(0);
    expectNoUnsafe(json.stdout);
    const parsed = JSON.parse(json.stdout) as {
      collectors: { name: string; hostName: string; osName: string }[];
    };
    expect(parsed.collectors.map((c) => c.name).sort()).toEqual(Object.values(EVIL).sort());
  });
});

describe('status shows reasons and cohorts from outside without their control characters', () => {
  it('in the table, --wide and --json (escaped there, the text kept)', async () => {
    const prefix = `test-untrusted-${randomUUID()}:`;
    const keys = createKeys(prefix);
    const redis = createRedis(inject('redisUrl'), { name: 'test' });
    cleanups.push(() => closeRedis(redis));
    cleanups.push(async () => {
      const found = await redis.keys(`${prefix}*`);
      if (found.length) await redis.del(...found);
    });
    const now = Date.now();
    const base = {
      target: 'latest',
      build: '19.470-4',
      startedAt: now,
      updatedAt: now,
      maxInFlight: 5,
      settings: '{}',
    };
    const rollouts: Record<string, Record<string, string | number>> = {
      'aborted@19.470-4': {
        policy: 'aborted',
        phase: 'aborted',
        abortReason: `by ops: ${EVIL.bidi} ${EVIL.osc8}`,
      },
      'paused@19.470-4': { policy: 'paused', phase: 'paused', pausedBy: EVIL.c1, pausedAt: now },
      'halted@19.470-4': {
        policy: 'halted',
        phase: 'halted',
        haltReason: `${EVIL.csi} ${EVIL.bellBackspace}`,
      },
      'quarantine@19.470-4': {
        policy: 'quarantine',
        phase: 'running',
        holding: EVIL.bidi,
        quarantined: JSON.stringify([{ cohort: `osName=${EVIL.c1}${EVIL.bidi}`, held: 2, at: now }]),
      },
    };
    for (const [id, fields] of Object.entries(rollouts)) {
      await redis.hset(keys.rollout(id), { id, ...base, ...fields });
      await redis.zadd(keys.rollouts, now, id);
    }
    const env = { REDIS_URL: inject('redisUrl'), FLEET_UPGRADE_KEY_PREFIX: prefix };
    for (const args of [['status'], ['status', '--wide']]) {
      const out = await runCli(args, env);
      expect(out.code, out.stderr).toBe(0);
      expect(out.stdout).toContain('aborted@19.470-4');
      expect(out.stdout).toContain('gnp.exe');
      expectNoUnsafe(out.stdout);
    }
    const json = await runCli(['status', '--json'], env);
    expect(json.code, json.stderr).toBe(0);
    expectNoUnsafe(json.stdout);
    const parsed = JSON.parse(json.stdout) as { rollouts: { id: string; abortReason?: string }[] };
    expect(parsed.rollouts.find((r) => r.id === 'aborted@19.470-4')?.abortReason).toBe(
      `by ops: ${EVIL.bidi} ${EVIL.osc8}`,
    );
  });
});

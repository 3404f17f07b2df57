/**
 * A rollout across several organizations under test: one simulator process per organization
 * (each its own base URL, users, fleet and builds, as several deployments of the service are),
 * a settings file whose `orgs` name them (each key in a file of its own), a policy file, the run's
 * Redis under a prefix of its own, and the built CLI as child processes. `close()` kills them and
 * removes the prefix's keys.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { stringify } from 'yaml';
import { createState, type FleetState } from '../../src/cli/boot/create-state.js';
import { closeRedis, createRedis, type Redis } from '../../src/lib/redis/create-redis.js';
import { type CollectorRecord, type FleetStatus, readFleetStatus } from '../../src/rollout/index.js';
import type { FleetFileInput } from '../../src/simulator/schema.js';
import { deleteKeys, testRedisUrl } from './redis.js';
import { CLI, type SimCollectorView, type SimStats } from './rollout-harness.js';
import { startSeparateSimulator } from './separate-simulator.js';

export interface OrgSpec {
  name: string;
  fleet: FleetFileInput;
  /** The key the settings give it (default: its fleet's first user's: a wrong one is refused). */
  accessKey?: string;
}

export interface OrgSim {
  name: string;
  url: string;
  baseUrl: string;
  get<T>(path: string): Promise<T>;
  send(method: 'POST' | 'DELETE', path: string, body?: unknown): Promise<number>;
  collectors(): Promise<SimCollectorView[]>;
  stats(): Promise<SimStats>;
}

export interface OrgsHarness {
  orgs: Map<string, OrgSim>;
  redis: Redis;
  state: FleetState;
  env: NodeJS.ProcessEnv;
  settingsFile: string;
  policyFile: string;
  spawnCli(args: string[]): ChildProcess & { output(): string };
  /** `run` of the settings and the policy file, its HTTP endpoints at `listen` (default any port). */
  spawnRun(listen?: string): ChildProcess & { output(): string };
  status(): Promise<FleetStatus>;
  waitFor(done: (s: FleetStatus) => boolean, timeoutMs: number): Promise<FleetStatus>;
  records(rolloutId: string): Promise<CollectorRecord[]>;
  close(): Promise<void>;
}

export async function startOrgsHarness(options: {
  orgs: readonly OrgSpec[];
  policy: Record<string, unknown>;
  timeScale: number;
  tickMs?: number;
  settings?: Record<string, unknown>;
}): Promise<OrgsHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-upgrade-orgs-'));
  const prefix = `test:${randomBytes(6).toString('hex')}:`;
  const redisUrl = testRedisUrl();
  const redis = createRedis(redisUrl, { name: 'orgs-harness' });
  const state = createState(redis, prefix);
  const orgs = new Map<string, OrgSim>();
  const entries: Record<string, unknown>[] = [];
  for (const spec of options.orgs) {
    const sim = await startSeparateSimulator(spec.fleet, options.timeScale);
    const user = (spec.fleet.users ?? [{ accessId: 'demo', accessKey: 'demo-secret' }])[0] as {
      accessId: string;
      accessKey: string;
    };
    const keyFile = join(dir, `${spec.name}.key`);
    writeFileSync(keyFile, `${spec.accessKey ?? user.accessKey}\n`, { mode: 0o600 });
    entries.push({ name: spec.name, baseUrl: sim.baseUrl, accessId: user.accessId, accessKeyFile: keyFile });
    const get = async <T>(path: string): Promise<T> =>
      (await (await request(`${sim.url}${path}`)).body.json()) as T;
    orgs.set(spec.name, {
      name: spec.name,
      url: sim.url,
      baseUrl: sim.baseUrl,
      get,
      async send(method, path, body) {
        const res = await request(`${sim.url}${path}`, {
          method,
          headers: { 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        await res.body.dump();
        return res.statusCode;
      },
      collectors: async () => (await get<{ collectors: SimCollectorView[] }>('/_sim/collectors')).collectors,
      stats: () => get<SimStats>('/_sim/stats'),
    });
  }
  const settingsFile = join(dir, 'settings.yaml');
  writeFileSync(settingsFile, stringify({ orgs: entries, ...options.settings }));
  const policyFile = join(dir, `${String(options.policy.name)}.yaml`);
  writeFileSync(policyFile, stringify(options.policy));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    REDIS_URL: redisUrl,
    FLEET_UPGRADE_KEY_PREFIX: prefix,
    FLEET_UPGRADE_TICK: `${options.tickMs ?? 100}ms`,
    FLEET_UPGRADE_STALLED_INTERVAL: '1s',
    FLEET_UPGRADE_TIME_SCALE: String(options.timeScale),
    FLEET_UPGRADE_DATA_DIR: join(dir, 'data'),
    LOG_LEVEL: 'warn',
  };
  const children: ChildProcess[] = [];
  const harness: OrgsHarness = {
    orgs,
    redis,
    state,
    env,
    settingsFile,
    policyFile,
    spawnRun(listen = '127.0.0.1:0') {
      return harness.spawnCli(['run', '--config', settingsFile, '--policy', policyFile, '--listen', listen]);
    },
    spawnCli(args) {
      const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
      });
      child.stderr?.on('data', (d: Buffer) => {
        out += d.toString();
      });
      children.push(child);
      return Object.assign(child, { output: () => out });
    },
    status: () => readFleetStatus(state),
    async waitFor(done, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      let last: FleetStatus | undefined;
      while (Date.now() < deadline) {
        last = await readFleetStatus(state);
        if (done(last)) return last;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(
        `not reached within ${timeoutMs} ms; last status: ${JSON.stringify(
          last?.rollouts.map((r) => ({ id: r.id, phase: r.phase, byOrg: r.byOrg })),
        )}; org problems: ${JSON.stringify(last?.orgProblems)}`,
      );
    },
    async records(rolloutId) {
      const out: CollectorRecord[] = [];
      for await (const r of state.store.all(rolloutId)) out.push(r);
      return out;
    },
    async close() {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      await deleteKeys(redis, prefix);
      await closeRedis(redis);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return harness;
}

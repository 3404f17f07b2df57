/**
 * Test helpers for driving the simulated Collector Upgrade Service over real HTTP: a small test
 * fleet, a simulator on a manual clock, an `api()` that sends exactly the headers a test asks
 * for, and zod schemas of every body the interface text fixes (strict, so an extra or missing
 * field fails the test). Every simulator and HTTP agent started here is closed by
 * `stopTestSimulators()`, which the test files call in `afterEach`.
 */
import { Agent, request } from 'undici';
import { expect } from 'vitest';
import { z } from 'zod';
import { createManualClock, type ManualClock } from '../../src/lib/clock.js';
import type { FleetFileInput } from '../../src/simulator/schema.js';
import {
  type RunningSimulator,
  type SimulatorOptions,
  startSimulator,
} from '../../src/simulator/start-simulator.js';

/** Builds of the test fleet, oldest to newest; the last is the latest. */
export const BUILDS = ['19.100-1', '19.200-3', '19.300-7', '19.400-5', '19.450-12', '19.470-4'] as const;
export const LATEST = '19.470-4';

export interface Credentials {
  accessId: string;
  accessKey: string;
}
export const OPS: Credentials = { accessId: 'ops', accessKey: 'ops-secret' };
export const INTERN: Credentials = { accessId: 'intern', accessKey: 'intern-secret' };

/** Seconds of the test fleet's behaviour (fixed so that tests can compute bounds). */
export const ISSUE_SECONDS = 2;
export const HEARTBEAT_SECONDS = 15;
export const UPGRADE_SECONDS = 120;
export const TIMEOUT_SECONDS = 1800;

/** Explicit Collectors of the test fleet, by role. */
export const C = {
  /** Installable, alive, on 19.400-5, always succeeds in UPGRADE_SECONDS. */
  web1: 101,
  /** Installable, alive, on 19.450-12, always succeeds. */
  web2: 102,
  /** Already on the latest build. */
  upToDate: 103,
  /** Not alive. */
  offline: 104,
  /** Every task fails. */
  failing: 105,
  /** Every task is stuck. */
  stuck: 106,
  /** On the oldest build, five builds below the latest. */
  old: 107,
  /** A Hosted Collector. */
  hosted: 900,
} as const;

export type FleetPatch = Omit<Partial<FleetFileInput>, 'behaviour' | 'faults'> & {
  behaviour?: Partial<NonNullable<FleetFileInput['behaviour']>>;
  faults?: Partial<NonNullable<FleetFileInput['faults']>>;
};

/**
 * The test fleet: a few explicit Collectors, two users, deterministic behaviour (no random
 * failures) and no rate limit (tests that check limits turn them on).
 */
export function testFleet(patch: FleetPatch = {}): FleetFileInput {
  const { behaviour, faults, ...rest } = patch;
  return {
    builds: [...BUILDS],
    users: [
      { accessId: OPS.accessId, accessKey: OPS.accessKey },
      { accessId: INTERN.accessId, accessKey: INTERN.accessKey, collectors: [C.web1] },
    ],
    collectors: [
      {
        id: C.web1,
        name: 'web-1',
        hostName: 'web-1.prod.internal',
        version: '19.400-5',
        timeZone: 'Europe/Berlin',
        osName: 'Linux',
        osVersion: '6.8.0-45-generic',
        osArch: 'amd64',
        outcome: 'succeed',
        upgradeSeconds: UPGRADE_SECONDS,
      },
      {
        id: C.web2,
        name: 'web-2',
        version: '19.450-12',
        outcome: 'succeed',
        upgradeSeconds: UPGRADE_SECONDS,
      },
      { id: C.upToDate, name: 'db-1', version: LATEST, outcome: 'succeed', upgradeSeconds: UPGRADE_SECONDS },
      {
        id: C.offline,
        name: 'offline-1',
        version: '19.400-5',
        alive: false,
        upgradeSeconds: UPGRADE_SECONDS,
      },
      {
        id: C.failing,
        name: 'fail-1',
        version: '19.400-5',
        outcome: 'fail',
        upgradeSeconds: UPGRADE_SECONDS,
      },
      {
        id: C.stuck,
        name: 'stuck-1',
        version: '19.400-5',
        outcome: 'stuck',
        upgradeSeconds: UPGRADE_SECONDS,
      },
      { id: C.old, name: 'old-1', version: '19.100-1', outcome: 'succeed', upgradeSeconds: UPGRADE_SECONDS },
      { id: C.hosted, name: 'hosted-1', type: 'Hosted' },
    ],
    listOffline: true,
    ...rest,
    behaviour: {
      upgradeSeconds: { median: 180, p95: 600 },
      failureRatio: 0,
      stuckRatio: 0,
      incrementalAbove: 2,
      issueSeconds: ISSUE_SECONDS,
      heartbeatSeconds: HEARTBEAT_SECONDS,
      taskTimeoutSeconds: TIMEOUT_SECONDS,
      ...behaviour,
    },
    faults: {
      rateLimit: { perSecond: 0, concurrent: 0 },
      errorRatio: 0,
      latencyMs: 0,
      dropRatio: 0,
      flapRatio: 0,
      ...faults,
    },
  };
}

export interface ApiOptions {
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as is (for malformed bodies). */
  rawBody?: string;
  /** Basic credentials (default OPS), a raw Authorization value, or null for none. */
  auth?: Credentials | string | null;
  /** Header overrides; null removes a default header (content-type, accept). */
  headers?: Record<string, string | null>;
}

export interface ApiResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

export function basicAuth(c: Credentials): string {
  return `Basic ${Buffer.from(`${c.accessId}:${c.accessKey}`).toString('base64')}`;
}

export interface TestSimulator {
  sim: RunningSimulator;
  /** The manual clock the simulator runs on, unless the test passed its own `clock` or a `timeScale`. */
  clock: ManualClock;
  /** A request to `${baseUrl}/${path}` (path without leading slash, may carry a query). */
  api(method: string, path: string, options?: ApiOptions): Promise<ApiResponse>;
  /** A request to `${url}${path}` with only the headers given (path with leading slash). */
  raw(method: string, path: string, options?: ApiOptions): Promise<ApiResponse>;
  /** GET /_sim/stats, parsed. */
  stats(): Promise<SimStats>;
  /** GET /_sim/collectors, parsed. */
  simCollectors(): Promise<SimCollectorRecord[]>;
  simCollector(id: number): Promise<SimCollectorRecord>;
  /** Creates a task and expects 202; returns the string id. */
  createTask(collectorId: number, toVersion?: string, auth?: Credentials): Promise<string>;
  /** Reads a task's status and expects 200; returns the `upgrade` object. */
  task(id: string | number): Promise<UpgradeTask>;
  /** Sets the manual clock to `requestTime + ms` (tests position time relative to a request). */
  at(requestTime: number, ms: number): void;
}

const running = new Set<{ sim: RunningSimulator; agent: Agent }>();

export async function startTestSimulator(
  fleet: FleetFileInput = testFleet(),
  options: Partial<Omit<SimulatorOptions, 'fleet'>> = {},
): Promise<TestSimulator> {
  const manual = createManualClock(Date.UTC(2025, 0, 6, 9, 0, 0));
  const clock = options.clock === undefined && options.timeScale === undefined ? manual : undefined;
  const sim = await startSimulator({ fleet, ...(clock ? { clock } : {}), ...options });
  const agent = new Agent({ keepAliveTimeout: 1000, connections: 64 });
  running.add({ sim, agent });

  async function send(
    url: string,
    method: string,
    opts: ApiOptions,
    defaults: boolean,
  ): Promise<ApiResponse> {
    const headers: Record<string, string> = {};
    if (defaults) {
      headers['content-type'] = 'application/json';
      headers.accept = 'application/json';
      const auth = opts.auth === undefined ? OPS : opts.auth;
      if (auth !== null) headers.authorization = typeof auth === 'string' ? auth : basicAuth(auth);
    } else if (opts.auth) {
      headers.authorization = typeof opts.auth === 'string' ? opts.auth : basicAuth(opts.auth);
    }
    for (const [k, v] of Object.entries(opts.headers ?? {})) {
      if (v === null) delete headers[k.toLowerCase()];
      else headers[k.toLowerCase()] = v;
    }
    const body = opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
    const res = await request(url, {
      method: method as 'GET',
      headers,
      ...(body === undefined ? {} : { body }),
      dispatcher: agent,
    });
    const text = await res.body.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.statusCode, headers: res.headers, text, json };
  }

  const api: TestSimulator['api'] = (method, path, opts = {}) =>
    send(`${sim.baseUrl}/${path}`, method, opts, true);
  const raw: TestSimulator['raw'] = (method, path, opts = {}) =>
    send(`${sim.url}${path}`, method, opts, false);

  const simGet = async (path: string) => {
    const res = await send(`${sim.url}${path}`, 'GET', { headers: { accept: 'application/json' } }, false);
    expect(res.status, `GET ${path}: ${res.text}`).toBe(200);
    return res.json;
  };

  const t: TestSimulator = {
    sim,
    clock: manual,
    api,
    raw,
    stats: async () => parse(SimStats, await simGet('/_sim/stats')),
    simCollectors: async () => parse(SimCollectors, await simGet('/_sim/collectors')).collectors,
    async simCollector(id) {
      const found = (await t.simCollectors()).find((c) => c.id === id);
      if (!found) throw new Error(`collector ${id} is not in /_sim/collectors`);
      return found;
    },
    async createTask(collectorId, toVersion, auth) {
      const body = toVersion === undefined ? { collectorId } : { collectorId, toVersion };
      const res = await api('POST', 'collectors/upgrades', { body, ...(auth ? { auth } : {}) });
      expect(res.status, `create for ${collectorId}: ${res.text}`).toBe(202);
      return parse(CreateResult, res.json).id;
    },
    async task(id) {
      const res = await api('GET', `collectors/upgrades/${id}`);
      expect(res.status, `status of ${id}: ${res.text}`).toBe(200);
      return parse(StatusBody, res.json).upgrade;
    },
    at(requestTime, ms) {
      manual.set(requestTime + ms);
    },
  };
  return t;
}

/** Closes every simulator and agent started by this module (call in afterEach). */
export async function stopTestSimulators(): Promise<void> {
  const all = [...running];
  running.clear();
  await Promise.all(
    all.map(async ({ sim, agent }) => {
      await agent.destroy().catch(() => undefined);
      await sim.close();
    }),
  );
}

/** Parses with a schema, failing the test with the zod issues and the value when it does not fit. */
export function parse<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const r = schema.safeParse(value);
  if (!r.success) {
    throw new Error(
      `body does not have the expected shape:\n${z.prettifyError(r.error)}\nbody: ${JSON.stringify(value)}`,
    );
  }
  return r.data;
}

// ---- Shapes fixed by the interface text and api-facts.md ----

/** A request id: three dash-separated groups of five uppercase letters or digits. */
export const REQUEST_ID = /^[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}$/;
export const BUILD_VERSION = /^\d+\.\d+-\d+$/;

export const LegacyError = z.strictObject({
  status: z.number().int(),
  id: z.string().regex(REQUEST_ID),
  code: z.string().min(1),
  message: z.string(),
});
export type LegacyError = z.infer<typeof LegacyError>;

export const NewerError = z.strictObject({
  id: z.string().regex(REQUEST_ID),
  errors: z
    .array(z.strictObject({ code: z.string().min(1), message: z.string(), detail: z.string().optional() }))
    .min(1),
});

/** Expects a legacy error body with this HTTP status and (when given) this code. */
export function expectLegacyError(res: ApiResponse, status: number, code?: string): LegacyError {
  expect(res.status, res.text).toBe(status);
  const body = parse(LegacyError, res.json);
  expect(body.status).toBe(status);
  if (code !== undefined) expect(body.code).toBe(code);
  return body;
}

export function expectRateLimited(res: ApiResponse): void {
  expect(res.status, res.text).toBe(429);
  const body = parse(NewerError, res.json);
  expect(body.errors[0]?.code).toBe('rate.limit.exceeded');
  expect(body.errors[0]?.message.length).toBeGreaterThan(0);
}

export const CollectorRecord = z.strictObject({
  id: z.number().int().positive(),
  name: z.string(),
  hostName: z.string(),
  timeZone: z.string(),
  links: z.array(z.strictObject({ rel: z.string(), href: z.string() })),
  ephemeral: z.boolean(),
  sourceSyncMode: z.string(),
  collectorType: z.string(),
  collectorVersion: z.string().regex(BUILD_VERSION),
  osVersion: z.string(),
  osName: z.string(),
  osArch: z.string(),
  lastSeenAlive: z.number().int(),
  alive: z.boolean(),
});
export type CollectorRecord = z.infer<typeof CollectorRecord>;
export const CollectorList = z.strictObject({ collectors: z.array(CollectorRecord) });

export const Target = z.strictObject({ version: z.string().regex(BUILD_VERSION), latest: z.boolean() });
export const Targets = z.strictObject({ targets: z.array(Target) });

export const CreateResult = z.strictObject({
  id: z.string().min(1),
  link: z.strictObject({ rel: z.literal('self'), href: z.string() }),
});

export const UpgradeTask = z.strictObject({
  id: z.number().int(),
  collectorId: z.number().int(),
  toVersion: z.string().regex(BUILD_VERSION),
  requestTime: z.number().int(),
  status: z.union([z.literal(0), z.literal(1), z.literal(2), z.literal(3), z.literal(6)]),
  message: z.string(),
});
export type UpgradeTask = z.infer<typeof UpgradeTask>;
export const StatusBody = z.strictObject({ upgrade: UpgradeTask });

// ---- Introspection (loose: "at least" these fields) ----

const Counts = z.record(z.string(), z.number().int().min(0));

export const SimStats = z.looseObject({
  requests: z.looseObject({
    total: z.number().int().min(0),
    byEndpoint: z.looseObject({
      list: z.number().int().min(0),
      targets: z.number().int().min(0),
      create: z.number().int().min(0),
      status: z.number().int().min(0),
    }),
    byStatus: Counts,
  }),
  tasksCreated: z.number().int().min(0),
  tasksByOutcome: z.looseObject({
    succeeded: z.number().int().min(0),
    failed: z.number().int().min(0),
    timedOut: z.number().int().min(0),
  }),
  maxConcurrentTasks: z.number().int().min(0),
  rejected: Counts,
  rateLimited: z.number().int().min(0),
  now: z.number(),
});
export type SimStats = z.infer<typeof SimStats>;

export const SimTaskRecord = z.looseObject({
  id: z.union([z.number().int(), z.string()]),
  toVersion: z.string(),
  status: z.number().int(),
  message: z.string(),
  requestTime: z.number().int(),
});

export const SimCollectorRecord = z.looseObject({
  id: z.number().int(),
  name: z.string(),
  type: z.enum(['Installable', 'Hosted']),
  version: z.string().optional(),
  alive: z.boolean(),
  tasks: z.array(SimTaskRecord),
});
export type SimCollectorRecord = z.infer<typeof SimCollectorRecord>;
export const SimCollectors = z.looseObject({ collectors: z.array(SimCollectorRecord) });

/** Lists upgradable Collectors with `query` and expects 200; returns the records. */
export async function listCollectors(t: TestSimulator, query = '', auth?: Credentials) {
  const res = await t.api('GET', `collectors/upgrades/collectors${query ? `?${query}` : ''}`, {
    ...(auth ? { auth } : {}),
  });
  expect(res.status, res.text).toBe(200);
  return parse(CollectorList, res.json).collectors;
}

/** Lets pending I/O run (a few real milliseconds at most). */
export function tick(ms = 5): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---- Heartbeats, stops after an upgrade, failure causes (issue #10) ----

/** Default of `behaviour.offlineAfterSeconds`: 30 minutes without a heartbeat. */
export const OFFLINE_AFTER_SECONDS = 1800;

export const FailureCauseName = z.enum([
  'disk_space',
  'upgrades_disabled',
  'permission',
  'network',
  'unknown',
]);
export type FailureCauseName = z.infer<typeof FailureCauseName>;

/**
 * What a client can classify a failed task's message by, per cause (the simulator's messages,
 * README.md "Fleet file"). `unknown` messages match none of the others.
 */
export const FAILURE_MESSAGE_PATTERNS: Readonly<Record<Exclude<FailureCauseName, 'unknown'>, RegExp>> = {
  disk_space: /not enough disk space/i,
  upgrades_disabled: /remote upgrades are disabled.*disableUpgrade=true/i,
  permission: /permission denied/i,
  network: /could not download the installer/i,
};

/** The causes whose pattern matches `message` (one for a simulator message, none for `unknown`). */
export function causesMatching(message: string): FailureCauseName[] {
  return Object.entries(FAILURE_MESSAGE_PATTERNS)
    .filter(([, re]) => re.test(message))
    .map(([cause]) => cause as FailureCauseName);
}

export const SimStopRecord = z.strictObject({
  at: z.number().int(),
  afterTask: z.number().int().nullable(),
  restartedAt: z.number().int().nullable(),
});

/** A /_sim/collectors record with the fields verification and cohort tests read. */
export const SimCollectorDetail = z.looseObject({
  id: z.number().int(),
  type: z.enum(['Installable', 'Hosted']),
  version: z.string(),
  alive: z.boolean(),
  lastSeenAlive: z.number().int(),
  running: z.boolean(),
  stoppedAt: z.number().int().nullable(),
  stopsAfterUpgrade: z.boolean(),
  stopDueAt: z.number().int().nullable(),
  stops: z.array(SimStopRecord),
  failureCause: FailureCauseName.nullable(),
  osName: z.string(),
  osArch: z.string(),
  tasks: z.array(
    z.looseObject({
      id: z.number().int(),
      fromVersion: z.string(),
      toVersion: z.string(),
      status: z.number().int(),
      message: z.string(),
      requestTime: z.number().int(),
      finishTime: z.number().int().nullable(),
      result: z.enum(['succeeded', 'failed', 'timedOut']).nullable(),
      cause: FailureCauseName.nullable(),
    }),
  ),
});
export type SimCollectorDetail = z.infer<typeof SimCollectorDetail>;

/** GET /_sim/collectors (optionally only `ids`), with the detail fields parsed. */
export async function simCollectorDetails(t: TestSimulator, ids?: number[]): Promise<SimCollectorDetail[]> {
  const res = await t.raw('GET', `/_sim/collectors${ids ? `?ids=${ids.join(',')}` : ''}`, {
    headers: { accept: 'application/json' },
  });
  expect(res.status, res.text).toBe(200);
  return parse(z.looseObject({ collectors: z.array(SimCollectorDetail) }), res.json).collectors;
}

export async function simCollectorDetail(t: TestSimulator, id: number): Promise<SimCollectorDetail> {
  const [found] = await simCollectorDetails(t, [id]);
  if (!found) throw new Error(`collector ${id} is not in /_sim/collectors`);
  return found;
}

/** PATCH /_sim/collectors/:id with `body` (`alive`, `running`, `outcome`); expects 200. */
export async function patchSimCollector(
  t: TestSimulator,
  id: number,
  body: unknown,
): Promise<SimCollectorDetail> {
  const res = await t.raw('PATCH', `/_sim/collectors/${id}`, {
    body,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
  });
  expect(res.status, res.text).toBe(200);
  return parse(SimCollectorDetail, res.json);
}

/** Every page of the upgradable Collectors for `toVersion`, 1000 at a time. */
export async function listAllCollectors(t: TestSimulator, toVersion: string): Promise<CollectorRecord[]> {
  const all: CollectorRecord[] = [];
  for (let offset = 0; ; offset += 1000) {
    const page = await listCollectors(t, `toVersion=${toVersion}&limit=1000&offset=${offset}`);
    all.push(...page);
    if (page.length < 1000) return all;
  }
}

/**
 * Benchmark: Redis round trips of one upgrade step and one scheduler tick, with N Collectors in
 * one rollout, per connection: main (the Collector and rollout stores, used by the steps and the
 * scheduler), budget (the API request budget: in a daemon it shares the main connection, here it
 * has its own so that it is counted apart) and BullMQ (the queue the scheduler enqueues on;
 * the job repair reads BullMQ's keys on the main connection, one pipeline for every slot holder).
 *
 * Run: npm run bench -- redis-round-trips [--sizes 1000,100000] [--json FILE]
 * Needs Redis: REDIS_URL, a redis-server on PATH (started privately), a container runtime, or root
 * with apt-get (see scripts/provision-redis.mjs). Keys go under a prefix of their own, deleted at
 * the end.
 *
 * Counting: each connection's `sendCommand` is wrapped. A command sent on its own is one round
 * trip; the commands of a pipeline or MULTI share the pipeline's `stream` object and make one
 * round trip together. A Lua script is one command. `waits` counts the commands sent while none
 * of that connection was unanswered: the round trips again for code that awaits every reply,
 * fewer when replies overlap.
 *
 * The state is built by the real code against the simulator (in-process, manual clock): the
 * first scheduler tick scans (writes all N records `queued`), admits 50 (maxInFlight) and enqueues
 * their jobs; real create steps take the 50 to `pending`; 100 queued Collectors are moved to
 * `waiting_retry` through the transition table (admit, send, not_alive: as a create answered
 * collector.not.alive leaves them, next attempt in 10 minutes). Measured:
 * - steps (processUpgrade, as a job runs them; average over the 50): the create, a status read of
 *   a task still running (+1 s), a status read that finds it succeeded (+50 s);
 * - ticks with no scan due: 50 `pending` hold every slot, the rest `queued`; the same with 100
 *   `waiting_retry`; each without and with the job repair (the scheduler runs it once every
 *   `repairIntervalMs`, 15 s of real time by default); then the tick that admits 50 into the
 *   slots freed by the successes.
 * Each measured tick is checked to scan nothing and to call no API: the clock stays within one
 * minute of the first tick, so the build list is not read again.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { provisionRedis } from '../scripts/provision-redis.mjs';
import { createCollectorUpgradeClient, createRedisRequestBudget } from '../src/api/index.js';
import { createState, type FleetState } from '../src/cli/boot/create-state.js';
import { createManualClock, type ManualClock } from '../src/lib/clock.js';
import { createLogger } from '../src/lib/logger.js';
import { closeRedis, createRedis, type Redis } from '../src/lib/redis/create-redis.js';
import { ensureRedis } from '../src/lib/redis/redis-server.js';
import { Policy } from '../src/policy/schema.js';
import { createUpgradeQueue, type UpgradeJobData } from '../src/queue/upgrade-job.js';
import type { RolloutRecord } from '../src/rollout/index.js';
import {
  type CollectorEvent,
  type CollectorState,
  Scheduler,
  type SchedulerDeps,
  transition,
} from '../src/rollout/index.js';
import { startSimulator } from '../src/simulator/start-simulator.js';
import { type ProcessorDeps, processUpgrade } from '../src/worker/upgrade-processor.js';

const CONNECTIONS = ['main', 'budget', 'bull'] as const;
type Connection = (typeof CONNECTIONS)[number];

interface Count {
  roundTrips: number;
  commands: number;
  waits: number;
  /** Commands by name; scripts by the name they are defined under. */
  byName: Record<string, number>;
}
type Counts = Record<Connection, Count>;

interface Row {
  n: number;
  op: string;
  /** Operations averaged over. */
  per: number;
  counts: Counts;
}

const USER = { accessId: 'bench', accessKey: 'bench-secret' };
const RETRIES = 100;
const HOUR = 3_600_000;
const logger = createLogger({ level: 'error', name: 'bench' });

/** Replies not in yet, of every counted connection. */
const unanswered = new Set<Promise<void>>();

interface Sent {
  name: string;
  args: unknown[];
  promise: Promise<unknown>;
}
interface Wire {
  sendCommand(command: Sent, stream?: { isPipeline?: boolean }): unknown;
  scriptsSet?: Record<string, { sha: string; lua: string }>;
}

/** Counts every command `redis` sends into `count`. */
function instrument(redis: Redis, count: Count): Redis {
  const wire = redis as unknown as Wire;
  const send = wire.sendCommand.bind(redis);
  const pipelines = new WeakSet<object>();
  let outstanding = 0;
  wire.sendCommand = (command, stream) => {
    if (outstanding === 0) count.waits++;
    outstanding++;
    const result = send(command, stream);
    if (!stream?.isPipeline) count.roundTrips++;
    else if (!pipelines.has(stream)) {
      pipelines.add(stream);
      count.roundTrips++;
    }
    count.commands++;
    // Named after the send: ioredis turns a script's EVALSHA into EVAL the first time a socket uses it.
    const script = Object.entries(wire.scriptsSet ?? {}).find(
      ([, s]) => s.sha === command.args[0] || s.lua === command.args[0],
    );
    const name = /^eval/i.test(command.name) && script ? script[0] : command.name.toLowerCase();
    count.byName[name] = (count.byName[name] ?? 0) + 1;
    // Attached before the caller's await: the count is down before the caller sends again.
    const replied = () => {
      outstanding--;
    };
    unanswered.add(command.promise.then(replied, replied));
    return result;
  };
  return redis;
}

/** Waits for every reply, including those of commands nobody awaits (the budget's mark-sent). */
async function settle(): Promise<void> {
  while (unanswered.size) {
    const waiting = [...unanswered];
    unanswered.clear();
    await Promise.all(waiting);
  }
}

function perOperation(before: Counts, after: Counts, per: number): Counts {
  const avg = (x: number) => Math.round((x / per) * 100) / 100;
  const one = (a: Count, b: Count): Count => ({
    roundTrips: avg(b.roundTrips - a.roundTrips),
    commands: avg(b.commands - a.commands),
    waits: avg(b.waits - a.waits),
    byName: Object.fromEntries(
      Object.entries(b.byName)
        .map(([k, v]) => [k, avg(v - (a.byName[k] ?? 0))] as const)
        .filter(([, v]) => v > 0),
    ),
  });
  return {
    main: one(before.main, after.main),
    budget: one(before.budget, after.budget),
    bull: one(before.bull, after.bull),
  };
}

interface Bench {
  n: number;
  counts: Counts;
  clock: ManualClock;
  policy: Policy;
  state: FleetState;
  scheduler: Scheduler;
  /** The scheduler's own deps object: `repairIntervalMs` is set per measured tick. */
  schedulerDeps: SchedulerDeps;
  steps: ProcessorDeps;
  /** API requests the simulator has answered so far. */
  apiRequests(): Promise<number>;
  close(): Promise<void>;
}

async function openBench(n: number, url: string): Promise<Bench> {
  const counts: Counts = { main: emptyCount(), budget: emptyCount(), bull: emptyCount() };
  const connect = (c: Connection) =>
    instrument(createRedis(url, { name: `bench-${c}`, forBullmq: c === 'bull' }), counts[c]);
  const redis = connect('main');
  const budgetRedis = connect('budget');
  const bullRedis = connect('bull');
  const clock = createManualClock(Date.UTC(2025, 0, 6, 9, 0, 0));
  // Every Collector upgradable and alive; a task takes 30 s once its Collector picks it up (≤ 17 s).
  const sim = await startSimulator({
    clock,
    fleet: {
      builds: ['19.450-12', '19.470-4'],
      users: [USER],
      generate: { count: n, seed: 3, hostedRatio: 0, offlineRatio: 0, upToDateRatio: 0 },
      behaviour: {
        upgradeSeconds: { median: 30, p95: 30 },
        failureRatio: 0,
        stuckRatio: 0,
        issueSeconds: 2,
        heartbeatSeconds: 15,
      },
      faults: { rateLimit: { perSecond: 0, concurrent: 0 } },
      seed: 3,
    },
  });
  const prefix = `bench-round-trips-${randomBytes(4).toString('hex')}:`;
  const state = createState(redis, prefix, logger);
  // Limits that never make a request wait: one lease and one slot per request.
  const budget = createRedisRequestBudget({
    redis: budgetRedis,
    accessId: USER.accessId,
    keyPrefix: state.keys.apiBudget,
    perSecond: 100_000,
    concurrent: 100,
  });
  const api = createCollectorUpgradeClient({ config: { baseUrl: sim.baseUrl, ...USER }, budget, logger });
  const queue = createUpgradeQueue(bullRedis, state.keys.bullPrefix);
  await queue.waitUntilReady();
  const { store, rollouts } = state;
  const schedulerDeps: SchedulerDeps = {
    api,
    redis: state.redis,
    keys: state.keys,
    store,
    rollouts,
    queue,
    clock,
    logger,
    scanIntervalMs: 300_000,
  };
  return {
    n,
    counts,
    clock,
    policy: Policy.parse({ name: 'bench' }),
    state,
    scheduler: new Scheduler(schedulerDeps),
    schedulerDeps,
    steps: { api, store, rollouts, clock, logger, random: () => 0.5 },
    apiRequests: async () => {
      const stats = (await (await fetch(`${sim.url}/_sim/stats`)).json()) as { requests: { total: number } };
      return stats.requests.total;
    },
    close: async () => {
      await queue.close();
      await api.close();
      await sim.close();
      await deleteKeys(redis, prefix);
      for (const r of [redis, budgetRedis, bullRedis]) await closeRedis(r);
    },
  };
}

function emptyCount(): Count {
  return { roundTrips: 0, commands: 0, waits: 0, byName: {} };
}

async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (found.length) await redis.unlink(...found);
    cursor = next;
  } while (cursor !== '0');
}

async function measure(b: Bench, op: string, per: number, work: () => Promise<unknown>): Promise<Row> {
  await settle();
  const before = structuredClone(b.counts);
  await work();
  await settle();
  return { n: b.n, op, per, counts: perOperation(before, b.counts, per) };
}

/** One tick, the job repair on or off; throws when the tick scanned or called the API. */
async function measureTick(b: Bench, op: string, repair: boolean): Promise<Row> {
  b.schedulerDeps.repairIntervalMs = repair ? 0 : HOUR;
  const scans = (await currentRollout(b)).scans;
  const requests = await b.apiRequests();
  const row = await measure(b, op, 1, () => b.scheduler.tick([b.policy]));
  if ((await currentRollout(b)).scans !== scans || (await b.apiRequests()) !== requests)
    throw new Error(`${op}: the tick scanned or called the API`);
  return row;
}

/** The same tick twice: without the job repair, then with it. */
async function measureTicks(b: Bench, what: string): Promise<Row[]> {
  return [
    await measureTick(b, `tick, ${what}: no job repair`, false),
    await measureTick(b, `tick, ${what}: with job repair`, true),
  ];
}

/** One step per job, as the worker runs them, one after the other. */
function measureSteps(b: Bench, op: string, jobs: readonly UpgradeJobData[]): Promise<Row> {
  return measure(b, op, jobs.length, async () => {
    for (const job of jobs) {
      await processUpgrade(job, b.steps);
      await settle();
    }
  });
}

async function currentRollout(b: Bench): Promise<RolloutRecord> {
  const id = await b.state.rollouts.currentOf(b.policy.name);
  const rollout = id === undefined ? undefined : await b.state.rollouts.get(id);
  if (!rollout) throw new Error('no rollout started');
  return rollout;
}

/** The jobs of the Collectors holding the policy's slots. */
async function slotJobs(b: Bench, rolloutId: string): Promise<UpgradeJobData[]> {
  const holders = await b.state.store.slotHolders(b.policy.name);
  const records = await b.state.store.getMany(
    rolloutId,
    holders.map((h) => h.collectorId),
  );
  return [...records.values()].map((r) => ({ rolloutId, collectorId: r.id, admission: r.admissions }));
}

async function expectStates(
  b: Bench,
  rolloutId: string,
  jobs: readonly UpgradeJobData[],
  state: CollectorState,
) {
  const records = await b.state.store.getMany(
    rolloutId,
    jobs.map((j) => j.collectorId),
  );
  const wrong = [...records.values()].filter((r) => r.state !== state);
  if (records.size !== jobs.length || wrong.length)
    throw new Error(`expected ${jobs.length} ${state}, found ${JSON.stringify(wrong.map((r) => r.state))}`);
}

/** Queued Collectors to `waiting_retry`, as a create answered collector.not.alive leaves them. */
async function parkRetries(b: Bench, rollout: RolloutRecord, count: number): Promise<void> {
  const now = b.clock.now();
  let records = (await b.state.store.candidates(rollout.id, now, count)).slice(0, count);
  const events: CollectorEvent[] = [
    { type: 'admit' },
    { type: 'send' },
    { type: 'not_alive', message: 'The collector is not alive.' },
  ];
  for (const event of events) {
    const moves = records.map((r) => {
      const t = transition(r, event, { now, settings: rollout.settings });
      if (!t.ok) throw new Error(t.reason);
      return t.move;
    });
    // Admitted beyond maxInFlight for a moment: the slots are given back by not_alive.
    const outcomes = await b.state.store.apply(rollout.id, moves, { limit: rollout.maxInFlight + count });
    if (outcomes.some((o) => o !== 'written')) throw new Error(`${event.type}: ${outcomes.join(' ')}`);
    records = moves.map((m) => m.next);
  }
}

async function scenario(b: Bench): Promise<Row[]> {
  const maxInFlight = b.policy.maxInFlight;
  const rows = [
    await measure(
      b,
      `tick 1 (setup): starts the rollout, scan writes N records, admits ${maxInFlight}`,
      1,
      () => b.scheduler.tick([b.policy]),
    ),
  ];
  const rollout = await currentRollout(b);
  const jobs = await slotJobs(b, rollout.id);
  if (jobs.length !== maxInFlight) throw new Error(`tick 1 admitted ${jobs.length}`);

  rows.push(await measureSteps(b, 'create step (admitted → creating → pending)', jobs));
  await expectStates(b, rollout.id, jobs, 'pending');
  rows.push(...(await measureTicks(b, `${maxInFlight} pending hold all slots, rest queued`)));

  b.clock.advance(1_000);
  rows.push(await measureSteps(b, 'poll step, task still running (pending → pending)', jobs));
  await expectStates(b, rollout.id, jobs, 'pending');

  await parkRetries(b, rollout, RETRIES);
  rows.push(...(await measureTicks(b, `same + ${RETRIES} waiting_retry`)));

  b.clock.advance(49_000);
  rows.push(await measureSteps(b, 'poll step, task succeeded (slot freed, duration kept)', jobs));
  await expectStates(b, rollout.id, jobs, 'succeeded');

  rows.push(await measureTick(b, `tick that admits ${maxInFlight} into freed slots: no job repair`, false));
  const admitted = await slotJobs(b, rollout.id);
  if (
    admitted.length !== maxInFlight ||
    admitted.some((j) => jobs.some((k) => k.collectorId === j.collectorId))
  )
    throw new Error(`the tick did not admit ${maxInFlight} new Collectors`);
  return rows;
}

function printTable(rows: readonly Row[]): void {
  const cell = (c: Count) => (c.commands === 0 ? '-' : `${c.roundTrips} (${c.commands})`);
  const ops = [...new Set(rows.map((r) => r.op))];
  const width = Math.max(...ops.map((op) => op.length));
  const line = (op: string, n: string, main: string, budget: string, bull: string) =>
    console.log(`${op.padEnd(width)}  ${n.padStart(6)}  ${main.padEnd(10)}  ${budget.padEnd(10)}  ${bull}`);
  console.log('Redis round trips (commands) per operation; steps are averages over 50\n');
  line('operation', 'N', 'main', 'budget', 'BullMQ');
  for (const op of ops)
    for (const r of rows.filter((x) => x.op === op))
      line(op, String(r.n), cell(r.counts.main), cell(r.counts.budget), cell(r.counts.bull));
  console.log('\nRound trips, waits (sends while nothing was unanswered) and commands by name');
  for (const r of rows) {
    console.log(`N=${r.n}  ${r.op}`);
    for (const c of CONNECTIONS) {
      const { roundTrips, waits, byName } = r.counts[c];
      if (roundTrips)
        console.log(`  ${c.padEnd(6)}  ${roundTrips} in ${waits} waits  ${JSON.stringify(byName)}`);
    }
  }
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

const sizes = (arg('sizes') ?? '1000,100000').split(',').map(Number);
const redis = await provisionRedis({ ensureRedis, logger });
const rows: Row[] = [];
try {
  for (const n of sizes) {
    const bench = await openBench(n, redis.url);
    try {
      rows.push(...(await scenario(bench)));
    } finally {
      await bench.close();
    }
  }
} finally {
  await redis.stop();
}
printTable(rows);
const json = arg('json');
if (json) writeFileSync(json, JSON.stringify(rows, null, 2));

/**
 * The fleet as the simulated service holds it: Collectors, upgrade tasks and their life.
 *
 * Task life (interface section 3): 0 not started → 1 pending (issued, after issueSeconds) →
 * 6 progressing (the Collector picks it up at its next heartbeat) → one step per build moved
 * through (increments for large jumps) → 2 succeeded, or 3 failed. A task not succeeded
 * taskTimeoutSeconds after its request becomes 3 "timed out"; a stuck one waits for that, and so
 * does one whose Collector went offline during the upgrade (it stays pending). Time is settled
 * lazily: `advance(now)` replays every due event in order before anything is read or changed.
 *
 * Heartbeats: a running Collector beats every heartbeatSeconds, and `lastSeenAlive` is its last
 * beat. A Collector can stop beating while the service still lists it alive: some time after a
 * successful upgrade (`behaviour.stopAfterUpgrade`) or by /_sim. Then lastSeenAlive freezes, a
 * task created for it is never picked up, and offlineAfterSeconds after its last beat it turns
 * `alive: false`. It runs again only when restarted (restartAfterSeconds, or /_sim), and then
 * picks up a task issued while it was stopped.
 */
import { createRandom, type Random } from '../lib/random.js';
import { compareBuildVersions, isBuildVersion } from '../lib/version.js';
import { buildCollectors } from './build-collectors.js';
import { EventQueue } from './event-queue.js';
import { drawFailure, failureRatioFor } from './failure-causes.js';
import { HealthEvents } from './health-events.js';
import type { FailureCause, FleetFile, Outcome } from './schema.js';
import { restartDelayMs, stopDelayMs } from './stop-after-upgrade.js';
import { type SimCollector, type SimStop, type SimTask, TaskStatus } from './types.js';

type SimEvent =
  | { at: number; kind: 'issue' | 'pickup' | 'step' | 'timeout'; task: SimTask }
  | { at: number; kind: 'alive'; collector: SimCollector; alive: boolean; flap: boolean }
  | { at: number; kind: 'stop'; collector: SimCollector; afterTask: number }
  | { at: number; kind: 'lost' | 'restart'; collector: SimCollector; stop: SimStop };

export type CreateResult =
  | { ok: true; task: SimTask }
  | {
      ok: false;
      code:
        | 'collector.invalid'
        | 'collector.type.invalid'
        | 'collector.not.alive'
        | 'collector.in.upgrading'
        | 'collector.version.invalid';
      message: string;
    };

export interface ModelCounters {
  tasksCreated: number;
  tasksByOutcome: { succeeded: number; failed: number; timedOut: number };
  unfinished: number;
  maxConcurrentTasks: number;
  /** Failed tasks (not time-outs) by cause; `custom` = the Collector's own failureMessage. */
  failuresByCause: Record<FailureCause | 'custom', number>;
  /** Collectors that stopped heartbeating after a successful upgrade (each stop counts). */
  stoppedAfterUpgrade: number;
}

/** Counters of a model that has done nothing yet. */
export function newModelCounters(): ModelCounters {
  return {
    tasksCreated: 0,
    tasksByOutcome: { succeeded: 0, failed: 0, timedOut: 0 },
    unfinished: 0,
    maxConcurrentTasks: 0,
    failuresByCause: {
      disk_space: 0,
      upgrades_disabled: 0,
      permission: 0,
      network: 0,
      unknown: 0,
      custom: 0,
    },
    stoppedAfterUpgrade: 0,
  };
}

/** Unfinished tasks across the organizations of one process, and their most at any instant. */
export interface TaskGauge {
  unfinished: number;
  maxConcurrentTasks: number;
}

/** Where a Collector's step duration comes from: its own `upgradeSeconds`, `byOs`, or the default. */
export type DurationKind = 'collector' | 'os' | 'default';

/** Entries of a Collector's introspection history kept (alive changes, refused creates): memory stays bounded in long rehearsals. */
const HISTORY_LIMIT = 1000;

/** `list` with `entry` added, the oldest dropped beyond HISTORY_LIMIT. */
function keepLast<T>(list: T[] | undefined, entry: T): T[] {
  const out = list ?? [];
  out.push(entry);
  if (out.length > HISTORY_LIMIT) out.splice(0, out.length - HISTORY_LIMIT);
  return out;
}

export class FleetModel {
  private readonly buildList: string[];
  readonly counters: ModelCounters = newModelCounters();
  /** Collectors in ascending id order: the stable order of the listing. */
  readonly collectors: SimCollector[];
  private readonly byId = new Map<number, SimCollector>();
  private readonly tasks = new Map<number, SimTask>();
  private readonly buildIndex = new Map<string, number>();
  private readonly events = new EventQueue<SimEvent>();
  private readonly rng: Random;
  private nextTaskId = 10_000_001;
  /** The account's health events (health-events.ts). */
  readonly health: HealthEvents;

  constructor(
    private readonly fleet: FleetFile,
    start: number,
    /** Shared with the other organizations of the process (for /_sim/stats totals); default its own. */
    private readonly gauge: TaskGauge = { unfinished: 0, maxConcurrentTasks: 0 },
  ) {
    this.buildList = [...fleet.builds];
    for (const [i, b] of fleet.builds.entries()) this.buildIndex.set(b, i);
    this.rng = createRandom(fleet.seed);
    this.collectors = buildCollectors(fleet, start, this.rng);
    for (const c of this.collectors) this.byId.set(c.id, c);
    const sourceTypes = new Map(
      fleet.collectors.flatMap((c) => (c.sourceType ? [[c.id, c.sourceType]] : [])),
    );
    this.health = new HealthEvents(
      fleet.behaviour.healthEvents,
      fleet.seed,
      this.collectors,
      sourceTypes,
      start,
    );
    const flapRatio = fleet.faults.flapRatio;
    fleet.collectors.forEach((c) => {
      if (!c.alive && c.offlineForSeconds !== undefined) {
        const sim = this.byId.get(c.id) as SimCollector;
        this.events.push({
          at: start + c.offlineForSeconds * 1000,
          kind: 'alive',
          collector: sim,
          alive: true,
          flap: false,
        });
      }
    });
    for (const c of this.collectors) {
      if (c.type !== 'Installable') continue;
      if (!c.flap && flapRatio > 0 && this.rng.chance(flapRatio)) c.flap = true;
      if (c.flap) this.scheduleFlap(c, start);
    }
  }

  private get timeoutMessage(): string {
    const minutes = Math.round(this.fleet.behaviour.taskTimeoutSeconds / 6) / 10;
    return `Upgrade task timed out: it did not complete within ${minutes} minutes of its request.`;
  }

  /**
   * One page of the upgradable Collectors for `target`, in ascending id order: installed ones
   * the user may use, not already on the target, with no unfinished task (offline ones only when
   * the fleet lists them).
   */
  listUpgradable(
    target: string,
    offset: number,
    limit: number,
    allowed: (id: number) => boolean,
  ): SimCollector[] {
    const page: SimCollector[] = [];
    const listOffline = this.fleet.listOffline;
    let skipped = 0;
    for (const c of this.collectors) {
      if (page.length >= limit) break;
      if (
        c.type !== 'Installable' ||
        c.version === target ||
        c.current ||
        (!c.alive && !listOffline) ||
        !allowed(c.id)
      )
        continue;
      if (skipped < offset) skipped++;
      else page.push(c);
    }
    return page;
  }

  /** Builds, oldest to newest. */
  get builds(): readonly string[] {
    return this.buildList;
  }

  get latest(): string {
    return this.buildList[this.buildList.length - 1] as string;
  }

  /** Publishes a new latest build (a release during a rollout); it must be newer than the latest. */
  addBuild(version: string): void {
    if (!isBuildVersion(version)) throw new RangeError(`not a build version: ${JSON.stringify(version)}`);
    if (compareBuildVersions(version, this.latest) <= 0)
      throw new RangeError(`${version} is not newer than the latest build ${this.latest}`);
    this.buildIndex.set(version, this.buildList.length);
    this.buildList.push(version);
  }

  get size(): number {
    return this.collectors.length;
  }

  buildExists(version: string): boolean {
    return this.buildIndex.has(version);
  }

  collector(id: number): SimCollector | undefined {
    return this.byId.get(id);
  }

  task(id: number): SimTask | undefined {
    return this.tasks.get(id);
  }

  /** Replays every event due by `now`, in time order. */
  advance(now: number): void {
    for (let e = this.events.popDue(now); e; e = this.events.popDue(now)) this.apply(e);
    this.health.advance(now, (id) => this.byId.get(id));
  }

  /** The last heartbeat: frozen while offline or stopped, else the latest beat at or before `now`. */
  lastSeenAlive(c: SimCollector, now: number): number {
    if (!c.alive) return c.offlineSince;
    const at = c.stoppedAt === undefined ? now : Math.min(now, c.stoppedAt);
    const period = this.fleet.behaviour.heartbeatSeconds * 1000;
    return at - ((((at - c.heartbeatPhase) % period) + period) % period);
  }

  /** Creates an upgrade or downgrade task, checking the interface's five error conditions. */
  create(
    collectorId: number,
    toVersion: string,
    accessId: string,
    allowed: (id: number) => boolean,
    now: number,
  ): CreateResult {
    const result = this.tryCreate(collectorId, toVersion, accessId, allowed, now);
    const c = this.byId.get(collectorId);
    if (!result.ok && c && allowed(collectorId))
      c.refusals = keepLast(c.refusals, { at: now, code: result.code });
    return result;
  }

  private tryCreate(
    collectorId: number,
    toVersion: string,
    accessId: string,
    allowed: (id: number) => boolean,
    now: number,
  ): CreateResult {
    const c = this.byId.get(collectorId);
    if (!c || !allowed(collectorId)) {
      return {
        ok: false,
        code: 'collector.invalid',
        message: `Collector with id ${collectorId} does not exist or you have no permission to use it.`,
      };
    }
    if (c.type !== 'Installable') {
      return {
        ok: false,
        code: 'collector.type.invalid',
        message: `Collector ${collectorId} is not an installed Collector and cannot be upgraded.`,
      };
    }
    const to = this.buildIndex.get(toVersion);
    if (to === undefined) {
      return {
        ok: false,
        code: 'collector.version.invalid',
        message: `Version ${toVersion} is not a valid Collector build.`,
      };
    }
    if (c.current) {
      return {
        ok: false,
        code: 'collector.in.upgrading',
        message: `Collector ${collectorId} is currently being upgraded.`,
      };
    }
    if (!c.alive) {
      return { ok: false, code: 'collector.not.alive', message: `Collector ${collectorId} is not alive.` };
    }
    const roll = this.rng.next();
    const { stuckRatio } = this.fleet.behaviour;
    const failureRatio = failureRatioFor(this.fleet.behaviour, c, toVersion);
    const task: SimTask = {
      id: this.nextTaskId++,
      collectorId,
      accessId,
      fromVersion: c.version,
      toVersion,
      requestTime: now,
      status: TaskStatus.notStarted,
      message: '',
      steps: this.stepsFor(c.version, to),
      nextStep: 0,
      drawnOutcome: roll < stuckRatio ? 'stuck' : roll < stuckRatio + failureRatio ? 'fail' : 'succeed',
      // A stopped Collector still listed alive never hears of the task: it waits for the time-out.
      stalled: c.stoppedAt !== undefined,
      stepScheduled: false,
    };
    this.tasks.set(task.id, task);
    c.tasks.push(task);
    c.current = task;
    const counters = this.counters;
    counters.tasksCreated++;
    counters.unfinished++;
    if (counters.unfinished > counters.maxConcurrentTasks) counters.maxConcurrentTasks = counters.unfinished;
    const gauge = this.gauge;
    gauge.unfinished++;
    if (gauge.unfinished > gauge.maxConcurrentTasks) gauge.maxConcurrentTasks = gauge.unfinished;
    const { issueSeconds, taskTimeoutSeconds } = this.fleet.behaviour;
    this.events.push({ at: now + issueSeconds * 1000, kind: 'issue', task });
    this.events.push({ at: now + taskTimeoutSeconds * 1000, kind: 'timeout', task });
    return { ok: true, task };
  }

  /** Turns a Collector on or off (introspection or the flap schedule); on also restarts a stopped one. */
  setAlive(c: SimCollector, alive: boolean, at: number): void {
    if (alive && c.stoppedAt !== undefined) this.restart(c, at);
    if (c.alive === alive) return;
    this.markAlive(c, alive, at);
    if (!alive) {
      c.offlineSince = this.lastSeenAlive({ ...c, alive: true }, at);
      const t = c.current;
      if (t) {
        t.stalled = true;
        if (t.status === TaskStatus.notStarted) t.status = TaskStatus.pending;
      }
    }
  }

  /**
   * Stops the Collector's heartbeats at `at` (after the task `afterTask` succeeded, or by /_sim
   * when null): it stays listed alive until offlineAfterSeconds after its last heartbeat.
   */
  stop(c: SimCollector, at: number, afterTask: number | null): void {
    if (c.type !== 'Installable' || c.stoppedAt !== undefined) return;
    c.stopDue = undefined;
    c.stoppedAt = at;
    const stop: SimStop = { at, afterTask, restartedAt: null };
    c.stops.push(stop);
    if (afterTask !== null) this.counters.stoppedAfterUpgrade++;
    const t = c.current;
    if (t) {
      t.stalled = true;
      if (t.status === TaskStatus.notStarted) t.status = TaskStatus.pending;
    }
    const { offlineAfterSeconds, stopAfterUpgrade } = this.fleet.behaviour;
    if (c.alive) {
      const lost = this.lastSeenAlive(c, at) + offlineAfterSeconds * 1000;
      this.events.push({ at: lost, kind: 'lost', collector: c, stop });
    }
    const restart =
      afterTask === null
        ? undefined
        : restartDelayMs(stopAfterUpgrade, this.fleet.seed, c.id, c.stops.length - 1);
    if (restart !== undefined) this.events.push({ at: at + restart, kind: 'restart', collector: c, stop });
  }

  /** Restarts a stopped Collector: it heartbeats again (and is alive) from `at`. */
  restart(c: SimCollector, at: number): void {
    if (c.stoppedAt === undefined) return;
    const last = c.stops[c.stops.length - 1];
    if (last) last.restartedAt = at;
    c.stoppedAt = undefined;
    if (!c.alive) this.markAlive(c, true, at);
    // A task issued while it was stopped is heard of at its first heartbeat (one it was running is lost).
    const t = c.current;
    if (t?.stalled && t.status !== TaskStatus.progressing) {
      t.stalled = false;
      if (t.status === TaskStatus.pending)
        this.events.push({ at: at + this.fleet.behaviour.heartbeatSeconds * 1000, kind: 'pickup', task: t });
    }
  }

  private markAlive(c: SimCollector, alive: boolean, at: number): void {
    c.alive = alive;
    c.aliveChanges = keepLast(c.aliveChanges, { at, alive });
  }

  /** Forces the outcome of this Collector's tasks; a waiting stuck task moves on when released. */
  setOutcome(c: SimCollector, outcome: Outcome | undefined, at: number): void {
    c.outcome = outcome;
    const t = c.current;
    if (
      t &&
      t.status === TaskStatus.progressing &&
      !t.stalled &&
      !t.stepScheduled &&
      this.outcomeOf(t) !== 'stuck'
    ) {
      this.scheduleStep(t, at);
    }
  }

  private outcomeOf(t: SimTask): Outcome {
    return this.byId.get(t.collectorId)?.outcome ?? t.drawnOutcome;
  }

  private stepsFor(from: string, to: number): string[] {
    const fromIdx = this.buildIndex.get(from) ?? (to > 0 ? 0 : this.builds.length - 1);
    const inc = this.fleet.behaviour.incrementalAbove;
    const distance = Math.abs(to - fromIdx);
    if (distance === 0) return [];
    if (inc === 0 || distance <= inc) return [this.builds[to] as string];
    const dir = to > fromIdx ? 1 : -1;
    const steps: string[] = [];
    for (let i = fromIdx + dir * inc; dir > 0 ? i < to : i > to; i += dir * inc)
      steps.push(this.builds[i] as string);
    steps.push(this.builds[to] as string);
    return steps;
  }

  /**
   * The distribution of one upgrade step of this Collector, and where it comes from: its own
   * `upgradeSeconds` (fixed), `behaviour.upgradeSeconds.byOs[osName]`, or the default.
   */
  stepDuration(c: SimCollector): { kind: DurationKind; median: number; p95: number } {
    if (c.upgradeSeconds !== undefined)
      return { kind: 'collector', median: c.upgradeSeconds, p95: c.upgradeSeconds };
    const { median, p95, byOs } = this.fleet.behaviour.upgradeSeconds;
    const os = byOs && Object.hasOwn(byOs, c.osName) ? byOs[c.osName] : undefined;
    return os ? { kind: 'os', median: os.median, p95: os.p95 } : { kind: 'default', median, p95 };
  }

  private stepMs(c: SimCollector): number {
    const d = this.stepDuration(c);
    const seconds = d.kind === 'collector' ? d.median : this.rng.logNormal(d.median, d.p95);
    return Math.max(1, Math.round(seconds * 1000));
  }

  private scheduleStep(t: SimTask, at: number): void {
    const c = this.byId.get(t.collectorId) as SimCollector;
    t.stepScheduled = true;
    this.events.push({ at: at + this.stepMs(c), kind: 'step', task: t });
  }

  private scheduleFlap(c: SimCollector, at: number): void {
    const { onlineSeconds, offlineSeconds } = this.fleet.faults.flap;
    const mean = c.alive ? onlineSeconds : offlineSeconds;
    this.events.push({
      at: at + Math.round(this.rng.exponential(mean) * 1000),
      kind: 'alive',
      collector: c,
      alive: !c.alive,
      flap: true,
    });
  }

  private finish(
    t: SimTask,
    status: 2 | 3,
    message: string,
    result: 'succeeded' | 'failed' | 'timedOut',
    at: number,
  ): void {
    t.status = status;
    t.message = message;
    t.finishTime = at;
    t.result = result;
    const c = this.byId.get(t.collectorId) as SimCollector;
    if (c.current === t) c.current = undefined;
    this.counters.unfinished--;
    this.gauge.unfinished--;
    this.counters.tasksByOutcome[result]++;
    // Its health follows the build it runs: a break of the build it left resolves, the new one may break it.
    if (c.version !== t.fromVersion) this.health.moved(c, at);
    // A stop still to come belongs to the build the Collector has just moved away from.
    if (result === 'succeeded' && t.steps.length > 0) c.stopDue = undefined;
    if (
      result === 'succeeded' &&
      c.stopsAfterUpgrade &&
      t.steps.length > 0 &&
      compareBuildVersions(t.toVersion, t.fromVersion) > 0
    ) {
      const { stopAfterUpgrade } = this.fleet.behaviour;
      const due = at + stopDelayMs(stopAfterUpgrade, this.fleet.seed, c.id, c.stops.length);
      c.stopDue = { at: due, afterTask: t.id };
      this.events.push({ at: due, kind: 'stop', collector: c, afterTask: t.id });
    }
  }

  private apply(e: SimEvent): void {
    switch (e.kind) {
      case 'alive':
        // A stopped Collector does not come back by flapping; the flap schedule goes on.
        if (!(e.flap && e.collector.stoppedAt !== undefined)) this.setAlive(e.collector, e.alive, e.at);
        if (e.flap) this.scheduleFlap(e.collector, e.at);
        return;
      case 'stop': {
        const due = e.collector.stopDue;
        if (due && due.at === e.at && due.afterTask === e.afterTask)
          this.stop(e.collector, e.at, e.afterTask);
        return;
      }
      case 'lost':
      case 'restart': {
        const c = e.collector;
        if (c.stoppedAt === undefined || c.stops[c.stops.length - 1] !== e.stop) return;
        if (e.kind === 'lost') this.setAlive(c, false, e.at);
        else this.restart(c, e.at);
        return;
      }
    }
    const t = e.task;
    if (t.result) return;
    const c = this.byId.get(t.collectorId) as SimCollector;
    switch (e.kind) {
      case 'timeout':
        this.finish(t, TaskStatus.failed, this.timeoutMessage, 'timedOut', e.at);
        return;
      case 'issue': {
        if (t.status !== TaskStatus.notStarted) return;
        t.status = TaskStatus.pending;
        if (t.stalled) return;
        // The Collector hears of it at its next heartbeat.
        const next = this.lastSeenAlive(c, e.at) + this.fleet.behaviour.heartbeatSeconds * 1000;
        this.events.push({ at: next, kind: 'pickup', task: t });
        return;
      }
      case 'pickup':
        if (t.stalled) return;
        t.status = TaskStatus.progressing;
        if (t.steps.length === 0) this.finish(t, TaskStatus.succeeded, '', 'succeeded', e.at);
        else if (this.outcomeOf(t) !== 'stuck') this.scheduleStep(t, e.at);
        return;
      case 'step': {
        t.stepScheduled = false;
        if (t.stalled) return;
        const outcome = this.outcomeOf(t);
        if (outcome === 'stuck') return;
        if (outcome === 'fail') {
          const failure = drawFailure(this.fleet.behaviour, c, this.rng);
          t.cause = failure.cause;
          this.counters.failuresByCause[failure.cause ?? 'custom']++;
          this.finish(t, TaskStatus.failed, failure.message, 'failed', e.at);
          return;
        }
        c.version = t.steps[t.nextStep] as string;
        t.nextStep++;
        if (t.nextStep >= t.steps.length) this.finish(t, TaskStatus.succeeded, '', 'succeeded', e.at);
        else this.scheduleStep(t, e.at);
        return;
      }
    }
  }
}

/**
 * The health events of one simulated organization (api-facts.md, last section): what the
 * account's Health Events API lists as unresolved, and the truth behind it.
 *
 * An event is raised, then resolved (or stays unresolved). Two kinds:
 * - `noise`: unrelated trouble present before the simulator started (`noiseRatio`), raised at
 *   some time in the three days before the start and never resolved;
 * - `break`: a build of `breaks` stops the Source of a Collector it was drawn for, `afterSeconds`
 *   after the task that brought the Collector to the build; resolved when the Collector leaves
 *   that build (a rollback, another upgrade). A break due while the Collector already left the
 *   build was raised and resolved then: the history stays true whatever order time is settled in.
 * Builds older than HEALTH_EVENTS_SINCE send no events: a break there is silent (the Collector
 * collects nothing, the API says nothing). Who breaks, when, and each Collector's source type are
 * drawn from the fleet's seed and the Collector's id, not from the shared stream.
 */
import type { Random } from '../lib/random.js';
import { compareBuildVersions } from '../lib/version.js';
import { HEALTH_EVENTS_SINCE, type HealthBreak, type HealthEventsBehaviour } from './health-schema.js';
import type { Delay } from './schema-values.js';
import { keyedRandom } from './stop-after-upgrade.js';
import type { SimCollector } from './types.js';

const SALT_SOURCE_TYPE = 0x4e01;
const SALT_NOISE = 0x4e02;
const SALT_BREAK = 0x4e03;
const SALT_BREAK_DELAY = 0x4e04;
const SALT_EVENT_ID = 0x4e05;

/** Events kept per Collector for introspection (the unresolved ones are always kept). */
const HISTORY_LIMIT = 100;

/** Unrelated trouble a fleet has anyway: the noise's trackers. */
const NOISE_TRACKERS = [
  { trackerId: 'FilePathNotExist', name: 'File path does not exist', severity: 'Warning' },
  { trackerId: 'IngestThrottled', name: 'Ingest throttled', severity: 'Warning' },
  { trackerId: 'SourceCredentialsInvalid', name: 'Source credentials invalid', severity: 'Error' },
] as const;

export interface SimHealthEvent {
  /** Order of raising: the listing's order and its continuation tokens. */
  seq: number;
  eventId: string;
  collectorId: number;
  collectorName: string;
  resource: { id: number; name: string; type: 'Collector' | 'Source' };
  trackerId: string;
  name: string;
  description: string;
  severity: 'Error' | 'Warning';
  /** Simulated ms. */
  eventTime: number;
  resolvedAt: number | null;
  cause: 'noise' | 'break';
  /** The build the Collector ran when it was raised. */
  build: string;
  /** Raised on a build older than HEALTH_EVENTS_SINCE: true, but never listed by the API. */
  silent: boolean;
}

interface PendingBreak {
  at: number;
  rule: HealthBreak;
  build: string;
}

export function sendsHealthEvents(version: string): boolean {
  return compareBuildVersions(version, HEALTH_EVENTS_SINCE) >= 0;
}

/** The id of a Collector's one Source (the simulator gives each installed Collector one). */
export function sourceIdOf(collectorId: number): number {
  return collectorId * 1000 + 1;
}

function delayMs(d: Delay, rng: Random): number {
  const seconds = typeof d === 'number' ? d : rng.logNormal(d.median, d.p95);
  return Math.max(0, Math.round(seconds * 1000));
}

function uuidOf(rng: Random): string {
  let hex = '';
  for (let i = 0; i < 4; i++)
    hex += Math.floor(rng.next() * 2 ** 32)
      .toString(16)
      .padStart(8, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export class HealthEvents {
  private seq = 0;
  /** Unresolved events by seq (insertion order is seq order). */
  private readonly open = new Map<number, SimHealthEvent>();
  private readonly byCollector = new Map<number, SimHealthEvent[]>();
  private readonly pending = new Map<number, PendingBreak>();
  private readonly sourceTypes = new Map<number, string>();
  readonly counters = { raised: 0, resolved: 0, breaks: 0, silentBreaks: 0 };

  constructor(
    readonly config: HealthEventsBehaviour,
    private readonly seed: number,
    collectors: readonly SimCollector[],
    /** Source types the fleet file gives explicitly, by Collector id. */
    explicitSourceTypes: ReadonlyMap<number, string>,
    start: number,
  ) {
    const types = Object.entries(config.sourceTypes);
    for (const c of collectors) {
      if (c.type !== 'Installable') continue;
      const drawn =
        types.length === 1
          ? (types[0]?.[0] as string)
          : keyedRandom(seed, c.id, SALT_SOURCE_TYPE).weighted(types);
      this.sourceTypes.set(c.id, explicitSourceTypes.get(c.id) ?? drawn);
    }
    if (config.noiseRatio > 0) {
      for (const c of collectors) {
        if (c.type !== 'Installable' || !sendsHealthEvents(c.version)) continue;
        const rng = keyedRandom(seed, c.id, SALT_NOISE);
        if (rng.next() >= config.noiseRatio) continue;
        const t = rng.pick(NOISE_TRACKERS);
        const at = start - 3_600_000 - rng.int(0, 3 * 86_400_000);
        this.raise(c, { ...t, cause: 'noise', onSource: rng.chance(0.7) }, at);
      }
    }
  }

  sourceTypeOf(c: SimCollector): string | undefined {
    return this.sourceTypes.get(c.id);
  }

  /** Whether the Collector collects: no break raised on it is unresolved. */
  collecting(c: SimCollector): boolean {
    return !(this.byCollector.get(c.id) ?? []).some((e) => e.cause === 'break' && e.resolvedAt === null);
  }

  /** Every event of the Collector kept, oldest first, and its break still to come. */
  history(c: SimCollector): { events: SimHealthEvent[]; breakDueAt: number | null } {
    return {
      events: (this.byCollector.get(c.id) ?? []).map((e) => ({ ...e, resource: { ...e.resource } })),
      breakDueAt: this.pending.get(c.id)?.at ?? null,
    };
  }

  /**
   * A task of the Collector ended at `at` with it on another build than before (`c.version`
   * is the new one): a break due before then was raised then; the breaks of the build it left
   * resolve; the build it reached may break it later.
   */
  moved(c: SimCollector, at: number): void {
    const p = this.pending.get(c.id);
    if (p) {
      this.pending.delete(c.id);
      if (p.at <= at) this.raiseBreak(c, p);
    }
    for (const e of this.byCollector.get(c.id) ?? [])
      if (e.cause === 'break' && e.resolvedAt === null && e.build !== c.version) this.resolve(e, at);
    this.config.breaks.forEach((rule, i) => {
      if (this.pending.has(c.id) || rule.build !== c.version || rule.ratio <= 0) return;
      if (rule.osName !== undefined && rule.osName !== c.osName) return;
      if (rule.sourceType !== undefined && rule.sourceType !== this.sourceTypes.get(c.id)) return;
      if (keyedRandom(this.seed, c.id, SALT_BREAK, i).next() >= rule.ratio) return;
      const n = (this.byCollector.get(c.id) ?? []).length;
      const due = at + delayMs(rule.afterSeconds, keyedRandom(this.seed, c.id, SALT_BREAK_DELAY, n));
      this.pending.set(c.id, { at: due, rule, build: c.version });
    });
  }

  /** Raises the breaks due by `now` (their Collectors are still on the build: `moved` took the others). */
  advance(now: number, collector: (id: number) => SimCollector | undefined): void {
    for (const [id, p] of this.pending) {
      if (p.at > now) continue;
      this.pending.delete(id);
      const c = collector(id);
      if (c) this.raiseBreak(c, p);
    }
  }

  /**
   * A page of the unresolved events the API lists (not the silent ones), in raising order, after
   * `afterSeq`, those `wanted` only; `next` is the last one's seq when more may follow.
   */
  page(
    afterSeq: number,
    limit: number,
    wanted: (e: SimHealthEvent) => boolean,
  ): { events: SimHealthEvent[]; next: number | null } {
    const events: SimHealthEvent[] = [];
    for (const e of this.open.values()) {
      if (e.seq <= afterSeq || e.silent || !wanted(e)) continue;
      if (events.length === limit) return { events, next: (events[events.length - 1] as SimHealthEvent).seq };
      events.push(e);
    }
    return { events, next: null };
  }

  /** How many events are unresolved now (silent ones included), by cause. */
  unresolved(): { noise: number; break: number; silent: number } {
    const n = { noise: 0, break: 0, silent: 0 };
    for (const e of this.open.values()) {
      n[e.cause]++;
      if (e.silent) n.silent++;
    }
    return n;
  }

  private raiseBreak(c: SimCollector, p: PendingBreak): void {
    this.counters.breaks++;
    const silent = !sendsHealthEvents(p.build);
    if (silent) this.counters.silentBreaks++;
    const name = p.rule.trackerId.replace(/([a-z])([A-Z])/g, '$1 $2');
    this.raise(
      c,
      {
        trackerId: p.rule.trackerId,
        name,
        severity: p.rule.severity,
        cause: 'break',
        onSource: true,
        description: `Collection of the ${this.sourceTypes.get(c.id) ?? 'LocalFile'} Source stopped after the upgrade to ${p.build}.`,
      },
      p.at,
      p.build,
    );
  }

  private raise(
    c: SimCollector,
    t: {
      trackerId: string;
      name: string;
      severity: 'Error' | 'Warning';
      cause: 'noise' | 'break';
      onSource: boolean;
      description?: string;
    },
    at: number,
    build: string = c.version,
  ): void {
    const seq = ++this.seq;
    const sourceType = this.sourceTypes.get(c.id) ?? 'LocalFile';
    const e: SimHealthEvent = {
      seq,
      eventId: uuidOf(keyedRandom(this.seed, SALT_EVENT_ID, seq)),
      collectorId: c.id,
      collectorName: c.name,
      resource: t.onSource
        ? { id: sourceIdOf(c.id), name: `${c.name}/${sourceType}`, type: 'Source' }
        : { id: c.id, name: c.name, type: 'Collector' },
      trackerId: t.trackerId,
      name: t.name,
      description: t.description ?? `${t.name} on ${c.name}.`,
      severity: t.severity,
      eventTime: at,
      resolvedAt: null,
      cause: t.cause,
      build,
      silent: !sendsHealthEvents(build),
    };
    this.counters.raised++;
    this.open.set(seq, e);
    const list = this.byCollector.get(c.id) ?? [];
    list.push(e);
    // Resolved events beyond the limit go; the unresolved ones are the truth a test reads.
    while (list.length > HISTORY_LIMIT) {
      const i = list.findIndex((x) => x.resolvedAt !== null);
      if (i < 0) break;
      list.splice(i, 1);
    }
    this.byCollector.set(c.id, list);
  }

  private resolve(e: SimHealthEvent, at: number): void {
    e.resolvedAt = at;
    this.open.delete(e.seq);
    this.counters.resolved++;
  }
}

/**
 * `GET /eta`: how long each unfinished rollout, and each organization's part of it, still needs
 * for its upgrades, from what the daemon already knows: the Collectors not yet settled (`total -
 * done` of `status`), the rollout's in-flight limit, and the median of its own upgrade durations
 * (the latest 100, request to final status, keys.durations). The upgrades left go `maxInFlight`
 * at a time, each the median long:
 *
 *   etaMs = ceil((total - done) / maxInFlight) × median
 *
 * A part's is the same over its own Collectors, as if it had the limit to itself (the parts share
 * it: the rollout's is the longest it can be). Waits for people and for time (approvals, bakes,
 * analysis, windows, a pause) are not counted: they are said beside it (`waitingFor`). Without a
 * duration yet there is no estimate (`etaMs` absent). Times are the deployment's clock's (a
 * rehearsal's are the simulator's). `status` has no ETA: this is the console's alone. The answer
 * carries no time of its own, so that its ETag holds while nothing changed (a `304`).
 */
import type { Redis } from 'ioredis';
import { quantile } from '../lib/quantile.js';
import type { Keys, RolloutStatus } from '../rollout/index.js';
import type { EtaAnswer, RolloutEta } from './rollout-eta.js';

/** Durations read per rollout (the list keeps the latest 100). */
const DURATIONS_READ = 100;
const FINISHED = new Set(['converged', 'aborted', 'superseded']);

/** `ceil(left / limit) × median`, or undefined when nothing is left or nothing measured. */
export function etaMs(left: number, limit: number, medianMs: number | undefined): number | undefined {
  if (left <= 0 || medianMs === undefined || !Number.isFinite(medianMs)) return undefined;
  return Math.ceil(left / Math.max(1, limit)) * medianMs;
}

export function rolloutEta(r: RolloutStatus, durations: readonly number[]): RolloutEta {
  const sorted = [...durations].filter(Number.isFinite).sort((a, b) => a - b);
  const medianMs = sorted.length ? quantile(sorted, 0.5) : undefined;
  const limit = r.maxInFlight;
  const waitingFor = r.phase !== 'running' ? r.phaseText : r.wave?.waitingFor;
  const total = etaMs(r.total - r.done, limit, medianMs);
  return {
    id: r.id,
    ...(total === undefined ? {} : { etaMs: total }),
    ...(medianMs === undefined ? {} : { medianMs }),
    samples: sorted.length,
    maxInFlight: limit,
    ...(waitingFor ? { waitingFor } : {}),
    parts: r.byOrg.map((p) => {
      const part = etaMs(p.total - p.done, limit, medianMs);
      return { org: p.org, ...(part === undefined ? {} : { etaMs: part }) };
    }),
  };
}

/** Each unfinished rollout's estimate, its durations read in one round trip. */
export async function readEta(deps: {
  redis: Redis;
  keys: Pick<Keys, 'durations'>;
  rollouts: readonly RolloutStatus[];
}): Promise<EtaAnswer> {
  const open = deps.rollouts.filter((r) => !FINISHED.has(r.phase));
  const pipe = deps.redis.pipeline();
  for (const r of open) pipe.lrange(deps.keys.durations(r.id), 0, DURATIONS_READ - 1);
  const replies = open.length ? ((await pipe.exec()) ?? []) : [];
  return {
    rollouts: open.map((r, i) => {
      const [err, list] = replies[i] ?? [null, []];
      if (err) throw err;
      return rolloutEta(r, ((list as string[] | null) ?? []).map(Number));
    }),
  };
}

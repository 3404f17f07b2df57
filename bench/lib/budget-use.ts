/**
 * What a run spent of one organization's API budget, from the simulator's request log
 * (request-log.ts): requests per simulated second by purpose, and the busiest simulated minute
 * against the deployment's share of the rate (`apiBudget.share` × 4/s).
 * - creates: POST /collectors/upgrades (a `collector.not.alive` refusal included);
 * - noticing: status reads, and listing pages of a build other than the target (the passes that
 *   watch tasks and verify successes: listings/listing-pass.ts);
 * - scans: listing pages of the target build (discovery, listings/scan-upgradable.ts);
 * - other: the build list, health events.
 */
import { type LoggedRequest, perMinute } from './request-log.js';

const round = (n: number, d = 2) => (Number.isFinite(n) ? Number(n.toFixed(d)) : null);

export type Purpose = 'creates' | 'noticing' | 'scans' | 'other';

export function purposeOf(r: LoggedRequest, target: string): Purpose {
  if (r.endpoint === 'create') return 'creates';
  if (r.endpoint === 'status') return 'noticing';
  if (r.endpoint === 'list') return r.subject === target ? 'scans' : 'noticing';
  return 'other';
}

export function budgetUse(
  requests: readonly LoggedRequest[],
  o: {
    /** The rollout's build (a listing of it is a scan). */
    target: string;
    /** The run's span on the simulator's clock. */
    from: number;
    until: number;
    /** The service's rate, requests per second (4). */
    perSecond: number;
    /** The share of it the deployment may spend (`apiBudget.share`). */
    share: number;
  },
) {
  const inRun = requests.filter((r) => r.at >= o.from && r.at <= o.until);
  const seconds = Math.max(1, (o.until - o.from) / 1000);
  const count: Record<Purpose, number> = { creates: 0, noticing: 0, scans: 0, other: 0 };
  for (const r of inRun) count[purposeOf(r, o.target)]++;
  const minutes = perMinute(
    inRun.map((r) => r.at),
    o.from,
  );
  const allowed = o.perSecond * o.share * 60;
  // The last minute is partial: judged on what it held, over a whole minute's allowance.
  const busiest = Math.max(0, ...minutes);
  return {
    /** Requests per simulated second over the run, by purpose. */
    perSecond: {
      creates: round(count.creates / seconds),
      noticing: round(count.noticing / seconds),
      scans: round(count.scans / seconds),
      other: round(count.other / seconds),
      total: round(inRun.length / seconds),
    },
    /** The share's allowance per second (perSecond × share). */
    allowedPerSecond: round(o.perSecond * o.share),
    busiestMinute: { requests: busiest, perSecond: round(busiest / 60), ofShare: round(busiest / allowed) },
    /** Simulated minutes in which more than the share was spent (0: the share held every minute). */
    minutesOverShare: minutes.filter((n) => n > allowed).length,
    minutes: minutes.length,
  };
}

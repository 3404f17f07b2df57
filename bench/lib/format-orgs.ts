/** The orgs benchmark's summary as Markdown: the figures against the goals, then one row per organization. */
import { formatIdleSplit, formatRunningProfile } from './format-table.js';

interface SlotShares {
  running: number;
  idleBeforeLastCreate: number;
  tailAfterLastCreate: number;
}
interface Refill {
  refills: number;
  timed: number;
  gapS: { p50: number | null; p90: number | null; mean: number | null };
  meanS: Record<string, number | null>;
}
interface Rates {
  peak: number;
  p50: number;
  mean: number;
}
interface Lag {
  p99MedianMs: number;
  p99MaxMs: number;
  maxMs: number;
}

export interface OrgsSummary {
  options: { orgs: number; perOrg: number; perOrgInFlight: number; timeScale: number };
  finished: boolean;
  stoppedWhy?: string | undefined;
  realSeconds: number;
  clockOffsetMs: number;
  byOrg: {
    org: string;
    makespanMin: number;
    idealMin: number;
    overIdeal: number | null;
    idealAtShareMin: number;
    overIdealAtShare: number | null;
    idealAtBudgetMin?: number;
    overIdealAtBudget?: number | null;
    lowerBound: { min: number };
    slotTime: SlotShares;
    refill: Refill;
    callsPerUpgraded: number | null;
    requestRate: number | null;
    rateLimited: number;
    upgraded: number;
  }[];
  overall: {
    collectors: number;
    upgraded: number;
    makespanMin: number;
    largestIdeal: { org: string; min: number };
    overLargestIdeal: number | null;
    largestBound: { org: string; min: number };
    overLargestBound: number | null;
    startSpreadS: number | null;
    slotTime: SlotShares;
    idle: Parameters<typeof formatIdleSplit>[0];
    runningBy5Min: number[];
    refill: Refill;
    callsPerUpgraded: number | null;
    callsPerUpgradedByEndpoint: Record<string, number | null>;
    rateLimited: number;
    requestRate: number | null;
    budgetRate: number;
  };
  requestRatePerSimSecond: Rates;
  requestLog: {
    byOrg: {
      busiestSecond: number;
      dropped: number;
      rateLimited: { count: number; byEndpoint: Record<string, number> };
    }[];
    peakMinuteRate: number | null;
    whileAllCreating: { minutes: number | null; rate: number | null };
  };
  processes: {
    peakRssMb: Record<string, number | null>;
    cpuSecondsPer1000Collectors: Record<string, number>;
    coresUsed: Record<string, number>;
    machine: { busyCpuSeconds: number; othersCpuSeconds: number; cores: number; realSeconds: number };
    eventLoopDelayMs: Record<string, Lag | string>;
  };
  redis: {
    bytesPerCollector: number | null;
    usedMemoryPeakMb: number;
    commandsPerRealSecond: Rates;
    commandsPerCollector: number;
    cpuSecondsPer1000Collectors: number;
  };
  noise: { loadAverage1m: { start: number | undefined; mean: number; end: number | undefined } };
}

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
const slots = (s: SlotShares) =>
  `${pct(s.running)} / ${pct(s.idleBeforeLastCreate)} / ${pct(s.tailAfterLastCreate)}`;
const refill = (r: Refill) =>
  `${r.gapS.p50} / ${r.gapS.p90} / ${r.gapS.mean} s; of the mean: noticing ${r.meanS.noticing}, tick and admission ${r.meanS.tickAndAdmission}, queue ${r.meanS.queue}, budget and call ${r.meanS.budgetAndCall} s (${r.timed} of ${r.refills} timed)`;
const lag = (l: Lag | string | undefined) =>
  typeof l === 'object' ? `${l.p99MedianMs} / ${l.p99MaxMs} ms (max ${l.maxMs})` : String(l);
const sumBy = (xs: Record<string, number>[]) => {
  const out: Record<string, number> = {};
  for (const x of xs) for (const [k, n] of Object.entries(x)) out[k] = (out[k] ?? 0) + n;
  return out;
};
const range = (xs: number[]) => `${Math.min(...xs)}–${Math.max(...xs)}`;

export function formatOrgsTables(o: OrgsSummary): string {
  const v = o.overall;
  const p = o.processes;
  const by = v.callsPerUpgradedByEndpoint;
  const row = (name: string, value: unknown, goal = '') => `| ${name} | ${value} | ${goal} |`;
  const head = `| ${o.options.orgs} organizations × ${o.options.perOrg} Collectors, ${o.options.perOrgInFlight} in flight each, clock ×${o.options.timeScale} | measured | goal |`;
  const lines = [
    head,
    '|---|---|---|',
    row(
      'rollout',
      `${o.finished ? 'finished' : `NOT finished (${o.stoppedWhy})`} in ${o.realSeconds} real s; ${v.upgraded} of ${v.collectors} upgraded`,
    ),
    row(
      'makespan (sim. min)',
      `${v.makespanMin}: × ${v.overLargestIdeal} the largest ideal (${v.largestIdeal.min}, ${v.largestIdeal.org}), × ${v.overLargestBound} the largest bound (${v.largestBound.min}); organizations started within ${v.startSpreadS} s`,
      '≤ 1.10 × ideal (#18)',
    ),
    row(
      'per organization: makespan, × ideal',
      `${range(o.byOrg.map((b) => b.makespanMin))} min, × ${range(o.byOrg.map((b) => b.overIdeal ?? Number.NaN))}`,
      '≤ 1.10 (#18)',
    ),
    row(
      "per organization: × the ideal at the share's rate (creates no faster than the budget spent, nothing else)",
      `ideal ${range(o.byOrg.map((b) => b.idealAtShareMin))} min, × ${range(o.byOrg.map((b) => b.overIdealAtShare ?? Number.NaN))}`,
      '',
    ),
    row(
      "per organization: the ideal at the rate its budget gave at most (its busiest minute's requests a second, all of them creates)",
      o.byOrg.every((b) => b.idealAtBudgetMin !== undefined)
        ? `ideal ${range(o.byOrg.map((b) => b.idealAtBudgetMin ?? Number.NaN))} min (× ${range(o.byOrg.map((b) => Number(((b.idealAtBudgetMin ?? Number.NaN) / b.idealMin).toFixed(2))))} the ideal), the run × ${range(o.byOrg.map((b) => b.overIdealAtBudget ?? Number.NaN))}`
        : 'not measured',
      '',
    ),
    row(
      'slot-time: running / idle before last create / tail',
      `overall ${slots(v.slotTime)}; idle before last create per organization ${range(o.byOrg.map((b) => Number((b.slotTime.idleBeforeLastCreate * 100).toFixed(1))))} %`,
      'idle ≤ 5 % (#18)',
    ),
    row('refill gap p50 / p90 / mean (sim.)', refill(v.refill)),
    row("idle before last create, split at each record's marks", formatIdleSplit(v.idle)),
    row('running per 5 sim. min (organizations averaged)', formatRunningProfile(v.runningBy5Min)),
    row(
      'calls per upgraded Collector',
      `${v.callsPerUpgraded} (create ${by.create}, status ${by.status}, list ${by.list}, targets ${by.targets})`,
      '≤ 1.3 (#18)',
    ),
    row(
      'requests per sim. second, all organizations',
      `${v.requestRate} over the makespan, ${o.requestLog.whileAllCreating.rate} while every organization was creating (${o.requestLog.whileAllCreating.minutes} min), ${o.requestLog.peakMinuteRate} in the busiest minute; per organization ${range(o.byOrg.map((b) => b.requestRate ?? Number.NaN))} over its makespan, busiest second ${range(o.requestLog.byOrg.map((b) => b.busiestSecond))}`,
      `near ${v.budgetRate} when the budget binds (#17)`,
    ),
    row(
      '429s',
      `${v.rateLimited} (per organization ${range(o.byOrg.map((b) => b.rateLimited))}; by endpoint ${JSON.stringify(sumBy(o.requestLog.byOrg.map((b) => b.rateLimited.byEndpoint)))})`,
      '0 (#17)',
    ),
    row(
      'peak RSS (VmHWM)',
      `run ${p.peakRssMb.run} MB, worker ${p.peakRssMb.worker} MB, simulator ${p.peakRssMb.simulator} MB, redis ${p.peakRssMb.redis} MB`,
    ),
    row(
      'CPU s per 1,000 Collectors (cores used)',
      ['run', 'worker', 'simulator', 'redis', 'bench']
        .map((k) => `${k} ${p.cpuSecondsPer1000Collectors[k]} (${p.coresUsed[k]})`)
        .join(', '),
    ),
    row(
      'event-loop delay p99 per scrape: median / max',
      `run ${lag(p.eventLoopDelayMs.run)}, worker ${lag(p.eventLoopDelayMs.worker)}, simulator ${lag(p.eventLoopDelayMs.simulator)}`,
    ),
    row(
      'Redis',
      `${o.redis.bytesPerCollector} B per Collector after the rollout; peak ${o.redis.usedMemoryPeakMb} MB; commands/s p50 ${o.redis.commandsPerRealSecond.p50}, peak ${o.redis.commandsPerRealSecond.peak}, mean ${o.redis.commandsPerRealSecond.mean} (${o.redis.commandsPerCollector} per Collector); CPU ${o.redis.cpuSecondsPer1000Collectors} s per 1,000`,
    ),
    row(
      'machine',
      `${p.machine.cores} cores, busy ${p.machine.busyCpuSeconds} CPU s in ${p.machine.realSeconds} s (others ${p.machine.othersCpuSeconds}); load ${o.noise.loadAverage1m.start?.toFixed(1)} → mean ${o.noise.loadAverage1m.mean} → ${o.noise.loadAverage1m.end?.toFixed(1)}; clock offset ${o.clockOffsetMs} ms`,
    ),
  ];
  const orgHead = [
    'org',
    'makespan',
    'ideal',
    '× ideal',
    'bound',
    'slot-time run / idle / tail',
    'refill gap p50 (s)',
    'calls / upgraded',
    'req/s',
    '429s',
  ];
  const orgLines = [`| ${orgHead.join(' | ')} |`, `|${orgHead.map(() => '---').join('|')}|`];
  for (const b of o.byOrg)
    orgLines.push(
      `| ${[
        b.org,
        b.makespanMin,
        b.idealMin,
        b.overIdeal,
        b.lowerBound.min,
        slots(b.slotTime),
        b.refill.gapS.p50,
        b.callsPerUpgraded,
        b.requestRate,
        b.rateLimited,
      ].join(' | ')} |`,
    );
  return `${lines.join('\n')}\n\n${orgLines.join('\n')}`;
}

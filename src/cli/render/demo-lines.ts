/**
 * What the demo prints, within 80 columns: its progress (a bar line and the counts wrapped below
 * it, redrawn in place on a terminal), and its summary: the rollouts' table (status's narrow
 * table), what the rehearsal found, how long it took and what the service saw, each sentence
 * wrapped. Counts and their nouns agree ("1 failure needs a person").
 */
import { plural } from '../../lib/plural.js';
import type { RolloutStatus } from '../../rollout/index.js';
import { countsByMetricState, progressBar, shortId, wrapText } from './format-status.js';

/** The width of every line of the demo. */
export const DEMO_WIDTH = 80;

/**
 * The progress of a rollout: `demo@19.470-4 [#####...] 43% 186/435  in flight 50/50`, then its
 * counts, wrapped within `width` (lines stay one column short of it, so that a terminal of exactly
 * that width does not wrap them when they are redrawn).
 */
export function progressLines(r: RolloutStatus, width = DEMO_WIDTH): string[] {
  const c = countsByMetricState(r.counts);
  const rare = (
    [
      ['verifying', c.verifying],
      ['unhealthy', c.unhealthy],
      ['worklist', c.manual],
      ['quarantined', c.quarantined],
    ] as const
  ).filter(([, n]) => n > 0);
  const counts = [
    ['ok', c.succeeded],
    ['failed', c.failed],
    ['timed out', c.timed_out],
    ['not alive', c.not_alive],
    ['retrying', c.waiting_retry],
    ...rare,
  ].map(([label, n]) => `${label} ${n}`);
  const tail = ` ${progressBar(r.done, r.total, 20)} ${r.done}/${r.total}  in flight ${r.inflight}/${r.maxInFlight}`;
  const head = `${shortId(r.id, Math.max(12, width - 1 - tail.length))}${tail}`;
  // A count and its label stay on one line: one word each for wrapText.
  const words = counts.map((t, i) => `${t.replaceAll(' ', '~')}${i < counts.length - 1 ? ',' : ''}`);
  return [head, ...wrapText(words.join(' '), width - 1, '  ', '  ').map((l) => l.replaceAll('~', ' '))];
}

/** What the rehearsal found beyond the counts, with what an operator would do about it. */
export function findings(r: RolloutStatus): string[] {
  const out: string[] = [];
  const unhealthy = r.counts.unhealthy ?? 0;
  if (unhealthy)
    out.push(
      `${plural(unhealthy, 'upgrade')} succeeded but the Collector did not stay alive on the build (unhealthy); in a deployment, \`fleet-upgrade rollback ${r.id} --only unhealthy\` takes ${unhealthy === 1 ? 'it' : 'them'} back.`,
    );
  const manual = r.counts.manual ?? 0;
  if (manual)
    out.push(
      `${plural(manual, 'failure')} ${manual === 1 ? 'needs' : 'need'} a person (disk space, permissions, upgrades disabled): \`fleet-upgrade report ${r.id} --worklist\` lists ${manual === 1 ? 'it' : 'them'}.`,
    );
  for (const q of r.quarantined ?? [])
    out.push(`Cohort ${q.cohort} was quarantined, ${q.held} of its Collectors held: ${q.reason}.`);
  return out;
}

export interface ServiceStats {
  tasksCreated: number;
  maxConcurrentTasks: number;
  rateLimited: number;
  requests: { total: number; byEndpoint: Record<string, number> };
  injectedErrors: number;
  dropped: number;
}

/** The summary's last sentences: how long, and what the service saw. */
export function closingLines(
  input: { seconds: number; timeScale: number; maxInFlight: number; stats: ServiceStats },
  width = DEMO_WIDTH,
): string[] {
  const { stats } = input;
  const minutes = (input.seconds * input.timeScale) / 60;
  const reads = (stats.requests.byEndpoint.status ?? 0) / Math.max(1, stats.tasksCreated);
  return [
    `Done in ${input.seconds.toFixed(1)} s (${plural(Number(minutes.toFixed(0)), 'simulated minute')}).`,
    `The service saw ${plural(stats.requests.total, 'request')} (${stats.rateLimited} answered 429), ` +
      `${plural(stats.tasksCreated, 'task')} created, at most ${stats.maxConcurrentTasks} unfinished at once (limit ${input.maxInFlight}), ` +
      `${reads.toFixed(1)} status reads per task; ` +
      `it injected ${plural(stats.injectedErrors, 'server error')} and ${plural(stats.dropped, 'dropped connection')}.`,
  ].flatMap((t) => wrapText(t, width, '', '  '));
}

/**
 * The figures of a chaos run as Markdown: one table of the whole run, one of each organization
 * (a column each), then the lists a reader needs to check them.
 */
import type { ChaosFigures, OrgFigures } from './chaos-figures.js';

export function formatChaos(f: ChaosFigures, violations: readonly string[]): string {
  const o = f.options;
  const j = f.judgement;
  const byTarget = new Map<string, number>();
  for (const k of f.kills) byTarget.set(k.target, (byTarget.get(k.target) ?? 0) + 1);
  const s = f.secret;
  const redisKill = f.kills.find((k) => k.target === 'redis-server');
  const rows: [string, string][] = [
    ['Collectors (fleet / in the rollout / records)', `${f.fleet} / ${f.expected} / ${f.records}`],
    ['converged', f.converged ? 'yes' : 'NO'],
    ['outcomes', counts(f.outcomes)],
    ['fleet_upgrade_results_total (all processes, after the kills)', counts(f.resultsMetric)],
    ['Collectors whose create went unanswered, resolved from the listings', String(f.reconciled)],
    ['outcomes that differ from the simulators', String(j.mismatches.length)],
    ['outcomes the service cannot tell (a create whose answer was lost)', String(j.unknowable.length)],
    ['Collectors without an outcome / without a record', `${j.notSettled.length} / ${j.missing.length}`],
    ['Collectors with more than one task', String(j.doubleTasks.length)],
    [
      'tasks unfinished at once across organizations (most) / maxInFlight',
      `${f.peakTasks} / ${o.maxInFlight}`,
    ],
    [
      'tasks created / succeeded, failed, timed out',
      `${f.simulator.tasksCreated} / ${f.simulator.tasksByOutcome.succeeded}, ${f.simulator.tasksByOutcome.failed}, ${f.simulator.tasksByOutcome.timedOut}`,
    ],
    [
      '429s of the rate limits: ours / neighbour (in bursts)',
      `${f.rateLimitedDeployment} / ${f.neighbour.rateLimited} (${f.neighbour.bursts})`,
    ],
    [
      'API requests / injected 5xx / dropped after acting',
      `${f.simulator.requests} / ${f.simulator.injectedErrors} / ${f.simulator.dropped}`,
    ],
    [
      'SIGKILLs: processes / redis-server',
      `${f.processKills} (${[...byTarget]
        .filter(([t]) => t !== 'redis-server')
        .map(([t, n]) => `${t} ${n}`)
        .join(', ')}) / ${f.redisKills}${redisKill ? ` at ${redisKill.done}/${redisKill.total} done` : ''}`,
    ],
    ['exits nobody asked for', String(f.unaskedExits.length)],
    ['report rows', String(f.reportRows)],
    [
      'secret scan (3 keys): hits / log lines / metrics scrapes / Redis keys, values / AOF MB',
      `${s.hits.length} / ${s.logLines} in ${s.logFiles} files / ${s.metricsScrapes} (${(s.metricsBytes / 1e6).toFixed(1)} MB) + ${s.statusScrapes} /status / ${s.redisKeys}, ${s.redisValues} / ${(s.aofBytes / 1e6).toFixed(1)}`,
    ],
    [
      'wall time: rollout / whole run',
      `${(f.rolloutMs / 1000).toFixed(0)} s / ${(f.wallMs / 1000).toFixed(0)} s (${f.simulatedMinutes.toFixed(0)} simulated min at ×${o.timeScale})`,
    ],
    ['Redis', f.appendFsync],
    ...(f.failoverMs ? [['Redis failover (real ms)', f.failoverMs.join(', ')] as [string, string]] : []),
  ];
  const lines = [...table(['figure', 'value'], rows), '', ...orgTable(f.orgs)];
  const list = (title: string, items: readonly unknown[]) => {
    if (!items.length) return;
    lines.push('', `${title}:`);
    for (const item of items.slice(0, 50)) lines.push(`- ${JSON.stringify(item)}`);
    if (items.length > 50) lines.push(`- ... and ${items.length - 50} more`);
  };
  list('Outcomes that differ from the simulator', j.mismatches);
  list('Outcomes the service cannot tell', j.unknowable);
  list('Collectors with more than one task', j.doubleTasks);
  list('Collectors without an outcome', j.notSettled);
  list('Collectors without a record', j.missing);
  list('Exits nobody asked for', f.unaskedExits);
  list('Secret found', s.hits);
  lines.push(
    '',
    violations.length ? `INVARIANTS BROKEN:\n- ${violations.join('\n- ')}` : 'Every invariant held.',
  );
  if (f.files) lines.push(`Logs, Redis files, the settings and the policy kept in ${f.files}`);
  return lines.join('\n');
}

/** Per organization: a row per figure, a column per organization. */
function orgTable(orgs: readonly OrgFigures[]): string[] {
  const row = (name: string, value: (x: OrgFigures) => string): [string, ...string[]] => [
    name,
    ...orgs.map(value),
  ];
  const minutes = (m: number | null | undefined) => (m === null || m === undefined ? '–' : m.toFixed(0));
  return table(
    ['per organization', ...orgs.map((x) => `${x.org} (key from ${x.keyFrom})`)],
    [
      row('target build', (x) => x.target),
      row(
        'Collectors (fleet / in the rollout / records)',
        (x) => `${x.fleet} / ${x.expected} / ${x.records}`,
      ),
      row('outcomes', (x) => counts(x.outcomes)),
      row('differ / cannot tell / no outcome / no record', (x) => {
        const j = x.judgement;
        return `${j.mismatches} / ${j.unknowable} / ${j.notSettled} / ${j.missing}`;
      }),
      row('Collectors with more than one task', (x) => String(x.judgement.doubleTasks)),
      row('created a task whose answer was lost, resolved', (x) => String(x.reconciled)),
      row('simulator maxConcurrentTasks / limit', (x) => `${x.maxConcurrentTasks} / ${x.limit}`),
      row(
        'tasks created / succeeded, failed, timed out',
        (x) =>
          `${x.simulator.tasksCreated} / ${x.simulator.tasksByOutcome.succeeded}, ${x.simulator.tasksByOutcome.failed}, ${x.simulator.tasksByOutcome.timedOut}`,
      ),
      row('our requests / all requests', (x) => `${x.deploymentRequests} / ${x.simulator.requests}`),
      row(
        'our 429s of its rate limit (allowed) / the neighbour’s',
        (x) =>
          `${x.rateLimitedDeployment} (${x.allowed429}) / ${x.neighbour ? `${x.neighbour.rateLimited} in ${x.neighbour.bursts} bursts` : 'no neighbour'}`,
      ),
      row('429s of the storm', (x) => String(x.simulator.faults.rateLimitStorm ?? 0)),
      row('requests refused by the outage', (x) => String(x.simulator.faults.outage ?? 0)),
      row(
        'injected 5xx / dropped after acting',
        (x) => `${x.simulator.injectedErrors} / ${x.simulator.dropped}`,
      ),
      row(
        'fault windows (min)',
        (x) =>
          x.faultWindows
            .map((w) => `${w.kind} ${minutes(w.fromMinutes)}–${minutes(w.untilMinutes)}`)
            .join(', ') || 'none',
      ),
      row(
        'waits (min)',
        (x) =>
          x.waits
            .map(
              (w) =>
                `${w.type === 'org.waiting' ? 'waiting' : 'recovered'} ${minutes(w.atMinutes)}${w.type === 'org.waiting' ? ` (${w.reason})` : ''}`,
            )
            .join(', ') || 'none',
      ),
      row('waits for 429s the service did not answer', (x) => String(x.misnamedWaits.length)),
      row('last outcome (min)', (x) => minutes(x.doneMinutes)),
    ],
  );
}

function table(head: readonly string[], rows: readonly (readonly string[])[]): string[] {
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ];
}

function counts(outcomes: Record<string, number>): string {
  return Object.entries(outcomes)
    .sort((a, b) => b[1] - a[1])
    .map(([s, n]) => `${s} ${n}`)
    .join(', ');
}

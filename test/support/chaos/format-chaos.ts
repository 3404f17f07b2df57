/** The figures of a chaos run as a Markdown table, then the lists a reader needs to check them. */
import type { ChaosFigures } from './chaos-figures.js';

export function formatChaos(f: ChaosFigures, violations: readonly string[]): string {
  const o = f.options;
  const j = f.judgement;
  const counts = Object.entries(f.outcomes)
    .sort((a, b) => b[1] - a[1])
    .map(([s, n]) => `${s} ${n}`)
    .join(', ');
  const byTarget = new Map<string, number>();
  for (const k of f.kills) byTarget.set(k.target, (byTarget.get(k.target) ?? 0) + 1);
  const s = f.secret;
  const redisKill = f.kills.find((k) => k.target === 'redis-server');
  const rows: [string, string][] = [
    ['Collectors (fleet / in the rollout / records)', `${f.fleet} / ${f.expected} / ${f.records}`],
    ['converged', f.converged ? 'yes' : 'NO'],
    ['outcomes', counts],
    ['Collectors whose create went unanswered, resolved from the listings', String(f.reconciled)],
    ['outcomes that differ from the simulator', String(j.mismatches.length)],
    ['outcomes the service cannot tell (a create whose answer was lost)', String(j.unknowable.length)],
    ['Collectors without an outcome / without a record', `${j.notSettled.length} / ${j.missing.length}`],
    ['Collectors with more than one task', String(j.doubleTasks.length)],
    ['simulator maxConcurrentTasks / maxInFlight', `${f.maxConcurrentTasks} / ${o.maxInFlight}`],
    [
      'tasks created / succeeded, failed, timed out',
      `${f.simulator.tasksCreated} / ${f.simulator.tasksByOutcome.succeeded}, ${f.simulator.tasksByOutcome.failed}, ${f.simulator.tasksByOutcome.timedOut}`,
    ],
    [
      '429s: deployment / neighbour (in bursts)',
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
      'secret scan: hits / log lines / metrics scrapes / Redis keys, values / AOF MB',
      `${s.hits.length} / ${s.logLines} in ${s.logFiles} files / ${s.metricsScrapes} (${(s.metricsBytes / 1e6).toFixed(1)} MB) + ${s.statusScrapes} /status / ${s.redisKeys}, ${s.redisValues} / ${(s.aofBytes / 1e6).toFixed(1)}`,
    ],
    [
      'wall time: rollout / whole run',
      `${(f.rolloutMs / 1000).toFixed(0)} s / ${(f.wallMs / 1000).toFixed(0)} s (${f.simulatedMinutes.toFixed(0)} simulated min at ×${o.timeScale})`,
    ],
    ['Redis appendfsync', f.appendFsync],
  ];
  const lines = ['| figure | value |', '|---|---|', ...rows.map(([k, v]) => `| ${k} | ${v} |`)];
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
  list('Exits nobody asked for', f.unaskedExits);
  list('Secret found', s.hits);
  lines.push(
    '',
    violations.length ? `INVARIANTS BROKEN:\n- ${violations.join('\n- ')}` : 'Every invariant held.',
  );
  if (f.files) lines.push(`Logs, Redis files and the policy kept in ${f.files}`);
  return lines.join('\n');
}

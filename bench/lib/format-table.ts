/** The comparison's summary as a Markdown table: one row per in-flight limit and strategy. */
interface Row {
  callsPerUpgraded: number | null;
  statusReadsPerTask: number | null;
  rateLimited: number;
  makespanMin: number;
  overBound: number | null;
  overIdeal: number | null;
  noticedLate: { p50s: number | null; p50ShareOfTask: number | null };
}

export function formatTable(
  levels: readonly { inFlight: number; baseline?: Row | undefined; fleetUpgrade?: Row | undefined }[],
): string {
  const head = [
    'in flight',
    'strategy',
    'calls per upgraded Collector',
    'status reads per task',
    '429s',
    'makespan (sim. min)',
    '× bound',
    '× ideal',
    'noticed late (p50, % of task)',
  ];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const l of levels) {
    for (const [name, r] of [
      ['vendor script', l.baseline],
      ['fleet-upgrade', l.fleetUpgrade],
    ] as const) {
      if (!r) continue;
      const share = r.noticedLate.p50ShareOfTask;
      lines.push(
        `| ${[
          l.inFlight,
          name,
          r.callsPerUpgraded,
          r.statusReadsPerTask,
          r.rateLimited,
          r.makespanMin,
          r.overBound,
          r.overIdeal,
          `${r.noticedLate.p50s} s, ${share === null ? '-' : `${(share * 100).toFixed(1)} %`}`,
        ].join(' | ')} |`,
      );
    }
  }
  return lines.join('\n');
}

/** The comparison's summary as a Markdown table: one row per in-flight limit and strategy. */
interface Row {
  callsPerUpgraded: number | null;
  statusReadsPerTask: number | null;
  rateLimited: number;
  makespanMin: number;
  overBound: number | null;
  overIdeal: number | null;
  noticedLate: { p50s: number | null; p50ShareOfTask: number | null };
  slotTime: { running: number; idleBeforeLastCreate: number; tailAfterLastCreate: number };
  refill: { refills: number; gapS: { p50: number }; share: Record<string, number> };
}

const pct = (x: number) => `${(x * 100).toFixed(0)} %`;

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
    '× ideal (longest first)',
    'slot-time: running / idle before last create / tail',
    'refill gap p50 (s)',
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
          `${pct(r.slotTime.running)} / ${pct(r.slotTime.idleBeforeLastCreate)} / ${pct(r.slotTime.tailAfterLastCreate)}`,
          r.refill.refills ? r.refill.gapS.p50 : '-',
          `${r.noticedLate.p50s} s, ${share === null ? '-' : `${(share * 100).toFixed(1)} %`}`,
        ].join(' | ')} |`,
      );
    }
  }
  return lines.join('\n');
}

/** What each refill of a slot waited for, per run of fleet-upgrade (bench/lib/slot-time.ts). */
export function formatRefillTable(
  rows: readonly {
    label: string;
    refill: {
      refills: number;
      timed: number;
      gapS: { p50: number; p90: number; mean: number };
      meanS: { noticing: number; tickAndAdmission: number; queue: number; budgetAndCall: number };
    };
  }[],
): string {
  const head = [
    'run',
    'refills (timed)',
    'gap p50 / p90 / mean (s)',
    'noticing the end (s)',
    'tick and admission (s)',
    'BullMQ queue (s)',
    'budget and call (s)',
  ];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const { label, refill: r } of rows)
    lines.push(
      `| ${[
        label,
        `${r.refills} (${r.timed})`,
        `${r.gapS.p50} / ${r.gapS.p90} / ${r.gapS.mean}`,
        r.meanS.noticing,
        r.meanS.tickAndAdmission,
        r.meanS.queue,
        r.meanS.budgetAndCall,
      ].join(' | ')} |`,
    );
  return lines.join('\n');
}

/** One line of what the run spent of the budget per simulated second (bench/lib/budget-use.ts). */
export function formatBudgetLine(b: {
  perSecond: Record<'creates' | 'noticing' | 'scans' | 'other' | 'total', number | null>;
  allowedPerSecond: number | null;
  busiestMinute: { perSecond: number | null; ofShare: number | null };
  minutesOverShare: number;
  minutes: number;
}): string {
  const p = b.perSecond;
  return (
    `budget per second: creates ${p.creates}, noticing ${p.noticing}, scans ${p.scans}, other ${p.other}; ` +
    `total ${p.total} of ${b.allowedPerSecond} allowed; busiest minute ${b.busiestMinute.perSecond}/s ` +
    `(${b.busiestMinute.ofShare} of the share); minutes over the share: ${b.minutesOverShare} of ${b.minutes}`
  );
}

/** The idle slot-time before the last create, split at each record's own marks (slot-time.ts `idleSplit`). */
export function formatIdleSplit(i: {
  idle: number;
  noticing: number;
  queue: number;
  budgetAndCall: number;
  other: number;
  perEndS: { idle: number; noticing: number; queue: number; budgetAndCall: number; other: number };
}): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
  const e = i.perEndS;
  return `idle before the last create ${pct(i.idle)} of the slot-time: noticing ${pct(i.noticing)}, BullMQ queue ${pct(i.queue)}, budget and call ${pct(i.budgetAndCall)}, free or untimed ${pct(i.other)} (per ended task ${e.idle} s: ${e.noticing}, ${e.queue}, ${e.budgetAndCall}, ${e.other} s)`;
}

/** Share of the slots running in each 5 simulated minutes, as one line. */
export function formatRunningProfile(profile: readonly number[]): string {
  return `running per 5 simulated minutes: ${profile.map((x) => Math.round(x * 100)).join(' ')} %`;
}

/**
 * The status table: one row per rollout with its phase as a person reads it, progress, its own
 * in-flight count against the limit and a column per dashboard state (METRIC_STATES, internal
 * states folded in with metricState), halt reasons below. Rows are built the way `status`
 * builds them (rolloutStatus of read-fleet-status.ts). Then `formatStatus`, what `status` prints:
 * 80 columns with each wait in words under its rollout's row, or `--wide`.
 */
import { describe, expect, it } from 'vitest';
import { explainRollout, formatWhen } from '../../../src/cli/render/explain-rollout.js';
import {
  countsByMetricState,
  fitParts,
  formatRolloutTable,
  formatStatus,
  NO_DAEMON,
  partLines,
  progressBar,
  STATE_LABELS,
  shortId,
  shortProgress,
  stateSummary,
  wrapText,
} from '../../../src/cli/render/format-status.js';
import { METRIC_STATES } from '../../../src/metrics/create-metrics.js';
import type { StateCounts } from '../../../src/rollout/collector/index.js';
import type { RolloutRecord } from '../../../src/rollout/life/index.js';
import { type RolloutStatus, rolloutStatus } from '../../../src/rollout/life/index.js';

function status(
  partial: Partial<RolloutRecord> & Pick<RolloutRecord, 'id'> & { counts: StateCounts },
): RolloutStatus {
  const { counts, ...fields } = partial;
  const record: RolloutRecord = {
    policy: partial.id.split('@')[0] as string,
    target: 'latest',
    build: partial.id.split('@')[1] as string,
    phase: 'running',
    startedAt: 0,
    updatedAt: 0,
    maxInFlight: 50,
    settings: {
      pollInitialMs: 60_000,
      pollMaxMs: 300_000,
      pollJitter: 0.2,
      taskTimeoutMs: 2_100_000,
      notAliveAttempts: 5,
      notAliveBackoffMs: 600_000,
      errorAttempts: 3,
      errorBackoffMs: 60_000,
      transientAttempts: 20,
      transientBackoffMs: 30_000,
      maxBackoffMs: 1_800_000,
    },
    statusReads: 0,
    createRequests: 0,
    scans: 1,
    wave: { index: 0, seq: 0 },
    canaries: 0,
    ...fields,
  };
  return rolloutStatus(record, counts);
}

/** The table's rows as cells, cut at the offsets where the header's columns start. */
function cells(table: string): string[][] {
  const [header = '', ...rest] = table.split('\n');
  const starts = [...header.matchAll(/\S+/g)].map((m) => m.index);
  const cut = (line: string) =>
    starts.map((start, i) => line.slice(start, starts[i + 1] ?? line.length).trim());
  return [header, ...rest].map(cut);
}

/** A row's cells by column name. */
function byColumn(table: string, row: number): Record<string, string> {
  const all = cells(table);
  return Object.fromEntries((all[0] ?? []).map((h, i) => [h, all[row]?.[i] ?? '']));
}

describe('progressBar', () => {
  it.each([
    [0, 10, '[....................]   0%'],
    [5, 10, '[##########..........]  50%'],
    [10, 10, '[####################] 100%'],
    [1, 3, '[#######.............]  33%'],
    [0, 0, '[####################] 100%'],
  ])('%i of %i', (done, total, expected) => {
    expect(progressBar(done, total)).toBe(expected);
  });

  it('takes a width', () => {
    expect(progressBar(1, 4, 8)).toBe('[##......]  25%');
  });
});

describe('countsByMetricState', () => {
  it('folds internal states into the dashboard states, with every state present', () => {
    const out = countsByMetricState({
      queued: 1,
      admitted: 2,
      creating: 3,
      reconciling: 4,
      pending: 5,
      progressing: 6,
      waiting_retry: 7,
      succeeded: 8,
      error: 9,
      aborted: 10,
    });
    expect(Object.keys(out).sort()).toEqual([...METRIC_STATES].sort());
    expect(out).toMatchObject({
      queued: 1,
      // Every state that holds a slot before the task runs shows as pending.
      pending: 14,
      progressing: 6,
      waiting_retry: 7,
      succeeded: 8,
      error: 9,
      failed: 0,
      skipped: 0,
      aborted: 10,
    });
    expect(Object.values(out).reduce((a, b) => a + b, 0)).toBe(55);
  });
});

describe('rolloutStatus (what a row is built from)', () => {
  it('counts this rollout’s own slot holders as in flight, its settled Collectors as done', () => {
    const r = status({
      id: 'linux-fleet@19.470-4',
      counts: {
        queued: 5,
        waiting_retry: 1,
        admitted: 1,
        creating: 1,
        reconciling: 1,
        pending: 2,
        progressing: 3,
      },
    });
    expect(r).toMatchObject({ inflight: 8, done: 0, total: 14, phaseText: 'running' });
    const settled = status({
      id: 'linux-fleet@19.450-12',
      counts: { succeeded: 4, failed: 1, timed_out: 1, not_alive: 2, rejected: 1, error: 1, skipped: 3 },
    });
    expect(settled).toMatchObject({ inflight: 0, done: 13, total: 13 });
    // Aborted Collectors have their outcome: they count as done.
    const aborted = status({
      id: 'linux-fleet@19.460-1',
      phase: 'aborted',
      counts: { aborted: 6, succeeded: 2, progressing: 1 },
    });
    expect(aborted).toMatchObject({ inflight: 1, done: 8, total: 9, phaseText: 'aborted' });
  });

  it('reads the phase as a person does: a paused rollout says why', () => {
    expect(
      status({ id: 'a@1.0-1', counts: {}, phase: 'paused', pauseReason: 'policy disabled' }).phaseText,
    ).toBe('paused (policy disabled)');
    expect(status({ id: 'a@1.0-1', counts: {}, phase: 'paused' }).phaseText).toBe('paused');
    expect(status({ id: 'a@1.0-1', counts: {}, phase: 'halted', haltReason: 'x' }).phaseText).toBe('halted');
  });
});

describe('formatRolloutTable', () => {
  it('says so when there are no rollouts', () => {
    expect(formatRolloutTable([])).toBe('no rollouts');
  });

  it('has a header and one aligned row per rollout with its numbers', () => {
    const table = formatRolloutTable([
      status({
        id: 'linux-fleet@19.470-4',
        counts: {
          succeeded: 120,
          failed: 3,
          timed_out: 1,
          queued: 60,
          admitted: 4,
          creating: 2,
          progressing: 10,
        },
        maxInFlight: 50,
      }),
      status({
        id: 'windows@19.470-4',
        phase: 'converged',
        counts: { succeeded: 7, not_alive: 1, rejected: 2, skipped: 0 },
        maxInFlight: 5,
      }),
    ]);
    const rows = cells(table);
    expect(rows[0]).toEqual([
      'ROLLOUT',
      'PHASE',
      'PROGRESS',
      'IN-FLIGHT',
      'QUEUED',
      'WAITING_RETRY',
      'PENDING',
      'PROGRESSING',
      'VERIFYING',
      'SUCCEEDED',
      'FAILED',
      'TIMED_OUT',
      'UNHEALTHY',
      'NOT_ALIVE',
      'REJECTED',
      'ERROR',
      'MANUAL',
      'UNKNOWN',
      'QUARANTINED',
      'SKIPPED',
      'ABORTED',
    ]);
    expect(rows[0]?.slice(4)).toEqual(METRIC_STATES.map((m) => m.toUpperCase()));
    expect(rows[1]).toEqual([
      'linux-fleet@19.470-4',
      'running',
      `${progressBar(124, 200)} 124/200`,
      '16/50',
      '60',
      '0',
      '6',
      '10',
      '0',
      '120',
      '3',
      '1',
      '0',
      '0',
      '0',
      '0',
      '0',
      '0',
      '0',
      '0',
      '0',
    ]);
    expect(rows[2]?.slice(0, 4)).toEqual([
      'windows@19.470-4',
      'converged',
      `${progressBar(10, 10)} 10/10`,
      '0/5',
    ]);
    expect(byColumn(table, 2)).toMatchObject({
      SUCCEEDED: '7',
      NOT_ALIVE: '1',
      REJECTED: '2',
      ERROR: '0',
      SKIPPED: '0',
    });
    // Aligned: every column starts at the same offset in every line.
    const lines = table.split('\n');
    const start = (line: string, text: string) => line.indexOf(text);
    expect(start(lines[1] as string, 'running')).toBe(start(lines[0] as string, 'PHASE'));
    expect(start(lines[2] as string, 'converged')).toBe(start(lines[0] as string, 'PHASE'));
    expect(lines.every((l) => l === l.trimEnd())).toBe(true);
  });

  it('shows waiting_retry and error in columns of their own, and a paused rollout’s reason', () => {
    const table = formatRolloutTable([
      status({
        id: 'linux-fleet@19.470-4',
        phase: 'paused',
        pauseReason: 'policy disabled',
        counts: { waiting_retry: 4, error: 2, succeeded: 3, reconciling: 1 },
        maxInFlight: 10,
      }),
    ]);
    expect(byColumn(table, 1)).toMatchObject({
      PHASE: 'paused (policy disabled)',
      'IN-FLIGHT': '1/10',
      WAITING_RETRY: '4',
      ERROR: '2',
      SUCCEEDED: '3',
      PENDING: '1',
      PROGRESS: `${progressBar(5, 10)} 5/10`,
    });
    const lines = table.split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]?.indexOf('paused (policy disabled)')).toBe(lines[0]?.indexOf('PHASE'));
  });

  it('shows each rollout’s own in-flight count, not its policy’s', () => {
    // The old rollout of a policy still follows tasks under way; the new one has its own.
    const table = formatRolloutTable([
      status({ id: 'linux-fleet@19.480-1', counts: { pending: 3, queued: 9 }, maxInFlight: 5 }),
      status({
        id: 'linux-fleet@19.470-4',
        phase: 'superseded',
        counts: { progressing: 2, skipped: 9, succeeded: 4 },
        maxInFlight: 5,
      }),
    ]);
    expect(byColumn(table, 1)['IN-FLIGHT']).toBe('3/5');
    expect(byColumn(table, 2)['IN-FLIGHT']).toBe('2/5');
    expect(byColumn(table, 2).PHASE).toBe('superseded');
  });

  it('shows an aborted rollout and its aborted Collectors in a column of their own', () => {
    const table = formatRolloutTable([
      status({
        id: 'linux-fleet@19.470-4',
        phase: 'aborted',
        abortReason: 'by ops@host',
        counts: { aborted: 40, succeeded: 8, failed: 2 },
        maxInFlight: 10,
      }),
    ]);
    expect(byColumn(table, 1)).toMatchObject({
      PHASE: 'aborted',
      ABORTED: '40',
      SUCCEEDED: '8',
      FAILED: '2',
      SKIPPED: '0',
      'IN-FLIGHT': '0/10',
      PROGRESS: `${progressBar(50, 50)} 50/50`,
    });
    expect(table.split('\n')).toHaveLength(2);
  });

  it('adds the reason of a halted rollout below the table', () => {
    const table = formatRolloutTable([
      status({
        id: 'linux-fleet@19.470-4',
        phase: 'halted',
        haltReason: '3 of 4 outcomes failed or timed out, above the gate’s 0.1',
        counts: { failed: 3, succeeded: 1 },
      }),
    ]);
    const lines = table.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe(
      'linux-fleet@19.470-4 halted: 3 of 4 outcomes failed or timed out, above the gate’s 0.1',
    );
    expect(cells(table)[1]?.[1]).toBe('halted');
  });
});

describe('formatStatus: what `status` prints, 80 columns, each wait in words', () => {
  /** 2026-06-05 14:00 UTC on the deployment's clock. */
  const NOW = Date.UTC(2026, 5, 5, 14, 0);
  const MIN = 60_000;
  const LONG = 'windows-servers-in-the-eu-datacenters@19.470-4';

  /** Rollouts of every kind a person meets, ids long and short. */
  function typical(): RolloutStatus[] {
    return [
      status({
        id: 'linux-fleet@19.470-4',
        wave: { index: 1, of: 4, waitingFor: 'bake', bakeUntil: NOW + 32 * MIN, seq: 3 },
        counts: { succeeded: 120, failed: 3, timed_out: 1, queued: 60, progressing: 10, waiting_retry: 3 },
      }),
      status({
        id: LONG,
        wave: { index: 1, of: 4, waitingFor: 'approval', seq: 3 },
        counts: { succeeded: 12, failed: 1, queued: 37 },
      }),
      status({
        id: 'db@19.470-4',
        phase: 'halted',
        haltReason: "in wave 1, timed_out: 1 Collectors, above the gate's max of 0",
        counts: { succeeded: 3, timed_out: 1, queued: 40 },
      }),
      status({
        id: 'web@19.470-4',
        phase: 'paused',
        pauseReason: 'by ops@host',
        pausedBy: 'ops@host',
        pausedAt: NOW - 60 * MIN,
        counts: { succeeded: 3, queued: 40, progressing: 2 },
      }),
      status({
        id: 'edge@19.470-4',
        phase: 'paused',
        pauseReason: 'policy disabled',
        counts: { queued: 40 },
      }),
      status({
        id: 'old@19.460-1',
        phase: 'aborted',
        abortReason: 'by ops@host: bad build',
        counts: { aborted: 40, succeeded: 2 },
      }),
      status({
        id: 'frozen@19.470-4',
        holding: 'change freeze until 2026-12-27 09:00 UTC (holidays)',
        counts: { queued: 40 },
      }),
      status({
        id: 'win@19.470-4',
        holding: 'maintenance window closed until 2026-06-05 22:00 Europe/Berlin',
        counts: { queued: 40, succeeded: 5 },
      }),
      status({ id: 'all@19.470-4', phase: 'converged', counts: { succeeded: 3 } }),
    ];
  }

  /** The text under a row, its wrapped lines joined again. */
  function noteOf(text: string, rowStart: string): string {
    const lines = text.split('\n');
    const at = lines.findIndex((l) => l.startsWith(rowStart));
    const note: string[] = [];
    for (const line of lines.slice(at + 1)) {
      if (!line.startsWith('  ')) break;
      note.push(line.trim());
    }
    return note.join(' ');
  }

  it('fits 80 columns: rollout, phase, a short bar with done/total, in-flight/limit, the non-zero states', () => {
    const text = formatStatus({ rollouts: typical(), now: NOW });
    const lines = text.split('\n');
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(80);
    expect(lines.every((l) => l === l.trimEnd())).toBe(true);
    expect(lines[0]).toMatch(/^ROLLOUT\s+PHASE\s+PROGRESS\s+IN-FLIGHT\s+STATES$/);
    expect(text).toMatch(
      /^linux-fleet@19\.470-4\s+running\s+\[#####\.\.\.\] 124\/197\s+10\/50\s+120 ok 3 failed$/m,
    );
    // What does not fit in STATES follows below the row (queued Collectors are the rest of the bar).
    expect(noteOf(text, 'linux-fleet@')).toMatch(/^also 1 timed_out 3 retrying wave 2 of 4/);
    expect(text).toMatch(/^all@19\.470-4\s+converged\s+\[########\] 3\/3\s+0\/50\s+3 ok$/m);
    expect(text).toMatch(/^old@19\.460-1\s+aborted\s+\[########\] 42\/42\s+0\/50\s+2 ok 40 aborted$/m);
    // Columns aligned.
    const phaseAt = (lines[0] as string).indexOf('PHASE');
    for (const row of lines.filter((l) => /^\S/.test(l)).slice(1)) expect(row[phaseAt - 1]).toBe(' ');
  });

  it('cuts a long id in its policy part, keeps the build, and gives the id whole below', () => {
    const text = formatStatus({ rollouts: typical(), now: NOW });
    const row = text.split('\n').find((l) => l.startsWith('windows-')) as string;
    expect(row.split(/\s{2,}/)[0]).toBe('windows-se…@19.470-4');
    expect(noteOf(text, 'windows-')).toContain(`\`fleet-upgrade promote ${LONG}\``);
    // A cut id without a note gets a line of its own.
    const quiet = formatStatus({
      rollouts: [
        status({ id: LONG, phase: 'converged', counts: { succeeded: 1 } }),
        typical()[0] as RolloutStatus,
      ],
      now: NOW,
    });
    expect(noteOf(quiet, 'windows-')).toBe(LONG);
    expect(shortId(LONG, 20)).toBe('windows-se…@19.470-4');
    expect(shortId('a-very-long-name-without-a-build', 12)).toBe('a-very-long…');
    expect(shortId('short@1', 20)).toBe('short@1');
  });

  it('explains every wait in words, with the command that ends it', () => {
    const text = formatStatus({ rollouts: typical(), now: NOW });
    expect(noteOf(text, 'linux-fleet@')).toContain(
      'wave 2 of 4 (124 of 197 done), baking until 14:32 UTC — `fleet-upgrade promote linux-fleet@19.470-4` ends it now',
    );
    expect(noteOf(text, 'windows-')).toBe(
      `wave 2 of 4 (13 of 50 done), awaiting approval for wave 3 — \`fleet-upgrade promote ${LONG}\` starts it`,
    );
    expect(noteOf(text, 'db@')).toBe(
      "halted: in wave 1, timed_out: 1 Collectors, above the gate's max of 0 — look at `fleet-upgrade report db@19.470-4`, then `resume` or `abort`",
    );
    expect(noteOf(text, 'web@')).toBe(
      'paused by ops@host at 13:00 UTC; 2 tasks under way are followed to their end — `fleet-upgrade resume web@19.470-4` lets it go on',
    );
    expect(noteOf(text, 'edge@')).toBe(
      'paused (policy disabled): set `enabled: true` in its policy file to go on, or `fleet-upgrade abort edge@19.470-4`',
    );
    expect(noteOf(text, 'old@')).toBe(
      'aborted (by ops@host: bad build); its policy starts no newer build until the policy changes or `fleet-upgrade resume old@19.460-1`',
    );
    expect(noteOf(text, 'frozen@')).toBe('change freeze until 2026-12-27 09:00 UTC (holidays)');
    expect(noteOf(text, 'win@')).toBe('maintenance window closed until 2026-06-05 22:00 Europe/Berlin');
    expect(noteOf(text, 'all@')).toBe('');
  });

  it('explains the rarer waits too', () => {
    const explain = (partial: Parameters<typeof status>[0]) => explainRollout(status(partial), NOW);
    expect(explain({ id: 'a@1', phase: 'paused', pauseReason: 'policy removed', counts: {} })).toBe(
      'paused (policy removed): put its policy file back to go on, or `fleet-upgrade forget a@1`',
    );
    expect(
      explain({ id: 'a@1', phase: 'aborted', abortReason: 'by ops@host', releasedAt: NOW - MIN, counts: {} }),
    ).toBe('aborted (by ops@host); its policy was released at 13:59 UTC: a newer build starts a new rollout');
    expect(explain({ id: 'a@1', phase: 'superseded', counts: { progressing: 2, skipped: 3 } })).toBe(
      'superseded by a newer build; 2 tasks under way are followed to their end',
    );
    expect(explain({ id: 'a@1', phase: 'superseded', counts: { skipped: 3 } })).toBeUndefined();
    // A wave in progress; a bake that has ended; a bake that ends another day; every wave opened.
    expect(explain({ id: 'a@1', wave: { index: 0, of: 3, seq: 1 }, counts: { queued: 40 } })).toBe(
      'wave 1 of 3 (0 of 40 done)',
    );
    expect(
      explain({
        id: 'a@1',
        wave: { index: 0, of: 3, waitingFor: 'bake', bakeUntil: NOW - MIN, seq: 1 },
        counts: {},
      }),
    ).toBe(
      "wave 1 of 3 (0 of 0 done), baked until 13:59 UTC: the next wave opens at the scheduler's next tick",
    );
    expect(
      explain({
        id: 'a@1',
        wave: { index: 0, of: 2, waitingFor: 'bake', bakeUntil: NOW + 24 * 60 * MIN, seq: 1 },
        counts: {},
      }),
    ).toContain('baking until 2026-06-06 14:00 UTC');
    expect(explain({ id: 'a@1', wave: { index: 1, of: 3, full: true, seq: 1 }, counts: {} })).toBe(
      'wave 2 of 3 (0 of 0 done), every remaining wave open (`promote --full`)',
    );
    // A hold after the wave reads as its own clause; a schedule that has not started.
    expect(
      explain({
        id: 'a@1',
        wave: { index: 0, of: 2, seq: 1 },
        holding: 'schedule starts 2026-06-06 08:00 UTC',
        counts: { queued: 4 },
      }),
    ).toBe('wave 1 of 2 (0 of 4 done); schedule starts 2026-06-06 08:00 UTC');
    expect(explain({ id: 'a@1', phase: 'halted', counts: {} })).toMatch(/^halted: by its failure gate — /);
  });

  it('says what goes on beside the phase: analysis, verification, quarantines, rollbacks', () => {
    const explain = (partial: Parameters<typeof status>[0]) => explainRollout(status(partial), NOW);
    expect(
      explain({
        id: 'a@1',
        wave: { index: 0, of: 2, seq: 1, waitingFor: 'analysis' },
        analysisVerdict: 'running: failure-share: 2 of 5 measured',
        counts: { succeeded: 4, queued: 6 },
      }),
    ).toBe(
      'wave 1 of 2 (4 of 10 done), analysing wave 1 before the next (running: failure-share: 2 of 5 measured) — `fleet-upgrade promote a@1` skips it',
    );
    expect(explain({ id: 'a@1', counts: { verifying: 3, succeeded: 2 } })).toBe(
      '3 upgraded, verifying they stay alive on the build',
    );
    expect(
      explain({
        id: 'a@1',
        phase: 'converged',
        quarantined: [{ cohort: 'osName=Mac OS X', reason: '2 of 5 upgrades failed', at: NOW, held: 7 }],
        counts: { succeeded: 40, failed: 2, quarantined: 7 },
      }),
    ).toBe(
      'quarantined: cohort osName=Mac OS X (7 held) — `fleet-upgrade retry a@1 --only quarantined` releases',
    );
    // `retry` refuses a superseded rollout (exit 3): its status does not suggest it.
    expect(
      explain({
        id: 'a@1',
        phase: 'superseded',
        quarantined: [{ cohort: 'osName=Mac OS X', reason: '2 of 5 upgrades failed', at: NOW, held: 7 }],
        counts: { succeeded: 40, failed: 2, quarantined: 7 },
      }),
    ).toBe(
      "quarantined: cohort osName=Mac OS X (7 held), never released: the rollout is superseded, the newer build's rollout decides them",
    );
    expect(
      explain({
        id: 'a@1',
        phase: 'converged',
        rollbacks: [
          {
            request: 'r',
            policy: 'rollback-x',
            build: '19.400-5',
            collectors: 2,
            state: 'started',
            at: NOW,
            by: 'ops',
            reason: 'r',
          },
          {
            request: 'r',
            build: '19.300-1',
            collectors: 3,
            ids: [1, 2, 3],
            state: 'unavailable',
            at: NOW,
            by: 'ops',
            reason: 'r',
          },
        ],
        counts: { succeeded: 40 },
      }),
    ).toBe(
      'rolled back: 2 to 19.400-5 (rollback-x); not rolled back: 3 on 19.300-1, no longer offered — see `fleet-upgrade report a@1`',
    );
    expect(
      explain({ id: 'rollback-x@19.400-5', rollbackOf: 'a@1', phase: 'converged', counts: { succeeded: 2 } }),
    ).toBe('rolls Collectors of a@1 back');
  });

  it('says first that nothing moves when no daemon leads, and only then', () => {
    const away = formatStatus({ rollouts: typical().slice(0, 1), now: NOW, daemonRunning: false });
    expect(away.split('\n').slice(0, 2).join(' ')).toBe(NO_DAEMON);
    expect(formatStatus({ rollouts: typical().slice(0, 1), now: NOW, daemonRunning: true })).not.toContain(
      'No daemon',
    );
    expect(formatStatus({ rollouts: [], now: NOW, daemonRunning: false })).toBe('no rollouts');
  });

  it('shows text from outside on one line, without control characters', () => {
    const text = formatStatus({
      rollouts: [
        status({
          id: 'evil@1.0\u001b[31m',
          phase: 'aborted',
          abortReason: 'by ops@host: line one\nline two \u001b]0;title\u0007',
          counts: { aborted: 1 },
        }),
      ],
      now: NOW,
    });
    expect([...text].filter((ch) => ch !== '\n' && (ch < ' ' || (ch >= '\u007f' && ch <= '\u009f')))).toEqual(
      [],
    );
    expect(text).toContain('evil@1.0?[31m');
    expect(noteOf(text, 'evil@')).toContain('(by ops@host: line one line two ?]0;title?)');
  });

  it('--wide: today’s full table, a column per state, each explanation below with its id', () => {
    const rollouts = typical();
    const wide = formatStatus({ rollouts, now: NOW, daemonRunning: true }, { wide: true });
    const table = formatRolloutTable(rollouts, () => undefined);
    expect(wide.startsWith(table)).toBe(true);
    expect(cells(wide)[0]).toContain('WAITING_RETRY');
    expect(byColumn(wide, 1)).toMatchObject({
      ROLLOUT: 'linux-fleet@19.470-4',
      TIMED_OUT: '1',
      WAITING_RETRY: '3',
    });
    expect(wide).toContain(`\n${LONG}: wave 2 of 4 (13 of 50 done), awaiting approval for wave 3 — `);
    expect(wide).toContain(
      "\ndb@19.470-4: halted: in wave 1, timed_out: 1 Collectors, above the gate's max of 0 — look at",
    );
    expect(wide).toContain('\nedge@19.470-4: paused (policy disabled): ');
  });
});

describe('pieces of the narrow table', () => {
  it('wrapText breaks at spaces, never inside a command in backticks', () => {
    const lines = wrapText('a b c `fleet-upgrade promote some-rollout@1.0` ends it now', 24);
    expect(lines).toEqual(['  a b c', '    `fleet-upgrade promote some-rollout@1.0`', '    ends it now']);
  });

  it('fitParts keeps whole parts and returns the rest', () => {
    expect(fitParts(['12 ok', '1 failed', '3 retrying'], 15)).toEqual({
      text: '12 ok 1 failed',
      rest: ['3 retrying'],
    });
    expect(fitParts(['12 ok'], 20)).toEqual({ text: '12 ok', rest: [] });
  });

  it('stateSummary names the non-zero states, failures before retries, queued last', () => {
    expect(stateSummary({ queued: 4, waiting_retry: 3, succeeded: 12, failed: 1, progressing: 2 })).toEqual([
      '12 ok',
      '1 failed',
      '3 retrying',
      '4 queued',
    ]);
  });

  it('stateSummary shows every state but the in-flight ones (which have their own column)', () => {
    const shown = STATE_LABELS.map(([s]) => s);
    expect(METRIC_STATES.filter((s) => !shown.includes(s))).toEqual(['pending', 'progressing']);
    expect(stateSummary({ succeeded: 3, verifying: 2, unhealthy: 1, manual: 4, quarantined: 5 })).toEqual([
      '3 ok',
      '2 verifying',
      '1 unhealthy',
      '4 worklist',
      '5 quarantined',
    ]);
  });

  it('shortProgress is a bar of 8 cells with done/total', () => {
    expect(shortProgress(0, 0)).toBe('[########] 0/0');
    expect(shortProgress(1, 4)).toBe('[##......] 1/4');
  });

  it('formatWhen leaves out the date of today', () => {
    const now = Date.UTC(2026, 5, 5, 14, 0);
    expect(formatWhen(Date.UTC(2026, 5, 5, 14, 32), now)).toBe('14:32 UTC');
    expect(formatWhen(Date.UTC(2026, 5, 6, 0, 5), now)).toBe('2026-06-06 00:05 UTC');
  });
});

describe('issue #26: what a wave waits for, and a count kept with its state', () => {
  const NOW = Date.UTC(2026, 5, 5, 14, 0);
  const MIN = 60_000;
  it('a running rollout with only Collectors to try again says how many and when the next try is', () => {
    const r = {
      ...status({
        id: 'web@19.470-4',
        wave: { index: 0, of: 2, seq: 1 },
        counts: { succeeded: 16, waiting_retry: 2 },
      }),
      nextRetryAt: NOW + 12 * MIN,
    };
    expect(explainRollout(r, NOW)).toBe(
      `wave 1 of 2 (16 of 18 done), waiting for 2 retrying (offline, or a task refused), next try at ${formatWhen(NOW + 12 * MIN, NOW)}`,
    );
    // While others are queued or under way, the wave waits on those: nothing more is said.
    const busy = status({ id: 'web@19.470-4', counts: { succeeded: 16, waiting_retry: 2, queued: 3 } });
    expect(explainRollout(busy, NOW) ?? '').not.toMatch(/retrying/);
  });

  it('partLines never puts a count on one line and its state on the next', () => {
    const parts = ['also', '3 failed', '17 quarantined', '12 not_alive', '8 timed_out', '6 worklist'];
    const lines = partLines(parts, 30);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(30);
    expect(lines.join(' ').replace(/\s+/g, ' ').trim()).toBe(parts.join(' '));
    for (const line of lines) expect(line.trim()).toMatch(/^(also|\d+ [a-z_]+)( \d+ [a-z_]+)*$/);
  });
});

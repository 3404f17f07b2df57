/**
 * The status table: one row per rollout with its phase as a person reads it, progress, its own
 * in-flight count against the limit and a column per dashboard state (METRIC_STATES, internal
 * states folded in with metricState), halt reasons below. Rows are built the way `status`
 * builds them (rolloutStatus of read-fleet-status.ts).
 */
import { describe, expect, it } from 'vitest';
import { countsByMetricState, formatRolloutTable, progressBar } from '../../../src/cli/format-status.js';
import { METRIC_STATES } from '../../../src/metrics/create-metrics.js';
import type { StateCounts } from '../../../src/rollout/collector-state.js';
import { type RolloutStatus, rolloutStatus } from '../../../src/rollout/read-fleet-status.js';
import type { RolloutRecord } from '../../../src/rollout/rollout-store.js';

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
    });
    expect(Object.values(out).reduce((a, b) => a + b, 0)).toBe(45);
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
      'SUCCEEDED',
      'FAILED',
      'TIMED_OUT',
      'NOT_ALIVE',
      'REJECTED',
      'ERROR',
      'SKIPPED',
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
      '120',
      '3',
      '1',
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

/**
 * The status table: one row per rollout with phase, progress, in-flight against the limit and a
 * column per dashboard state (internal states folded in with metricState), halt reasons below.
 */
import { describe, expect, it } from 'vitest';
import { countsByMetricState, formatRolloutTable, progressBar } from '../../../src/cli/format-status.js';
import { METRIC_STATES } from '../../../src/metrics/create-metrics.js';
import type { RolloutStatus } from '../../../src/rollout/read-fleet-status.js';

function status(partial: Partial<RolloutStatus> & Pick<RolloutStatus, 'id' | 'counts'>): RolloutStatus {
  const total = Object.values(partial.counts).reduce((a, b) => a + b, 0);
  return {
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
    },
    statusReads: 0,
    createRequests: 0,
    scans: 1,
    inflight: 0,
    total,
    done: 0,
    ...partial,
  };
}

/** The table's rows as cells, cut at the offsets where the header's columns start. */
function cells(table: string): string[][] {
  const [header = '', ...rest] = table.split('\n');
  const starts = [...header.matchAll(/\S+/g)].map((m) => m.index);
  const cut = (line: string) =>
    starts.map((start, i) => line.slice(start, starts[i + 1] ?? line.length).trim());
  return [header, ...rest].map(cut);
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
      waiting_alive: 7,
      succeeded: 8,
    });
    expect(Object.keys(out).sort()).toEqual([...METRIC_STATES].sort());
    expect(out).toMatchObject({
      queued: 3,
      pending: 12,
      progressing: 6,
      waiting_alive: 7,
      succeeded: 8,
      failed: 0,
      skipped: 0,
    });
    expect(Object.values(out).reduce((a, b) => a + b, 0)).toBe(36);
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
        done: 124,
        inflight: 16,
        maxInFlight: 50,
      }),
      status({
        id: 'windows@19.470-4',
        phase: 'converged',
        counts: { succeeded: 7, not_alive: 1, rejected: 2, skipped: 0 },
        done: 10,
        inflight: 0,
        maxInFlight: 5,
      }),
    ]);
    const rows = cells(table);
    expect(rows[0]).toEqual([
      'ROLLOUT',
      'PHASE',
      'PROGRESS',
      'IN-FLIGHT',
      'SUCCEEDED',
      'FAILED',
      'TIMED_OUT',
      'NOT_ALIVE',
      'REJECTED',
      'SKIPPED',
      'QUEUED',
      'WAITING_ALIVE',
      'PENDING',
      'PROGRESSING',
    ]);
    expect(rows[1]).toEqual([
      'linux-fleet@19.470-4',
      'running',
      `${progressBar(124, 200)} 124/200`,
      '16/50',
      '120',
      '3',
      '1',
      '0',
      '0',
      '0',
      '64',
      '0',
      '2',
      '10',
    ]);
    expect(rows[2]?.slice(0, 4)).toEqual([
      'windows@19.470-4',
      'converged',
      `${progressBar(10, 10)} 10/10`,
      '0/5',
    ]);
    expect(rows[2]?.slice(4, 10)).toEqual(['7', '0', '0', '1', '2', '0']);
    // Aligned: every column starts at the same offset in every line.
    const lines = table.split('\n');
    const start = (line: string, text: string) => line.indexOf(text);
    expect(start(lines[1] as string, 'running')).toBe(start(lines[0] as string, 'PHASE'));
    expect(start(lines[2] as string, 'converged')).toBe(start(lines[0] as string, 'PHASE'));
    expect(lines.every((l) => l === l.trimEnd())).toBe(true);
  });

  it('adds the reason of a halted rollout below the table', () => {
    const table = formatRolloutTable([
      status({
        id: 'linux-fleet@19.470-4',
        phase: 'halted',
        haltReason: '3 of 4 outcomes failed or timed out, above the gate’s 0.1',
        counts: { failed: 3, succeeded: 1 },
        done: 4,
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

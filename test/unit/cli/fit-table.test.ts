import { describe, expect, it } from 'vitest';
import { cut, fitTable } from '../../../src/cli/render/fit-table.js';
import { formatReport } from '../../../src/cli/render/format-report.js';
import type { CollectorRecord } from '../../../src/rollout/index.js';

describe('fitTable', () => {
  const columns = [{ title: 'ID' }, { title: 'NAME', shrink: true, min: 6 }, { title: 'HOST', shrink: true }];
  const rows = [['100000001', 'a-very-long-collector-name-indeed', 'host-with-a-long-name.example.com']];

  it('keeps every cell whole when it fits, or without a width', () => {
    expect(fitTable(columns, rows, undefined)[1]).toBe(
      '100000001  a-very-long-collector-name-indeed  host-with-a-long-name.example.com',
    );
    expect(fitTable(columns, [['1', 'a', 'b']], 80)).toEqual(['ID  NAME  HOST', '1   a     b']);
  });

  it('cuts the shrinkable columns, the widest first, never an id', () => {
    const lines = fitTable(columns, rows, 40);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(40);
    expect(lines[1]).toMatch(/^100000001 {2}a-very-long-\S*… {2}host-with-\S*…$/);
  });

  it('stops at the minimum widths (a line may then stay wider than asked)', () => {
    const lines = fitTable(columns, rows, 10);
    expect(lines[1]).toBe('100000001  a-ver…  hos…');
    expect(cut('abcdef', 4)).toBe('abc…');
    expect(cut('abc', 4)).toBe('abc');
  });
});

describe('formatReport', () => {
  const T = Date.UTC(2026, 10, 26, 4, 5, 6, 789);
  const record = (id: number, patch: Partial<CollectorRecord> = {}) =>
    ({
      id,
      name: `collector-${id}`,
      hostName: `host-${id}`,
      from: '19.400-5',
      to: '19.470-4',
      state: 'succeeded',
      attempts: 1,
      finishedAt: T,
      ...patch,
    }) as CollectorRecord;

  it('a table within 80 columns: ISO 8601 times, the message whole below its row, the target once above', () => {
    const text = formatReport({
      rollout: { id: 'web@19.470-4', phase: 'converged' },
      records: [record(1), record(2, { state: 'failed', message: `Upgrade failed: ${'disk '.repeat(30)}` })],
      timeScale: 120,
    });
    const lines = text.split('\n');
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    expect(text.replace(/\s+/g, ' ')).toContain(
      'web@19.470-4 (converged): 2 Collectors in the rollout to 19.470-4; times in UTC (ISO 8601) on the simulated clock, ×120.',
    );
    expect(text).toMatch(/^1 +collector-1 +19\.400-5 +succeeded +2026-11-26T04:05:06Z$/m);
    expect(text).toMatch(
      /^2 +collector-2 +19\.400-5 +failed +2026-11-26T04:05:06Z\n {4}Upgrade failed: disk/m,
    );
    expect(text).not.toMatch(/\b1\d{12}\b/);
  });

  it('--wide: every column, nothing cut; one Collector is one', () => {
    const text = formatReport(
      { rollout: { id: 'web@19.470-4', phase: 'running' }, records: [record(1, { cohort: 'osName=Linux' })] },
      { wide: true },
    );
    expect(text).toContain('1 Collector in the rollout;');
    expect(text).toMatch(
      /^ID +NAME +HOST +FROM +TO +STATE +TASK +ATTEMPTS +FINISHED +CLASS +MESSAGE +COHORT$/m,
    );
    expect(text).toMatch(/osName=Linux$/m);
  });
});

/**
 * `history`'s lines: an event about one organization names it in a column of its own; a history
 * with no such event prints as before (no column).
 */
import { describe, expect, it } from 'vitest';
import { eventOrg, formatHistory, oneTimeFormat } from '../../../src/cli/render/format-history.js';
import type { RecordedEvent } from '../../../src/rollout/index.js';

const AT = Date.UTC(2026, 10, 25, 10, 2);

function event(fields: Partial<RecordedEvent>): RecordedEvent {
  return {
    id: 'e1',
    type: 'rollout.started',
    rollout: 'web@19.470-4',
    policy: 'web',
    build: '19.470-4',
    at: AT,
    source: 'scheduler',
    message: 'web@19.470-4 started: web to 19.470-4',
    ...fields,
  };
}

describe('formatHistory', () => {
  it('--wide, without events about an organization: time, type, who, what on one line', () => {
    expect(formatHistory([event({})], { wide: true })).toBe(
      `2026-11-25T10:02:00Z  ${'rollout.started'.padEnd(25)}  ${'scheduler'.padEnd(20)}  web@19.470-4 started: web to 19.470-4`,
    );
  });

  it('--wide names the organization of the events that have one, in a column of its own', () => {
    const lines = formatHistory(
      [
        event({}),
        event({
          type: 'org.waiting',
          message: 'web@19.470-4: org emea waits: credentials refused (401)',
          detail: { org: 'emea', reason: 'credentials refused (401)', since: AT },
        }),
        event({
          type: 'rollout.paused',
          source: 'operator',
          actor: 'ops@host',
          message: 'web@19.470-4: org us paused by ops@host',
          detail: { org: 'us' },
        }),
      ],
      { wide: true },
    ).split('\n');
    // After time (20), type (25) and who (20), each followed by two spaces: the organization.
    const start = 20 + 2 + 25 + 2 + 20 + 2;
    const column = (line: string) => line.slice(start, start + 8);
    expect(lines.map(column)).toEqual(['        ', 'org emea', 'org us  ']);
    expect(lines[1]).toMatch(/ {2}org emea {2}web@19\.470-4: org emea waits/);
  });

  it('within 80 columns: when, type, who and organization on a line, what below it, wrapped', () => {
    const long = `web@19.470-4 halted: ${'failure share above the limit '.repeat(6)}`.trim();
    const text = formatHistory([
      event({}),
      event({ type: 'rollout.halted', source: 'gate', message: long, detail: { org: 'emea' } }),
    ]);
    const lines = text.split('\n');
    expect(lines.slice(0, 2)).toEqual([
      '2026-11-25T10:02:00Z  rollout.started  scheduler',
      '  web@19.470-4 started: web to 19.470-4',
    ]);
    expect(lines[2]).toBe('2026-11-25T10:02:00Z  rollout.halted  gate  org emea');
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    expect(lines.slice(3).join(' ').replace(/\s+/g, ' ').trim()).toBe(long);
  });

  it('eventOrg reads the detail’s org, and only text', () => {
    expect(eventOrg({ detail: { org: 'eu' } })).toBe('eu');
    expect(eventOrg({ detail: { org: 3 } })).toBeUndefined();
    expect(eventOrg({})).toBeUndefined();
  });

  it("shows every time one way, the sentences' too: ISO 8601 in UTC, to the second (issue #26)", () => {
    expect(
      oneTimeFormat('soaks in canary until 2026-11-29 00:50 (UTC); since 2026-11-29T01:40:36.706Z'),
    ).toBe('soaks in canary until 2026-11-29T00:50:00Z; since 2026-11-29T01:40:36Z');
    expect(oneTimeFormat('at 2026-11-29 00:50:12 (UTC)')).toBe('at 2026-11-29T00:50:12Z');
    const text = formatHistory([event({ message: 'web@19.470-4: baking until 2026-11-25T10:32:00.000Z' })]);
    expect(text).toBe(
      '2026-11-25T10:02:00Z  rollout.started  scheduler\n  web@19.470-4: baking until 2026-11-25T10:32:00Z',
    );
  });
});

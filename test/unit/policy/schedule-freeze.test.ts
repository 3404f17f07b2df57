import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadPolicies } from '../../../src/policy/load/load-policies.js';
import { Policy } from '../../../src/policy/schema.js';
import { configErrorMessage } from '../../support/config-error.js';
import { usePolicyDir, yaml } from '../../support/policy-dir.js';

const dir = usePolicyDir();

const at = (iso: string) => Date.parse(iso);

function load(...lines: string[]): Policy {
  const file = dir.write('p.yaml', yaml('name: a', ...lines));
  return loadPolicies({ files: [file] })[0]?.policy as Policy;
}

/** Loads the lines (after `name: a`) as p.yaml and returns the error message. */
function errorOf(...lines: string[]): string {
  return configErrorMessage(dir.write('p.yaml', yaml('name: a', ...lines)), (file) =>
    loadPolicies({ files: [file] }),
  );
}

describe('schedule', () => {
  it('is absent by default, and freeze is empty', () => {
    const policy = load();
    expect(policy.schedule).toBeUndefined();
    expect(policy.freeze).toEqual([]);
  });

  it('reads instants with offsets, unquoted in YAML, and defaults endBehavior to stop', () => {
    const policy = load('schedule:', '  start: 2026-12-20T18:00:00+01:00', '  end: 2026-12-31T23:00:00Z');
    expect(policy.schedule).toEqual({
      start: at('2026-12-20T17:00:00Z'),
      end: at('2026-12-31T23:00:00Z'),
      endBehavior: 'stop',
    });
  });

  it('reads local date-times in its timeZone and keeps the zone for display', () => {
    const policy = load(
      'schedule: { start: "2026-12-20 18:00", endBehavior: abort, timeZone: Europe/Berlin }',
    );
    expect(policy.schedule).toEqual({
      start: at('2026-12-20T17:00:00Z'),
      endBehavior: 'abort',
      timeZone: 'Europe/Berlin',
    });
  });

  it('takes only an end', () => {
    expect(load('schedule: { end: 2027-01-01T00:00Z }').schedule).toEqual({
      end: at('2027-01-01T00:00:00Z'),
      endBehavior: 'stop',
    });
  });
});

describe('docs/policy.md "Schedules and freezes"', () => {
  it('its example is a valid policy and means what the text says', () => {
    const doc = readFileSync('docs/policy.md', 'utf8');
    expect(doc).toContain('\n## Schedules and freezes\n');
    const section = doc.slice(doc.indexOf('\n## Schedules and freezes\n'));
    const example = /```yaml\n([\s\S]*?)```/.exec(section)?.[1] as string;
    const policy = load(...example.trimEnd().split('\n'));
    expect(policy.schedule).toEqual({
      start: at('2026-12-01T07:00:00Z'),
      end: at('2026-12-18T17:00:00Z'),
      endBehavior: 'stop',
      timeZone: 'Europe/Berlin',
    });
    expect(policy.freeze.map((f) => f.reason)).toEqual(['year-end', 'board meeting']);
    expect(policy.freeze[0]?.end).toBe(at('2027-01-04T08:00:00Z'));
  });
});

describe('freeze', () => {
  it('reads a list of periods, and a single period as a list', () => {
    const policy = load(
      'freeze:',
      '  - { start: "2026-12-20 18:00", end: "2027-01-04 09:00", timeZone: Europe/Berlin, reason: year-end }',
      '  - { start: 2027-03-01T00:00Z, end: 2027-03-02T00:00Z }',
    );
    expect(policy.freeze).toEqual([
      {
        start: at('2026-12-20T17:00:00Z'),
        end: at('2027-01-04T08:00:00Z'),
        reason: 'year-end',
        timeZone: 'Europe/Berlin',
      },
      { start: at('2027-03-01T00:00:00Z'), end: at('2027-03-02T00:00:00Z') },
    ]);
    expect(load('freeze: { start: 2027-03-01T00:00Z, end: 2027-03-02T00:00Z }').freeze).toHaveLength(1);
  });

  it('takes 100 periods and refuses 101', () => {
    const period = (i: number) =>
      `  - { start: 2027-01-01T00:00Z, end: 2027-01-01T${String(Math.floor(i / 60) + 1).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z }`;
    const hundred = Array.from({ length: 100 }, (_, i) => period(i));
    expect(load('freeze:', ...hundred).freeze).toHaveLength(100);
    expect(errorOf('freeze:', ...hundred, period(100))).toBe(
      'p.yaml:2:1: freeze: at most 100 freeze periods (merge adjacent ones)',
    );
  });
});

describe('maxInFlight', () => {
  it('keeps a count in maxInFlight', () => {
    const policy = load('maxInFlight: 20');
    expect(policy.maxInFlight).toBe(20);
    expect(policy.maxInFlightPercent).toBeUndefined();
    expect(load().maxInFlight).toBe(50);
  });

  it('holds a percentage in maxInFlightPercent, with a floor of 1 in maxInFlight', () => {
    const policy = load('maxInFlight: "10%"');
    expect(policy.maxInFlightPercent).toBe(10);
    expect(policy.maxInFlight).toBe(1);
    expect(load('maxInFlight: 2.5%').maxInFlightPercent).toBe(2.5);
  });

  it('is usable from code (Policy.parse)', () => {
    expect(Policy.parse({ name: 'x', maxInFlight: '100%' })).toMatchObject({
      maxInFlight: 1,
      maxInFlightPercent: 100,
    });
  });
});

describe('errors name file, line, column, field and reason', () => {
  const cases: [string, string[], string][] = [
    [
      'no offset, no zone',
      ['schedule:', '  start: "2026-12-20 18:00"'],
      'p.yaml:3:3: schedule.start: "2026-12-20 18:00" has no offset and no timeZone is set',
    ],
    [
      'date only',
      ['schedule:', '  end: 2026-12-20'],
      'p.yaml:3:3: schedule.end: "2026-12-20" has no time of day',
    ],
    [
      'end before start',
      ['schedule:', '  start: 2026-12-20T18:00Z', '  end: 2026-12-20T17:00Z'],
      'p.yaml:4:3: schedule.end: must be after start (2026-12-20 17:00 UTC is not after 2026-12-20 18:00 UTC)',
    ],
    [
      'end equal to start, shown in the zone',
      ['schedule: { start: "2026-12-20 18:00", end: 2026-12-20T17:00Z, timeZone: Europe/Berlin }'],
      'p.yaml:2:40: schedule.end: must be after start (2026-12-20 18:00 Europe/Berlin is not after 2026-12-20 18:00 Europe/Berlin)',
    ],
    ['empty schedule', ['schedule: {}'], 'p.yaml:2:1: schedule: give start, end or both'],
    [
      'endBehavior',
      ['schedule:', '  end: 2026-12-20T17:00Z', '  endBehavior: halt'],
      'p.yaml:4:3: schedule.endBehavior: expected stop or abort',
    ],
    [
      'unknown zone',
      ['schedule:', '  start: "2026-12-20 18:00"', '  timeZone: Europe/Bärlin'],
      'p.yaml:4:3: schedule.timeZone: unknown time zone "Europe/Bärlin"',
    ],
    [
      'collector zone',
      ['schedule: { end: "2026-12-20 18:00", timeZone: collector }'],
      'schedule.timeZone: unknown time zone "collector"',
    ],
    [
      'misspelt field',
      ['schedule:', '  ends: 2026-12-20T17:00Z'],
      'p.yaml:3:3: schedule.ends: unknown field (did you mean "end"?)',
    ],
    [
      'year',
      ['schedule:', '  start: 2206-12-20T17:00Z'],
      'p.yaml:3:3: schedule.start: the year must be between 2000 and 2100',
    ],
    [
      'DST gap',
      [
        'freeze:',
        '  - start: "2026-03-29 02:30"',
        '    end: "2026-03-30 00:00"',
        '    timeZone: Europe/Berlin',
      ],
      'p.yaml:3:5: freeze[0].start: "2026-03-29 02:30" does not exist in Europe/Berlin',
    ],
    [
      'DST overlap',
      [
        'freeze:',
        '  - start: "2026-10-24 00:00"',
        '    end: "2026-10-25 02:30"',
        '    timeZone: Europe/Berlin',
      ],
      'p.yaml:4:5: freeze[0].end: "2026-10-25 02:30" occurs twice in Europe/Berlin',
    ],
    [
      'freeze missing end',
      ['freeze:', '  - start: 2026-12-20T17:00Z'],
      'p.yaml:3:5: freeze[0].end: required field is missing',
    ],
    [
      'freeze order, single period',
      ['freeze:', '  start: 2026-12-21T00:00Z', '  end: 2026-12-20T00:00Z'],
      'p.yaml:4:3: freeze.end: must be after start',
    ],
    [
      'freeze reason',
      ['freeze:', '  - { start: 2026-12-20T17:00Z, end: 2026-12-21T17:00Z, reason: "" }'],
      'freeze[0].reason: must not be empty',
    ],
    [
      'freeze not a period',
      ['freeze: soon'],
      'p.yaml:2:1: freeze: expected a freeze period: { start, end, reason, timeZone }',
    ],
    [
      'maxInFlight percent too high',
      ['maxInFlight: "150%"'],
      'p.yaml:2:1: maxInFlight: a percentage must be above 0% and at most 100%, got "150%"',
    ],
    [
      'maxInFlight zero percent',
      ['maxInFlight: 0%'],
      'p.yaml:2:1: maxInFlight: a percentage must be above 0%',
    ],
    [
      'maxInFlight quoted number',
      ['maxInFlight: "20"'],
      'p.yaml:2:1: maxInFlight: expected a number of Collectors (e.g. 50) or a percentage of the selected ones (e.g. "10%"), got the text "20": write 20 without quotes, or "20%"',
    ],
    ['maxInFlight fraction', ['maxInFlight: 2.5'], 'p.yaml:2:1: maxInFlight: must be a whole number'],
    ['maxInFlight huge', ['maxInFlight: 100001'], 'p.yaml:2:1: maxInFlight: must be at most 100000'],
    [
      'schedule not an object',
      ['schedule: tomorrow'],
      'p.yaml:2:1: schedule: expected a schedule: { start, end',
    ],
    ['maxInFlight list', ['maxInFlight: [1]'], 'p.yaml:2:1: maxInFlight: expected a number of Collectors'],
  ];
  it.each(cases)('%s', (_label, lines, expected) => {
    expect(errorOf(...lines)).toContain(expected);
  });
});

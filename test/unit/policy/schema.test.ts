import { describe, expect, it } from 'vitest';
import { loadPolicies } from '../../../src/policy/load/load-policies.js';
import { Policy } from '../../../src/policy/schema.js';
import { configErrorMessage } from '../../support/config-error.js';
import { usePolicyDir, yaml } from '../../support/policy-dir.js';

const dir = usePolicyDir();

/** Loads `text` as p.yaml and returns the error message, failing when the file is valid. */
function errorOf(text: string): string {
  return configErrorMessage(dir.write('p.yaml', text), (file) => loadPolicies({ files: [file] }));
}

describe('Policy defaults', () => {
  it('fills every default for a policy that gives only its name', () => {
    const file = dir.write('minimal.yaml', yaml('name: minimal'));
    const [loaded] = loadPolicies({ files: [file] });
    expect(loaded?.file).toBe(file);
    expect(loaded?.policy).toEqual({
      name: 'minimal',
      enabled: true,
      target: 'latest',
      allowDowngrade: false,
      orgs: ['*'],
      select: [{}],
      exclude: [],
      maxInFlight: 50,
      waves: [{ size: { kind: 'percent', percent: 100 } }],
      windows: [],
      freeze: [],
      retry: {
        notAlive: { attempts: 5, backoff: 600_000 },
        errors: { attempts: 3, backoff: 60_000 },
        transient: { attempts: 20, backoff: 30_000 },
      },
      poll: { initial: 60_000, max: 300_000, jitter: 0.2 },
      taskTimeout: 35 * 60_000,
      verify: {
        enabled: true,
        within: 600_000,
        bake: 300_000,
        interval: 60_000,
        healthEvents: { enabled: true, severities: ['Error'], ignore: [] },
      },
      failureCauses: {
        patterns: [],
        actions: {
          network: { action: 'retry', attempts: 3, backoff: 600_000 },
          disk_space: { action: 'manual' },
          upgrades_disabled: { action: 'manual' },
          permission: { action: 'manual' },
          unknown: { action: 'fail' },
        },
      },
      api: { requestsPerSecond: 4, maxConcurrent: 10 },
      pageSize: 1000,
    });
    expect(loaded?.policy.failureGate).toBeUndefined();
    expect(loaded?.policy.schedule).toBeUndefined();
  });

  it('gives the same defaults from code: one wave of 100%, no failure gate', () => {
    const policy = Policy.parse({ name: 'minimal' });
    expect(policy.waves).toEqual([{ size: { kind: 'percent', percent: 100 } }]);
    expect(policy.failureGate).toBeUndefined();
    const file = dir.write('minimal.yaml', yaml('name: minimal'));
    expect(loadPolicies({ files: [file] })[0]?.policy).toEqual(policy);
  });

  it('reads the example of the issue, durations in milliseconds and single values as lists', () => {
    const file = dir.write(
      'linux.yaml',
      yaml(
        'name: linux-fleet',
        'target: 19.470-4',
        'select: { osName: Linux, hostName: ["web-*"], versions: { from: 19.400-5, to: 19.470-4 } }',
        'exclude: { ids: [42] }',
        'maxInFlight: 20',
        'retry: { notAlive: { attempts: 3, backoff: 1h30m } }',
        'poll: { initial: 90s, max: 2m, jitter: 0 }',
        'taskTimeout: 40m',
        'api: { requestsPerSecond: 2.5, maxConcurrent: 4 }',
        'pageSize: 200',
        'waves: [5, "10%", "100%"]',
        'failureGate: { maxFailureRatio: 0.1 }',
        'windows: [{ days: [Saturday, sun], start: "22:00", end: "06:00", timeZone: Europe/Berlin }]',
      ),
    );
    const policy = loadPolicies({ files: [file] })[0]?.policy as Policy;
    expect(policy.target).toBe('19.470-4');
    expect(policy.select).toEqual([
      { osName: ['Linux'], hostName: ['web-*'], versions: [{ from: '19.400-5', to: '19.470-4' }] },
    ]);
    expect(policy.exclude).toEqual([{ ids: [42] }]);
    expect(policy.retry.notAlive).toEqual({ attempts: 3, backoff: 90 * 60_000 });
    expect(policy.poll).toEqual({ initial: 90_000, max: 120_000, jitter: 0 });
    expect(policy.taskTimeout).toBe(40 * 60_000);
    expect(policy.api).toEqual({ requestsPerSecond: 2.5, maxConcurrent: 4 });
    expect(policy.waves).toEqual([
      { size: { kind: 'count', count: 5 } },
      { size: { kind: 'percent', percent: 10 } },
      { size: { kind: 'percent', percent: 100 } },
    ]);
    expect(policy.failureGate).toEqual({ maxFailureRatio: 0.1, minOutcomes: 10, onTrip: 'pause' });
    expect(policy.windows).toEqual([
      { days: ['sat', 'sun'], start: 22 * 60, end: 6 * 60, timeZone: 'Europe/Berlin' },
    ]);
  });

  it('takes a single window and an empty exclude list', () => {
    const policy = Policy.parse({ name: 'w', exclude: [], windows: { start: '01:00', end: '02:00' } });
    expect(policy.exclude).toEqual([]);
    expect(policy.windows).toEqual([
      { days: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'], start: 60, end: 120, timeZone: 'UTC' },
    ]);
  });

  it('is usable from code with the same schema (durations as text)', () => {
    const policy = Policy.parse({
      name: 'code',
      taskTimeout: '1h',
      select: [{ ids: [1] }, { osName: ['Linux'] }],
    });
    expect(policy.taskTimeout).toBe(3_600_000);
    expect(policy.select).toHaveLength(2);
  });
});

describe('failureGate', () => {
  it('takes the legacy ratio alone, with its defaults', () => {
    expect(Policy.parse({ name: 'g', failureGate: { maxFailureRatio: 0.2 } }).failureGate).toEqual({
      maxFailureRatio: 0.2,
      minOutcomes: 10,
      onTrip: 'pause',
    });
  });

  it('takes criteria per outcome type, each with a ratio and/or a max and a minSample (default 10)', () => {
    const file = dir.write(
      'g.yaml',
      yaml(
        'name: g',
        'failureGate:',
        '  onTrip: abort',
        '  failed: { ratio: 0.05, minSample: 20 }',
        '  timed_out: { max: 3 }',
        '  error: { ratio: 0.1, max: 5 }',
        '  rejected: { max: 0 }',
        '  not_alive: { ratio: 0.5 }',
      ),
    );
    expect(loadPolicies({ files: [file] })[0]?.policy.failureGate).toEqual({
      minOutcomes: 10,
      onTrip: 'abort',
      failed: { ratio: 0.05, minSample: 20 },
      timed_out: { max: 3, minSample: 10 },
      error: { ratio: 0.1, max: 5, minSample: 10 },
      rejected: { max: 0, minSample: 10 },
      not_alive: { ratio: 0.5, minSample: 10 },
    });
  });

  it('takes both forms together', () => {
    expect(
      Policy.parse({ name: 'g', failureGate: { maxFailureRatio: 0.1, minOutcomes: 4, failed: { max: 2 } } })
        .failureGate,
    ).toEqual({ maxFailureRatio: 0.1, minOutcomes: 4, onTrip: 'pause', failed: { max: 2, minSample: 10 } });
  });
});

describe('waves', () => {
  it('takes sizes and objects with size, bake and approval; the first may select its canaries', () => {
    const file = dir.write(
      'w.yaml',
      yaml(
        'name: w',
        'waves:',
        '  - select: { hostName: ["canary-*"] }',
        '    bake: 30m',
        '    approval: manual',
        '  - size: 10',
        '    bake: 1h',
        '  - "50%"',
        '  - { size: "100%", approval: manual }',
      ),
    );
    expect(loadPolicies({ files: [file] })[0]?.policy.waves).toEqual([
      { select: { hostName: ['canary-*'] }, bakeMs: 30 * 60_000, approval: 'manual' },
      { size: { kind: 'count', count: 10 }, bakeMs: 3_600_000 },
      { size: { kind: 'percent', percent: 50 } },
      { size: { kind: 'percent', percent: 100 }, approval: 'manual' },
    ]);
  });

  it('takes a first wave with both select and size, and a single wave as a list of one', () => {
    expect(
      Policy.parse({ name: 'w', waves: [{ size: 2, select: { osName: ['Linux'] } }, '100%'] }).waves,
    ).toEqual([
      { size: { kind: 'count', count: 2 }, select: { osName: ['Linux'] } },
      { size: { kind: 'percent', percent: 100 } },
    ]);
    expect(Policy.parse({ name: 'w', waves: 10 }).waves).toEqual([{ size: { kind: 'count', count: 10 } }]);
  });

  // Defect (src/policy/wave.ts, WaveEntry): the union of a bare size and a wave object reports a
  // field of the object that fails (approval, bake, size) as the union's generic message on the
  // wave, so the field's own message ('expected "manual" (or leave approval out)', the duration
  // hint) never reaches the operator. Remove `.fails` once the union picks its branch by the
  // input's type.
  it('takes approvals by several people: { approvers, from }, within 1 to 10', () => {
    const policy = Policy.parse({
      name: 'a',
      waves: [{ size: 10, approval: { approvers: 2, from: ['alice', 'release-managers'] } }, '100%'],
    });
    expect(policy.waves[0]?.approval).toEqual({ approvers: 2, from: ['alice', 'release-managers'] });
    expect(errorOf(yaml('name: a', 'waves:', '  - size: 10', '    approval: { approvers: 0 }'))).toContain(
      'waves[0].approval',
    );
    expect(errorOf(yaml('name: a', 'waves:', '  - size: 10', '    approval: { approvers: 11 }'))).toContain(
      'waves[0].approval',
    );
  });

  it('names the field of a wave object that is wrong, with its own message', () => {
    expect(errorOf(yaml('name: a', 'waves:', '  - size: 10', '    approval: auto'))).toContain(
      'p.yaml:4:5: waves[0].approval: expected "manual" or { approvers: N, from: [names or groups] } (or leave approval out)',
    );
    expect(errorOf(yaml('name: a', 'waves:', '  - size: 10', '    bake: soon'))).toContain(
      'p.yaml:4:5: waves[0].bake: expected a duration like 90s, 10m, 2h',
    );
  });
});

describe('Policy validation names file, line, column, field and reason', () => {
  const cases: [string, string, string][] = [
    ['missing name', yaml('target: latest'), 'p.yaml:1:1: name: required field is missing'],
    ['bad name', yaml('target: latest', 'name: Linux_Fleet'), 'p.yaml:2:1: name: must be lowercase letters'],
    ['long name', yaml(`name: ${'a'.repeat(64)}`), 'p.yaml:1:1: name: must be at most 63 characters'],
    ['description', yaml('name: a', 'description: [x]'), 'p.yaml:2:1: description: expected text'],
    ['enabled', yaml('name: a', 'enabled: yes'), 'p.yaml:2:1: enabled: expected true or false'],
    [
      'target',
      yaml('name: a', 'target: newest'),
      'p.yaml:2:1: target: expected "latest", "latest-N" (N from 1 to 20) or a build',
    ],
    [
      'target number',
      yaml('name: a', 'target: 19.470'),
      'p.yaml:2:1: target: expected "latest", "latest-N" (N from 1 to 20) or a build',
    ],
    [
      'allowDowngrade',
      yaml('name: a', 'allowDowngrade: 1'),
      'p.yaml:2:1: allowDowngrade: expected true or false',
    ],
    [
      'unknown criterion',
      yaml('name: a', 'select:', '  hostname: [x]'),
      'p.yaml:3:3: select.hostname: unknown field (did you mean "hostName"?)',
    ],
    [
      'ids',
      yaml('name: a', 'select:', '  ids: [1, 2.5]'),
      'p.yaml:3:12: select.ids[1]: expected a Collector id',
    ],
    [
      'empty list',
      yaml('name: a', 'select:', '  osName: []'),
      'p.yaml:3:3: select.osName: list at least one name',
    ],
    [
      'glob',
      yaml('name: a', 'select:', '  name: ["web-[1"]'),
      'p.yaml:3:10: select.name[0]: not a valid glob',
    ],
    [
      'build',
      yaml('name: a', 'select:', '  versions:', '    from: 19.4'),
      'p.yaml:4:5: select.versions.from: expected a build shaped',
    ],
    [
      'empty range',
      yaml('name: a', 'select:', '  versions:', '    from: 19.10-1', '    to: 19.9-1'),
      'p.yaml:5:5: select.versions.to: the range is empty',
    ],
    [
      'both bounds',
      yaml('name: a', 'select:', '  versions:', '    from: 19.1-1', '    above: 19.2-1'),
      'p.yaml:5:5: select.versions.above: use either from',
    ],
    [
      'no bound',
      yaml('name: a', 'select:', '  versions: {}'),
      'p.yaml:3:3: select.versions: give at least one of from, to, above, below',
    ],
    [
      'empty select list',
      yaml('name: a', 'select: []'),
      'p.yaml:2:1: select: list at least one selection, or leave the field out to match any',
    ],
    [
      'list of selections',
      yaml('name: a', 'select:', '  - ids: [1]', '  - versions:', '      - below: 20.1'),
      'p.yaml:5:9: select[1].versions[0].below: expected a build shaped',
    ],
    [
      'ephemeral',
      yaml('name: a', 'select:', '  ephemeral: "no"'),
      'p.yaml:3:3: select.ephemeral: expected true or false',
    ],
    [
      'empty exclude',
      yaml('name: a', 'exclude:', '  - {}'),
      'p.yaml:3:5: exclude[0]: an exclude entry needs at least one criterion',
    ],
    ['maxInFlight', yaml('name: a', 'maxInFlight: 0'), 'p.yaml:2:1: maxInFlight: must be at least 1'],
    [
      'maxInFlight text',
      yaml('name: a', 'maxInFlight: many'),
      'p.yaml:2:1: maxInFlight: expected a number of Collectors (e.g. 50) or a percentage of the selected ones (e.g. "10%"), got "many"',
    ],
    [
      'waves',
      yaml('name: a', 'waves: [10, "150%"]'),
      'p.yaml:2:13: waves[1]: expected a number of Collectors',
    ],
    [
      'failureGate',
      yaml('name: a', 'failureGate:', '  maxFailureRatio: 1.5'),
      'p.yaml:3:3: failureGate.maxFailureRatio: must be between 0 and 1',
    ],
    [
      'failureGate without a criterion',
      yaml('name: a', 'failureGate:', '  minOutcomes: 5'),
      'p.yaml:2:1: failureGate: give maxFailureRatio and/or a criterion per outcome (failed, timed_out, error, unhealthy, rejected, not_alive)',
    ],
    [
      'failureGate criterion without ratio or max',
      yaml('name: a', 'failureGate:', '  failed: { minSample: 5 }'),
      'p.yaml:3:3: failureGate.failed: give a ratio and/or a max',
    ],
    [
      'failureGate criterion ratio',
      yaml('name: a', 'failureGate:', '  failed: { ratio: 2 }'),
      'p.yaml:3:13: failureGate.failed.ratio: must be between 0 and 1',
    ],
    [
      'failureGate criterion max negative',
      yaml('name: a', 'failureGate:', '  timed_out: { max: -1 }'),
      'p.yaml:3:16: failureGate.timed_out.max: must be at least 0',
    ],
    [
      'failureGate criterion max fraction',
      yaml('name: a', 'failureGate:', '  error: { max: 1.5 }'),
      'p.yaml:3:12: failureGate.error.max: must be a whole number',
    ],
    [
      'failureGate minSample',
      yaml('name: a', 'failureGate:', '  not_alive: { max: 3, minSample: 0 }'),
      'p.yaml:3:24: failureGate.not_alive.minSample: must be at least 1',
    ],
    [
      'failureGate onTrip',
      yaml('name: a', 'failureGate:', '  onTrip: stop', '  maxFailureRatio: 0.1'),
      'p.yaml:3:3: failureGate.onTrip: expected pause, abort or rollback-wave',
    ],
    [
      'failureGate unknown outcome',
      yaml('name: a', 'failureGate:', '  maxFailureRatio: 0.1', '  skipped: { max: 1 }'),
      'p.yaml:4:3: failureGate.skipped: unknown field',
    ],
    [
      'failureGate criterion unknown key',
      yaml('name: a', 'failureGate:', '  failed: { max: 1, ratoi: 0.2 }'),
      'p.yaml:3:21: failureGate.failed.ratoi: unknown field (did you mean "ratio"?)',
    ],
    [
      'wave unknown key',
      yaml('name: a', 'waves:', '  - size: 10', '    bak: 1h'),
      'p.yaml:4:5: waves[0].bak: unknown field (did you mean "bake"?)',
    ],
    [
      'wave select not first',
      yaml('name: a', 'waves:', '  - 10', '  - size: 20', '    select: { hostName: [x] }'),
      'p.yaml:5:5: waves[1].select: only the first wave may select its members',
    ],
    [
      'wave without size or select',
      yaml('name: a', 'waves:', '  - 10', '  - bake: 1h'),
      'p.yaml:4:5: waves[1].size: a wave needs a size (only a first wave with select may leave it out)',
    ],
    [
      'first wave without size or select',
      yaml('name: a', 'waves:', '  - approval: manual', '  - "100%"'),
      'p.yaml:3:5: waves[0].size: a wave needs a size (only a first wave with select may leave it out)',
    ],
    [
      'empty canary selection',
      yaml('name: a', 'waves:', '  - select: {}', '  - "100%"'),
      'p.yaml:3:5: waves[0].select: a canary selection needs at least one criterion',
    ],
    [
      'wave of another kind',
      yaml('name: a', 'waves: [true]'),
      'p.yaml:2:9: waves[0]: expected a number of Collectors (e.g. 10) or a percentage (e.g. "5%"), or {size, bake, analysis, approval}',
    ],
    [
      'window time',
      yaml('name: a', 'windows:', '  - start: "25:00"', '    end: "06:00"'),
      'p.yaml:3:5: windows[0].start: expected a time like 22:00',
    ],
    [
      'window zone',
      yaml('name: a', 'windows:', '  - { start: "1:00", end: "2:00", timeZone: Mars/Base }'),
      'p.yaml:3:35: windows[0].timeZone: unknown time zone "Mars/Base"',
    ],
    [
      'window empty',
      yaml('name: a', 'windows:', '  - start: "02:00"', '    end: "02:00"'),
      'p.yaml:4:5: windows[0].end: end must differ from start',
    ],
    [
      'window day',
      yaml('name: a', 'windows:', '  - start: "02:00"', '    end: "03:00"', '    days: [mon, funday]'),
      'p.yaml:5:17: windows[0].days[1]: expected a weekday',
    ],
    [
      'attempts',
      yaml('name: a', 'retry:', '  notAlive:', '    attempts: 0'),
      'p.yaml:4:5: retry.notAlive.attempts: must be at least 1',
    ],
    [
      'backoff',
      yaml('name: a', 'retry:', '  notAlive:', '    backoff: 10'),
      'p.yaml:4:5: retry.notAlive.backoff: expected a duration like 90s, 10m, 2h (a bare number has no unit',
    ],
    [
      'poll initial',
      yaml('name: a', 'poll:', '  initial: soon'),
      'p.yaml:3:3: poll.initial: expected a duration like 90s, 10m, 2h, got "soon"',
    ],
    [
      'poll max',
      yaml('name: a', 'poll:', '  initial: 2m', '  max: 1m'),
      'p.yaml:4:3: poll.max: must not be shorter than initial',
    ],
    ['jitter', yaml('name: a', 'poll:', '  jitter: 2'), 'p.yaml:3:3: poll.jitter: must be between 0 and 1'],
    [
      'taskTimeout',
      yaml('name: a', 'taskTimeout: 20m'),
      'p.yaml:2:1: taskTimeout: must be at least 30m, got 20m',
    ],
    [
      'rps',
      yaml('name: a', 'api:', '  requestsPerSecond: 0'),
      'p.yaml:3:3: api.requestsPerSecond: must be above 0',
    ],
    ['share', yaml('name: a', 'api:', '  share: 1.5'), 'p.yaml:3:3: api.share: must be at most 1'],
    [
      'concurrent',
      yaml('name: a', 'api:', '  maxConcurrent: 1.5'),
      'p.yaml:3:3: api.maxConcurrent: must be a whole number',
    ],
    ['pageSize low', yaml('name: a', 'pageSize: 0'), 'p.yaml:2:1: pageSize: must be at least 1'],
    ['pageSize high', yaml('name: a', 'pageSize: 1001'), 'p.yaml:2:1: pageSize: must be at most 1000'],
    [
      'unknown top',
      yaml('name: a', 'maxInflight: 5'),
      'p.yaml:2:1: maxInflight: unknown field (did you mean "maxInFlight"?)',
    ],
    ['unknown far', yaml('name: a', 'colour: blue'), 'p.yaml:2:1: colour: unknown field'],
    [
      'unknown nested',
      yaml('name: a', 'api:', '  maxConcurent: 3'),
      'p.yaml:3:3: api.maxConcurent: unknown field (did you mean "maxConcurrent"?)',
    ],
    ['duplicate key', yaml('name: a', 'name: b'), 'p.yaml:2:1: Map keys must be unique'],
    ['yaml syntax', yaml('name: a', 'select: { osName: [Linux }'), 'p.yaml:2:'],
  ];
  it.each(cases)('%s', (_label, text, expected) => {
    expect(errorOf(text)).toContain(expected);
  });

  it('reports every problem of a file at once, top to bottom', () => {
    const lines = errorOf(yaml('name: a', 'pageSize: 0', 'maxInFlight: 0', 'colour: red')).split('\n');
    expect(lines.map((l) => l.split(': ')[0])).toEqual(['p.yaml:2:1', 'p.yaml:3:1', 'p.yaml:4:1']);
  });

  it('does not suggest for a field that resembles nothing, and names each unknown field', () => {
    const message = errorOf(yaml('name: a', 'select:', '  zzzzzz: 1', '  osname: [x]'));
    expect(message).toContain('p.yaml:3:3: select.zzzzzz: unknown field\n');
    expect(message).toContain('p.yaml:4:3: select.osname: unknown field (did you mean "osName"?)');
  });
});

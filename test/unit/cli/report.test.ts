/**
 * `fleet-upgrade report`: CSV cells and rows (RFC 4180 quoting, times as ISO 8601, empty for
 * missing fields), and the command itself reading a rollout from a real Redis.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  csvCell,
  REPORT_COLUMNS,
  reportCommand,
  toCsvRow,
  WORKLIST_COLUMNS,
} from '../../../src/cli/commands/report.js';
import {
  type CollectorEvent,
  type CollectorRecord,
  CollectorStore,
  type LifeSettings,
  newRecord,
  transition,
} from '../../../src/rollout/collector/index.js';
import { createKeys } from '../../../src/rollout/index.js';
import { type RolloutSettings, RolloutStore } from '../../../src/rollout/life/index.js';
import { useTestRedis } from '../../support/redis.js';

const ctx = useTestRedis();

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

/** A small RFC 4180 parser: the inverse of what the report writes. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += ch;
  }
  if (cell !== '' || row.length > 0) {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}

const T = Date.UTC(2025, 0, 6, 9, 0, 0);

function result(extra: Partial<CollectorRecord> = {}): CollectorRecord {
  return {
    id: 101,
    name: 'web-1',
    hostName: 'web-1.prod.internal',
    from: '19.400-5',
    to: '19.470-4',
    state: 'succeeded',
    taskId: '10000001',
    attempts: 1,
    admissions: 2,
    notAliveAnswers: 1,
    errorAnswers: 0,
    transientErrors: 0,
    statusReads: 4,
    statusErrors: 0,
    discoveredAt: T,
    requestTime: T + 60_000,
    finishedAt: T + 200_000,
    message: '',
    ...extra,
  };
}

describe('csvCell', () => {
  it.each([
    [undefined, ''],
    [null, ''],
    ['plain', 'plain'],
    [42, '42'],
    [0, '0'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['carriage\rreturn', '"carriage\rreturn"'],
    ['', ''],
  ])('%j → %j', (value, expected) => {
    expect(csvCell(value)).toBe(expected);
  });

  it('writes epoch-ms times as ISO 8601 in the time columns', () => {
    expect(csvCell(T, 'requestTime')).toBe('2025-01-06T09:00:00.000Z');
    expect(csvCell(T, 'finishedAt')).toBe('2025-01-06T09:00:00.000Z');
  });

  it('leaves other 13-digit numbers as they are (a task id, say)', () => {
    expect(csvCell(T, 'taskId')).toBe(String(T));
    expect(csvCell(T)).toBe(String(T));
  });
});

describe('toCsvRow', () => {
  it('has a column for the admissions, next to the attempts, and the attempts themselves last', () => {
    expect(REPORT_COLUMNS).toEqual([
      'id',
      'name',
      'hostName',
      'from',
      'to',
      'state',
      'taskId',
      'attempts',
      'admissions',
      'statusReads',
      'discoveredAt',
      'requestTime',
      'finishedAt',
      'message',
      'retries',
      'attemptLog',
      'failureClass',
      'cohort',
      'org',
    ]);
  });

  it('writes the columns in order, parsing back to the record', () => {
    const r = result({ message: 'Upgrade failed: "disk", full\nsecond line', state: 'failed' });
    const [cellsBack] = parseCsv(`${toCsvRow(r)}\n`);
    expect(cellsBack).toHaveLength(REPORT_COLUMNS.length);
    expect(Object.fromEntries(REPORT_COLUMNS.map((c, i) => [c, cellsBack?.[i]]))).toEqual({
      id: '101',
      name: 'web-1',
      hostName: 'web-1.prod.internal',
      from: '19.400-5',
      to: '19.470-4',
      state: 'failed',
      taskId: '10000001',
      attempts: '1',
      admissions: '2',
      statusReads: '4',
      discoveredAt: '2025-01-06T09:00:00.000Z',
      requestTime: '2025-01-06T09:01:00.000Z',
      finishedAt: '2025-01-06T09:03:20.000Z',
      message: 'Upgrade failed: "disk", full\nsecond line',
      retries: '',
      attemptLog: '',
      failureClass: '',
      cohort: '',
      org: 'default',
    });
  });

  it('writes each attempt with its answer, task and outcome', () => {
    const r = result({
      state: 'succeeded',
      retries: 1,
      attemptLog: [
        { n: 1, sentAt: T, answer: 'created', taskId: '10000001', outcome: 'failed', endedAt: T + 1 },
        { n: 2, sentAt: T + 2, answer: 'not_alive' },
        { n: 3, sentAt: T + 3, answer: 'created', taskId: '10000007', outcome: 'succeeded', endedAt: T + 4 },
      ],
    });
    const [cells] = parseCsv(`${toCsvRow(r)}\n`);
    expect(cells?.[REPORT_COLUMNS.indexOf('retries')]).toBe('1');
    expect(cells?.[REPORT_COLUMNS.indexOf('attemptLog')]).toBe(
      '1:created 10000001 failed; 2:not_alive; 3:created 10000007 succeeded',
    );
  });

  it('leaves missing fields empty', () => {
    const { taskId: _t, requestTime: _r, finishedAt: _f, message: _m, ...queued } = result();
    const row = toCsvRow({ ...queued, state: 'queued' });
    expect(row).toBe(
      '101,web-1,web-1.prod.internal,19.400-5,19.470-4,queued,,1,2,4,2025-01-06T09:00:00.000Z,,,,,,,,default',
    );
  });

  it('names the organization last: `default`, or the record’s own', () => {
    expect(toCsvRow(result()).split(',').at(-1)).toBe('default');
    expect(
      toCsvRow({ ...result(), org: 'emea' })
        .split(',')
        .at(-1),
    ).toBe('emea');
    expect(
      toCsvRow({ ...result(), org: 'emea' })
        .split(',')
        .slice(0, -1),
    ).toEqual(toCsvRow(result()).split(',').slice(0, -1));
  });

  it('keeps a large task id as written (task ids are strings)', () => {
    expect(toCsvRow(result({ taskId: '1736154000000' })).split(',')[6]).toBe('1736154000000');
  });
});

describe('report command (real Redis)', () => {
  const SETTINGS: RolloutSettings = {
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
  };

  /** Writes a found Collector and moves it through `events`, as the scheduler and workers would. */
  async function drive(
    store: CollectorStore,
    rolloutId: string,
    c: { id: number; name: string; to: string },
    events: CollectorEvent[],
    settings: LifeSettings = SETTINGS,
  ): Promise<CollectorRecord> {
    let now = T;
    let r = newRecord(
      { id: c.id, name: c.name, hostName: `${c.name}.prod.internal`, collectorVersion: '19.400-5' },
      c.to,
      now,
    );
    expect(await store.discover(rolloutId, [r])).toEqual([c.id]);
    for (const event of events) {
      now += 60_000;
      const t = transition(r, event, { now, settings, random: () => 0.5 });
      if (!t.ok) throw new Error(t.reason);
      expect(await store.apply(rolloutId, [t.move], { limit: 5 })).toEqual(['written']);
      r = t.move.next;
    }
    return r;
  }

  const toSuccess = (taskId: string): CollectorEvent[] => [
    { type: 'admit' },
    { type: 'send' },
    { type: 'created', taskId, requestTime: T + 120_000, createdBy: 'host:1' },
    { type: 'status', status: 6 },
    { type: 'succeeded', status: 2 },
  ];

  async function seed() {
    const keys = createKeys(ctx.prefix);
    const rollouts = new RolloutStore(ctx.redis, keys);
    const store = new CollectorStore(ctx.redis, keys);
    await rollouts.start({
      policy: 'linux-fleet',
      target: 'latest',
      build: '19.450-12',
      maxInFlight: 5,
      settings: SETTINGS,
      now: T,
    });
    await rollouts.start({
      policy: 'linux-fleet',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 5,
      settings: SETTINGS,
      now: T + 1000,
    });
    // 102 was not alive once, admitted again, and its task failed with a message that needs quoting.
    const web2 = await drive(store, 'linux-fleet@19.470-4', { id: 102, name: 'web-2', to: '19.470-4' }, [
      { type: 'admit' },
      { type: 'send' },
      { type: 'not_alive', message: 'Collector is not alive' },
      { type: 'admit' },
      { type: 'send' },
      { type: 'created', taskId: '10000002', requestTime: T + 300_000, createdBy: 'host:1' },
      { type: 'failed', message: 'a, "b"', status: 3 },
    ]);
    // 103's upgrade failed for want of disk space: on the worklist.
    const web3 = await drive(store, 'linux-fleet@19.470-4', { id: 103, name: 'web-3', to: '19.470-4' }, [
      { type: 'admit' },
      { type: 'send' },
      { type: 'created', taskId: '10000003', requestTime: T + 300_000, createdBy: 'host:1' },
      {
        type: 'manual',
        message: 'Upgrade failed: not enough disk space, 120 MB free',
        failureClass: 'disk_space',
        status: 3,
      },
    ]);
    const web1 = await drive(
      store,
      'linux-fleet@19.470-4',
      { id: 101, name: 'web-1', to: '19.470-4' },
      toSuccess('10000001'),
    );
    await drive(store, 'linux-fleet@19.450-12', { id: 7, name: 'c-7', to: '19.450-12' }, toSuccess('9'));
    return { web1, web2, web3 };
  }

  async function run(args: string[]): Promise<string> {
    vi.stubEnv('REDIS_URL', ctx.url);
    vi.stubEnv('FLEET_UPGRADE_KEY_PREFIX', ctx.prefix);
    vi.stubEnv('FLEET_UPGRADE_CONFIG', '');
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out.push(String(chunk));
      return true;
    });
    await reportCommand().exitOverride().parseAsync(args, { from: 'user' });
    return out.join('');
  }

  it('writes the newest rollout as CSV, sorted by Collector id, with a header', async () => {
    const { web1, web2 } = await seed();
    const rows = parseCsv(await run(['--format', 'csv']));
    expect(rows[0]).toEqual([...REPORT_COLUMNS]);
    expect(rows).toHaveLength(4);
    expect(rows.slice(1).map((r) => r[0])).toEqual(['101', '102', '103']);
    const cell = (row: number, column: (typeof REPORT_COLUMNS)[number]) =>
      rows[row]?.[REPORT_COLUMNS.indexOf(column)];
    expect(rows[1]).toEqual(toCsvRow(web1).split(','));
    expect(cell(2, 'message')).toBe('a, "b"');
    expect(cell(2, 'state')).toBe('failed');
    expect(cell(2, 'taskId')).toBe('10000002');
    // Two creates sent over two admissions.
    expect([cell(2, 'attempts'), cell(2, 'admissions')]).toEqual(['2', '2']);
    expect(cell(2, 'finishedAt')).toBe(new Date(web2.finishedAt as number).toISOString());
  });

  it('writes a named rollout as JSON with its record', async () => {
    await seed();
    const json = JSON.parse(await run(['linux-fleet@19.450-12'])) as {
      rollout: { id: string };
      collectors: CollectorRecord[];
    };
    expect(json.rollout.id).toBe('linux-fleet@19.450-12');
    expect(json.collectors.map((c) => c.id)).toEqual([7]);
    expect(json.collectors[0]).toMatchObject({
      state: 'succeeded',
      taskId: '9',
      to: '19.450-12',
      attempts: 1,
      admissions: 1,
      statusReads: 2,
    });
  });

  it('--worklist: only the Collectors that need a person (manual, unknown), with class, message and the command that tries them again', async () => {
    const { web3 } = await seed();
    const keys = createKeys(ctx.prefix);
    const store = new CollectorStore(ctx.redis, keys);
    // 104's create was cut off before its answer, and the listing offers it again: unknown.
    const web4 = await drive(store, 'linux-fleet@19.470-4', { id: 104, name: 'web-4', to: '19.470-4' }, [
      { type: 'admit' },
      { type: 'send' },
      { type: 'task_unknown', proven: false, message: 'no answer to the create' },
      {
        type: 'outcome_unknown',
        message: 'offered again: no task was made, or one ended short of the build',
      },
    ]);
    const json = JSON.parse(await run(['--worklist'])) as {
      rollout: string;
      worklist: Record<string, unknown>[];
    };
    expect(json).toEqual({
      rollout: 'linux-fleet@19.470-4',
      worklist: [
        {
          id: 103,
          name: 'web-3',
          hostName: 'web-3.prod.internal',
          from: '19.400-5',
          to: '19.470-4',
          state: 'manual',
          failureClass: 'disk_space',
          message: 'Upgrade failed: not enough disk space, 120 MB free',
          finishedAt: web3.finishedAt,
          org: 'default',
          resolve: 'fleet-upgrade retry linux-fleet@19.470-4 --only manual',
        },
        {
          id: 104,
          name: 'web-4',
          hostName: 'web-4.prod.internal',
          from: '19.400-5',
          to: '19.470-4',
          state: 'unknown',
          message: 'offered again: no task was made, or one ended short of the build',
          finishedAt: web4.finishedAt,
          org: 'default',
          resolve: 'fleet-upgrade retry linux-fleet@19.470-4 --only unknown',
        },
      ],
    });
    const rows = parseCsv(await run(['--worklist', '--format', 'csv']));
    expect(rows[0]).toEqual([...WORKLIST_COLUMNS]);
    expect(rows).toHaveLength(3);
    expect(rows[1]?.slice(0, 8)).toEqual([
      '103',
      'web-3',
      'web-3.prod.internal',
      '19.400-5',
      '19.470-4',
      'manual',
      'disk_space',
      'Upgrade failed: not enough disk space, 120 MB free',
    ]);
  });

  it('rows of several organizations: grouped in the rollout’s order, each naming its organization', async () => {
    const keys = createKeys(ctx.prefix);
    const rollouts = new RolloutStore(ctx.redis, keys);
    const store = new CollectorStore(ctx.redis, keys);
    await rollouts.start({
      policy: 'spread',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 5,
      settings: SETTINGS,
      now: T,
      patch: { orgs: ['us', 'emea'] },
    });
    const found = (id: number, org: string) =>
      newRecord({ id, name: `c-${org}-${id}`, collectorVersion: '19.400-5' }, '19.470-4', T, undefined, org);
    // Ids repeat across organizations.
    await store.discover('spread@19.470-4', [
      found(7, 'emea'),
      found(7, 'us'),
      found(3, 'emea'),
      found(9, 'us'),
    ]);
    const rows = parseCsv(await run(['spread@19.470-4', '--format', 'csv']));
    const org = REPORT_COLUMNS.indexOf('org');
    expect(rows.slice(1).map((r) => `${r[org]}:${r[0]}`)).toEqual(['us:7', 'us:9', 'emea:3', 'emea:7']);
    const json = JSON.parse(await run(['spread@19.470-4'])) as { collectors: { id: number; org: string }[] };
    expect(json.collectors.map((c) => `${c.org}:${c.id}`)).toEqual(['us:7', 'us:9', 'emea:3', 'emea:7']);
    // The default organization is named in JSON too.
    await seed();
    const one = JSON.parse(await run(['linux-fleet@19.450-12'])) as { collectors: { org: string }[] };
    expect(one.collectors.map((c) => c.org)).toEqual(['default']);
  });

  it('refuses an unknown rollout, naming the known ones', async () => {
    await seed();
    await expect(run(['nope@1.0-1'])).rejects.toMatchObject({
      code: 'FLEET_ERR_USAGE',
      message: expect.stringMatching(
        /no rollout 'nope@1\.0-1' \(known: linux-fleet@19\.470-4, linux-fleet@19\.450-12\)/,
      ),
    });
  });
});

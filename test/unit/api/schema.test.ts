import { describe, expect, it } from 'vitest';
import {
  Collector,
  CollectorsPage,
  CreatedTask,
  describeIssues,
  Targets,
  TaskStatus,
  UpgradeTask,
} from '../../../src/api/schema.js';

// The shapes of the documentation's examples (api-facts.md).
const collectorExample = {
  id: 100000000,
  name: 'SumoCollector_Local',
  hostName: 'TestHost',
  timeZone: 'UTC',
  links: [{ rel: 'sources', href: '/v1/collectors/100000000/sources' }],
  ephemeral: false,
  sourceSyncMode: 'UI',
  collectorType: 'Installable',
  collectorVersion: '20.1-2749',
  osVersion: '10.11.5',
  osName: 'Mac OS X',
  osArch: 'x86_64',
  lastSeenAlive: 1465848876035,
  alive: true,
};
const taskExample = {
  id: 12345,
  collectorId: 100000000,
  toVersion: '19.152-1',
  requestTime: 1465855411044,
  status: 2,
  message: '',
};

describe('Collector', () => {
  it('parses the documented record', () => {
    expect(Collector.parse(collectorExample)).toEqual(collectorExample);
  });

  it('ignores fields it does not know', () => {
    expect(Collector.parse({ ...collectorExample, newField: 1 })).not.toHaveProperty('newField');
  });

  it('names the field that is wrong, with its place in the page', () => {
    const bad = { collectors: [collectorExample, { ...collectorExample, alive: 'yes' }] };
    const r = CollectorsPage.safeParse(bad);
    expect(r.success).toBe(false);
    if (!r.success) expect(describeIssues(r.error)).toMatch(/^collectors\[1\]\.alive: .*boolean/);
  });

  it('requires the fields the orchestrator decides on', () => {
    const { collectorVersion: _omitted, ...rest } = collectorExample;
    const r = Collector.safeParse(rest);
    expect(r.success).toBe(false);
    if (!r.success) expect(describeIssues(r.error)).toMatch(/^collectorVersion: /);
  });
});

describe('Targets', () => {
  it('parses the documented builds', () => {
    const body = {
      targets: [
        { version: '19.115-37', latest: false },
        { version: '20.1-2749', latest: true },
      ],
    };
    expect(Targets.parse(body).targets).toHaveLength(2);
  });

  it('rejects a mistyped flag by name', () => {
    const r = Targets.safeParse({ targets: [{ version: '20.1-2749', latest: 'true' }] });
    expect(r.success).toBe(false);
    if (!r.success) expect(describeIssues(r.error)).toMatch(/^targets\[0\]\.latest: /);
  });
});

describe('CreatedTask', () => {
  it('takes the id as a string, as documented', () => {
    const body = { id: '12345', link: { rel: 'self', href: '/v1/collectors/upgrades/12345' } };
    expect(CreatedTask.parse(body)).toEqual({ id: '12345', href: '/v1/collectors/upgrades/12345' });
  });

  it('tolerates a numeric id and a missing link', () => {
    expect(CreatedTask.parse({ id: 12345 })).toEqual({ id: '12345', href: undefined });
  });

  it('rejects a missing or empty id', () => {
    expect(CreatedTask.safeParse({ link: { href: '/v1/x' } }).success).toBe(false);
    expect(CreatedTask.safeParse({ id: '' }).success).toBe(false);
  });
});

describe('UpgradeTask', () => {
  it('parses the documented status body and names the state', () => {
    const { upgrade } = TaskStatus.parse({ upgrade: taskExample });
    expect(upgrade).toEqual({
      id: '12345',
      collectorId: 100000000,
      toVersion: '19.152-1',
      requestTime: 1465855411044,
      status: 2,
      state: 'succeeded',
      message: '',
    });
  });

  it('tolerates `to` and `requestedTime` and a string id', () => {
    const { toVersion: _t, requestTime: _r, ...rest } = taskExample;
    const task = UpgradeTask.parse({ ...rest, id: '77', to: '19.152-1', requestedTime: 5 });
    expect(task).toMatchObject({ id: '77', toVersion: '19.152-1', requestTime: 5 });
  });

  it.each([
    [0, 'not_started'],
    [1, 'pending'],
    [2, 'succeeded'],
    [3, 'failed'],
    [6, 'progressing'],
  ])('maps status %i to %s', (status, state) => {
    expect(UpgradeTask.parse({ ...taskExample, status }).state).toBe(state);
  });

  it('rejects an undocumented status by name', () => {
    const r = TaskStatus.safeParse({ upgrade: { ...taskExample, status: 4 } });
    expect(r.success).toBe(false);
    if (!r.success) expect(describeIssues(r.error)).toMatch(/^upgrade\.status: unknown task status/);
  });

  it('says which variant is missing', () => {
    const { toVersion: _t, ...rest } = taskExample;
    const r = UpgradeTask.safeParse(rest);
    expect(r.success).toBe(false);
    if (!r.success) expect(describeIssues(r.error)).toBe('toVersion: missing (neither toVersion nor to)');
  });

  it('defaults a missing message to the empty string', () => {
    const { message: _m, ...rest } = taskExample;
    expect(UpgradeTask.parse(rest).message).toBe('');
  });
});

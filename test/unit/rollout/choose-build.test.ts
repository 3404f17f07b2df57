/**
 * The build a policy's rollout goes to (#21: rollout/tick/choose-build.ts and ring-gate.ts), as
 * pure judgements: latest-N, minAge (falling back to the newest build old enough), a ring's
 * verdicts (not started, converging, soaking until a date, require not met, halted, rolled back,
 * quarantined, released), never back to an older build, and what waits.
 */
import { describe, expect, it } from 'vitest';
import type { BuildTarget } from '../../../src/api/index.js';
import { After } from '../../../src/policy/rings.js';
import type { CurrentRollout } from '../../../src/rollout/life/index.js';
import { judgeRing, verifiedRatio } from '../../../src/rollout/testing.js';
import { chooseBuild } from '../../../src/rollout/tick/index.js';

const NOW = Date.UTC(2026, 10, 26, 10, 0);
const H = 3_600_000;
const D = 24 * H;

const list = (...versions: string[]): BuildTarget[] =>
  versions.map((version, i) => ({ version, latest: i === versions.length - 1 }) as BuildTarget);

/** A rollout of `policy` at `build` as the store reads it (only the fields the judgements read). */
function rollout(
  policy: string,
  build: string,
  fields: Record<string, unknown> = {},
  counts: Record<string, number> = { succeeded: 10 },
): CurrentRollout {
  return {
    rollout: {
      id: `${policy}@${build}`,
      policy,
      build,
      phase: 'converged',
      startedAt: NOW - 3 * D,
      updatedAt: NOW - D,
      convergedAt: NOW - 2 * D,
      ...fields,
    } as unknown as CurrentRollout['rollout'],
    counts,
    slotsHeld: 0,
  };
}

const ringAfter = (input: Record<string, unknown>) => After.parse(input);

describe('judgeRing', () => {
  const ring = ringAfter({ policy: 'canary', soak: '1d', require: { verifiedRatio: 0.9 } });

  it('waits while the build has not started, runs, or soaks; says until when', () => {
    expect(judgeRing(ring, '19.480-2', undefined, NOW)).toMatchObject({
      kind: 'waiting',
      reason: 'not_started',
      text: '19.480-2 has not started in canary yet',
    });
    const running = rollout('canary', '19.480-2', { phase: 'running', convergedAt: undefined });
    expect(judgeRing(ring, '19.480-2', running, NOW)).toMatchObject({
      kind: 'waiting',
      reason: 'converging',
    });
    const soaking = rollout('canary', '19.480-2', { convergedAt: NOW - 2 * H });
    expect(judgeRing(ring, '19.480-2', soaking, NOW)).toEqual({
      kind: 'waiting',
      reason: 'soaking',
      until: NOW + 22 * H,
      text: '19.480-2 soaks in canary until 2026-11-27 08:00 (UTC)',
    });
  });

  it('waits on require: the share verified among the outcomes, skipped and known issues left out', () => {
    const low = rollout('canary', '19.480-2', {}, { succeeded: 8, failed: 2, skipped: 5 });
    expect(judgeRing(ring, '19.480-2', low, NOW)).toMatchObject({
      kind: 'waiting',
      reason: 'require',
      text: '19.480-2 waits in canary: 0.8 of its Collectors verified, below the 0.9 required',
    });
    expect(verifiedRatio({ succeeded: 9, manual: 3 }, { knownIssueManual: 2 })).toBeCloseTo(0.9);
    const ok = rollout('canary', '19.480-2', {}, { succeeded: 9, failed: 1 });
    expect(judgeRing(ring, '19.480-2', ok, NOW)).toEqual({ kind: 'released', convergedAt: NOW - 2 * D });
  });

  it('blocks a build halted, aborted, rolled back or with a cohort still quarantined there', () => {
    expect(
      judgeRing(ring, 'b', rollout('canary', 'b', { phase: 'halted', haltReason: 'gate' }), NOW),
    ).toMatchObject({
      kind: 'blocked',
      reason: 'halted',
      text: 'b halted in canary: gate',
    });
    expect(judgeRing(ring, 'b', rollout('canary', 'b', { phase: 'aborted' }), NOW)).toMatchObject({
      kind: 'blocked',
      reason: 'aborted',
    });
    expect(
      judgeRing(
        ring,
        'b',
        rollout('canary', 'b', { rollbacks: [{ state: 'started', build: 'a', collectors: 3 }] }),
        NOW,
      ),
    ).toMatchObject({ kind: 'blocked', reason: 'rolled_back' });
    expect(
      judgeRing(
        ring,
        'b',
        rollout('canary', 'b', { quarantined: [{ cohort: 'osName=Mac OS X', held: 2 }] }),
        NOW,
      ),
    ).toMatchObject({ kind: 'blocked', reason: 'quarantined' });
  });

  it('a build superseded there counts as it was: released if it had soaked, else never', () => {
    const soaked = rollout('canary', 'b', {
      phase: 'superseded',
      convergedAt: NOW - 3 * D,
      updatedAt: NOW - D,
    });
    expect(judgeRing(ring, 'b', soaked, NOW).kind).toBe('released');
    const early = rollout('canary', 'b', {
      phase: 'superseded',
      convergedAt: NOW - 3 * D,
      updatedAt: NOW - 3 * D + H,
    });
    expect(judgeRing(ring, 'b', early, NOW)).toMatchObject({ kind: 'waiting', reason: 'soaking' });
    expect(judgeRing(ring, 'b', early, NOW)).not.toHaveProperty('until');
  });
});

describe('chooseBuild', () => {
  const lists = new Map([['default', list('19.400-5', '19.450-12', '19.470-4', '19.480-2')]]);
  const noneSeen = () => new Map<string, number>();

  it('latest-N: the N-th build before the latest', async () => {
    const c = await chooseBuild({
      policy: { name: 'p', target: 'latest-2' },
      lists,
      seen: noneSeen,
      now: NOW,
    });
    expect(c).toMatchObject({ build: '19.450-12', builds: { default: '19.450-12' }, notOffered: [] });
    const far = await chooseBuild({
      policy: { name: 'p', target: 'latest-9' },
      lists,
      seen: noneSeen,
      now: NOW,
    });
    expect(far).toMatchObject({ builds: {}, notOffered: ['default'] });
  });

  it('minAge: the newest build old enough here; the newest one waits, with its first sighting', async () => {
    const seen = new Map([
      ['19.480-2', NOW - 2 * D],
      ['19.470-4', NOW - 20 * D],
      ['19.450-12', NOW - 40 * D],
    ]);
    const c = await chooseBuild({
      policy: { name: 'p', target: 'latest', minAge: 14 * D },
      lists,
      seen: () => seen,
      now: NOW,
    });
    expect(c.build).toBe('19.470-4');
    expect(c.wait).toMatchObject({
      policy: 'p',
      build: '19.480-2',
      kind: 'age',
      reason: 'young',
      firstSeen: NOW - 2 * D,
      until: NOW + 12 * D,
    });
    expect(c.wait?.text).toBe(
      '19.480-2 first seen here 2026-11-24 10:00 (UTC); it becomes a target once 14d old, at 2026-12-08 10:00 (UTC)',
    );
    // A build never seen before counts as seen now: too young.
    const fresh = await chooseBuild({
      policy: { name: 'p', target: 'latest', minAge: H },
      lists,
      seen: noneSeen,
      now: NOW,
    });
    expect(fresh).toMatchObject({ builds: {}, wait: { reason: 'young', build: '19.480-2' } });
    expect(fresh.build).toBeUndefined();
  });

  it('after: the newest build the ring released; what waits is the newest the target names', async () => {
    const ring = ringAfter({ policy: 'canary', soak: '1d' });
    const read = new Map<string, CurrentRollout>([
      ['canary@19.470-4', rollout('canary', '19.470-4')],
      ['canary@19.480-2', rollout('canary', '19.480-2', { convergedAt: NOW - H })],
    ]);
    const c = await chooseBuild({
      policy: { name: 'production', target: 'latest', after: ring },
      lists,
      seen: noneSeen,
      readRing: async (ids) => ids.map((id) => read.get(id)),
      now: NOW,
    });
    expect(c).toMatchObject({ build: '19.470-4', releasedAt: NOW - 2 * D });
    expect(c.wait).toMatchObject({
      kind: 'ring',
      after: 'canary',
      build: '19.480-2',
      reason: 'soaking',
      until: NOW + 23 * H,
    });
  });

  it('never back: a rollout of a newer build goes on when the ring releases only older ones; a halt there is its verdict', async () => {
    const ring = ringAfter({ policy: 'canary' });
    const current = rollout('production', '19.480-2', { phase: 'running', convergedAt: undefined });
    const read = new Map<string, CurrentRollout>([
      ['canary@19.470-4', rollout('canary', '19.470-4')],
      ['canary@19.480-2', rollout('canary', '19.480-2', { phase: 'halted', haltReason: 'failure gate' })],
    ]);
    const c = await chooseBuild({
      policy: { name: 'production', target: 'latest', after: ring },
      lists,
      seen: noneSeen,
      current,
      readRing: async (ids) => ids.map((id) => read.get(id)),
      now: NOW,
    });
    expect(c.build).toBe('19.480-2');
    expect(c.builds).toEqual({});
    expect(c.running).toMatchObject({ kind: 'blocked', reason: 'halted' });
  });
});

/**
 * A kill of the process that acts, anywhere between its start and its end, never leaves an
 * action without its audit record nor a record without its action (issue #28): the built CLI
 * pauses and resumes an organization's part of a rollout on the test Redis, SIGKILLed after
 * delays spread over its whole life (before it connects, while it acts, after). Then every
 * operator event in the history has exactly one `allowed` audit record of the same action, in the
 * same order, and no allowed record is without its event: they are written in one Lua step
 * (rollout/life/audit-log.ts), so there is no "between" for a kill to fall in.
 */
import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { createState } from '../../../src/cli/boot/create-state.js';
import { AuditLog } from '../../../src/rollout/index.js';
import { spawnCliChild } from '../../support/cli-child.js';
import { useTestRedis } from '../../support/redis.js';
import { exitOf } from '../../support/rollout-harness.js';
import { TEST_SETTINGS } from '../../support/rollout-settings.js';

const ctx = useTestRedis();
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

describe('a SIGKILL of the acting process', () => {
  it('never separates an action from its audit record', async () => {
    const state = createState(ctx.redis, ctx.prefix);
    const { rollout } = await state.rollouts.start({
      policy: 'web',
      target: '19.470-4',
      build: '19.470-4',
      maxInFlight: 10,
      settings: TEST_SETTINGS,
      now: Date.now(),
    });
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      REDIS_URL: ctx.url,
      FLEET_UPGRADE_KEY_PREFIX: ctx.prefix,
    };
    let killedEarly = 0;
    let done = 0;
    // Kills spread over a command's life (before it reads Redis, while it writes, after it
    // ended), then a few that run to their end: both sides of any instant are exercised however
    // loaded the machine is.
    const RUNS = 16;
    const KILLED = 12;
    for (let i = 0; i < RUNS; i++) {
      const paused = ((await state.rollouts.get(rollout.id))?.pausedOrgs ?? []).length > 0;
      const child = spawnCliChild(
        [paused ? 'resume' : 'pause', rollout.id, '--org', 'default'],
        env,
        children,
      );
      if (i < KILLED) {
        await new Promise((r) => setTimeout(r, i * 100));
        if (child.exitCode === null) {
          child.kill('SIGKILL');
          killedEarly++;
        }
      }
      const code = await exitOf(child, 30_000);
      if (code === 0) done++;
    }
    const events = (await state.events.history(rollout.id)).filter((e) => e.source === 'operator');
    const records = [];
    for await (const r of new AuditLog(ctx.redis, state.keys).read({ rollout: rollout.id })) records.push(r);
    const allowed = records.filter((r) => r.answer === 'allowed');
    // Each action once in each, in the same order, by the same person.
    expect(allowed.map((r) => r.what)).toEqual(
      events.map((e) => (e.type === 'rollout.paused' ? 'pause' : 'resume')),
    );
    expect(new Set(allowed.map((r) => r.who))).toEqual(new Set(events.map((e) => e.actor)));
    // `audit` on Redis gives the same records (JSON Lines), and a table for a person.
    const json = spawnCliChild(['audit', '--rollout', rollout.id, '--format', 'json'], env, children);
    expect(await exitOf(json, 20_000)).toBe(0);
    const lines = json.output().trim().split('\n').filter(Boolean);
    expect(lines.map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(records.map((r) => r.id));
    const table = spawnCliChild(['audit', '--user', allowed[0]?.who ?? '', '--since', '1h'], env, children);
    expect(await exitOf(table, 20_000)).toBe(0);
    expect(table.output()).toMatch(/^TIME \(UTC\) +WHO +WHAT +ROLLOUT +ANSWER +DETAIL\n/);
    expect(table.output()).toContain(`pause     ${rollout.id}`);
    const bad = spawnCliChild(['audit', '--since', 'yesterday'], env, children);
    expect(await exitOf(bad, 20_000)).toBe(64);
    expect(bad.output()).toMatch(/--since: expected a time .* or a duration back from now/);
    // The kills fell on both sides: some commands were cut short, some finished.
    expect(killedEarly).toBeGreaterThan(0);
    expect(events.length).toBeGreaterThan(0);
    expect(done + killedEarly).toBe(RUNS);
  }, 120_000);
});

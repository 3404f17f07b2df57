/**
 * Rings across policies through the built CLI (#21): three policies chained with `after`
 * (staging → canary → production), the real simulator over HTTP at an accelerated clock, the real
 * Redis. A new latest build appears in the simulator while `run` runs: staging starts it at once,
 * canary only once staging converged and soaked, production only once canary did; `status` names
 * each wait with its date. Then a build that halts in canary never starts in production.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { RolloutStatus } from '../../../src/rollout/index.js';
import type { FleetFileInput } from '../../../src/simulator/schema.js';
import { exitOf, type Harness, startHarness } from '../../support/rollout-harness.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

const SCALE = 600; // 1 real second is 10 simulated minutes
const SOAK_MS = 3_600_000; // 1h simulated: 6 real seconds
let harness: Harness | undefined;
let receiver: WebhookReceiver | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await receiver?.close();
  receiver = undefined;
});

const RINGS = { staging: [1, 2, 3], canary: [4, 5, 6], production: [7, 8, 9] };

function fleet(): FleetFileInput {
  return {
    builds: ['19.400-5', '19.450-12'],
    collectors: Array.from({ length: 9 }, (_, i) => ({
      id: i + 1,
      version: '19.450-12',
      outcome: 'succeed' as const,
      upgradeSeconds: 120,
    })),
    behaviour: { incrementalAbove: 0 },
  };
}

const common = { maxInFlight: 3, poll: { initial: '30s', max: '1m' } };

/** Runs a command of the built CLI to its end; its output with its lines joined (status wraps them). */
async function cli(h: Harness, args: string[]): Promise<{ code: number | null; out: string }> {
  const child = h.spawnCli(args);
  const code = await exitOf(child, 30_000);
  return { code, out: child.output().replace(/\n {2}/g, ' ') };
}

async function release(h: Harness, version: string): Promise<void> {
  const res = await fetch(`${h.sim.url}/_sim/builds`, { method: 'POST', body: JSON.stringify({ version }) });
  expect(res.status).toBe(201);
}

const find = (rollouts: readonly RolloutStatus[], id: string) => rollouts.find((r) => r.id === id);

describe('rings: staging → canary → production', () => {
  it('a new latest build goes ring by ring, each after the previous converged and soaked; a halt in canary keeps production from starting', async () => {
    harness = await startHarness({
      timeScale: SCALE,
      fleet: fleet(),
      policy: { name: 'staging', select: { ids: RINGS.staging }, ...common },
    });
    const h = harness;
    const dir = dirname(h.policyFile);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'canary.yaml'),
      stringify({
        name: 'canary',
        select: { ids: RINGS.canary },
        after: { policy: 'staging', soak: '1h' },
        failureGate: { failed: { max: 0 } },
        ...common,
      }),
    );
    writeFileSync(
      join(dir, 'production.yaml'),
      stringify({
        name: 'production',
        select: { ids: RINGS.production },
        after: { policy: 'canary', soak: '1h', require: { verifiedRatio: 0.95 } },
        ...common,
      }),
    );
    // The ring events go to a webhook too.
    const r = await startWebhookReceiver();
    receiver = r;
    // In a folder of its own under the policies' (which are read from the folder itself only).
    mkdirSync(join(dir, 'settings'));
    const settings = join(dir, 'settings', 'fleet-upgrade.yaml');
    writeFileSync(
      settings,
      stringify({
        webhooks: [
          {
            name: 'rings',
            url: `${r.url}/rings`,
            secretEnv: 'RINGS_WEBHOOK_SECRET',
            retry: { initial: '100ms', max: '500ms' },
          },
        ],
      }),
    );
    h.env.RINGS_WEBHOOK_SECRET = 'whsec-rings-e2e-4b1d';
    const run = h.spawnCli(['run', '--config', settings, '--policies', dir, '--listen', '127.0.0.1:0']);
    // The fleet is on the latest build: nothing to do yet.
    await new Promise((r) => setTimeout(r, 2000));
    expect((await h.simStats()).tasksCreated, run.output()).toBe(0);

    await release(h, '19.470-4');
    // Staging at once; canary and production wait, and say for what.
    const s1 = await h.waitFor((s) => find(s.rollouts, 'staging@19.470-4') !== undefined, 20_000);
    expect(find(s1.rollouts, 'canary@19.470-4')).toBeUndefined();
    expect(find(s1.rollouts, 'production@19.470-4')).toBeUndefined();

    const s2 = await h.waitFor((s) => find(s.rollouts, 'staging@19.470-4')?.phase === 'converged', 30_000);
    const stagingDone = find(s2.rollouts, 'staging@19.470-4')?.convergedAt as number;
    expect(stagingDone).toBeGreaterThan(0);
    // Soaking in staging: status says until when.
    const waiting = await h.waitFor(
      (s) => s.targetWaits.some((w) => w.policy === 'canary' && w.reason === 'soaking'),
      10_000,
    );
    const canaryWait = waiting.targetWaits.find((w) => w.policy === 'canary');
    expect(canaryWait?.until).toBe(stagingDone + SOAK_MS);
    expect(find(waiting.rollouts, 'canary@19.470-4')).toBeUndefined();
    const shown = await cli(h, ['status']);
    expect(shown.code, shown.out).toBe(0);
    expect(shown.out).toMatch(
      /canary.*19\.470-4 soaks in staging until \d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)? \(UTC\)/,
    );
    expect(shown.out).toMatch(/production.*19\.470-4 has not started in canary yet/);
    // plan decides as the daemon does: nothing would start in production now (canary has not
    // started the build: two soaks away, 12 real seconds), and it says why.
    const planned = await cli(h, ['plan', '--policy', join(dir, 'production.yaml'), '--json']);
    expect(planned.code, planned.out).toBe(0);
    const plan = JSON.parse(planned.out) as { builds: object; collectors: unknown[]; notes: string[] };
    expect(plan.builds).toEqual({});
    expect(plan.collectors).toEqual([]);
    expect(plan.notes).toEqual([
      'policy production: 19.470-4 has not started in canary yet',
      'policy production: no build would start now (after canary)',
    ]);

    // Canary only after the soak; production only after canary converged and soaked.
    const s3 = await h.waitFor((s) => find(s.rollouts, 'canary@19.470-4') !== undefined, 30_000);
    expect(find(s3.rollouts, 'canary@19.470-4')?.startedAt).toBeGreaterThanOrEqual(stagingDone + SOAK_MS);
    expect(find(s3.rollouts, 'production@19.470-4')).toBeUndefined();
    const s4 = await h.waitFor((s) => find(s.rollouts, 'canary@19.470-4')?.phase === 'converged', 30_000);
    const canaryDone = find(s4.rollouts, 'canary@19.470-4')?.convergedAt as number;
    const soaking = await cli(h, ['status']);
    expect(soaking.out).toMatch(
      /production.*19\.470-4 soaks in canary until \d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)? \(UTC\)/,
    );
    const s5 = await h.waitFor((s) => find(s.rollouts, 'production@19.470-4')?.phase === 'converged', 60_000);
    expect(find(s5.rollouts, 'production@19.470-4')?.startedAt).toBeGreaterThanOrEqual(canaryDone + SOAK_MS);
    const onBuild = (await h.simCollectors()).filter((c) => c.version === '19.470-4').map((c) => c.id);
    expect(onBuild).toEqual([...RINGS.staging, ...RINGS.canary, ...RINGS.production]);

    // A build that fails in canary: the ring halts, production never starts it and says why.
    for (const id of RINGS.canary)
      await fetch(`${h.sim.url}/_sim/collectors/${id}`, {
        method: 'PATCH',
        body: JSON.stringify({ outcome: 'fail' }),
      });
    await release(h, '19.480-2');
    await h.waitFor((s) => find(s.rollouts, 'staging@19.480-2')?.phase === 'converged', 30_000);
    const halted = await h.waitFor((s) => find(s.rollouts, 'canary@19.480-2')?.phase === 'halted', 60_000);
    expect(find(halted.rollouts, 'production@19.480-2')).toBeUndefined();
    const blocked = await h.waitFor(
      (s) => s.targetWaits.some((w) => w.policy === 'production' && w.reason === 'halted'),
      10_000,
    );
    expect(blocked.targetWaits.find((w) => w.policy === 'production')?.build).toBe('19.480-2');
    // Longer than production's soak: still nothing there.
    await new Promise((r) => setTimeout(r, 2 * (SOAK_MS / SCALE)));
    const later = await h.status();
    expect(find(later.rollouts, 'production@19.480-2')).toBeUndefined();
    const prodIds = new Set(RINGS.production);
    const prodTasks = (await h.simCollectors())
      .filter((c) => prodIds.has(c.id))
      .flatMap((c) => c.tasks.filter((t) => t.toVersion === '19.480-2'));
    expect(prodTasks).toEqual([]);
    const haltShown = await cli(h, ['status']);
    expect(haltShown.out).toMatch(/production.*19\.480-2 halted in canary/);
    // plan: production stays on its build, with nothing left to move, and says why.
    const prodPlan = await cli(h, ['plan', '--policy', join(dir, 'production.yaml'), '--json']);
    expect(prodPlan.code, prodPlan.out).toBe(0);
    const pp = JSON.parse(prodPlan.out) as { builds: object; collectors: unknown[]; notes: string[] };
    expect(pp.builds).toEqual({ default: '19.470-4' });
    expect(pp.collectors).toEqual([]);
    expect(pp.notes).toEqual([
      expect.stringMatching(/^policy production: 19\.480-2 halted in canary/),
      'policy production: its rollout production@19.470-4 goes on (a rollout never goes back)',
    ]);
    const planText = await cli(h, ['plan', '--policy', join(dir, 'production.yaml')]);
    expect(planText.out).toMatch(
      /0 of \d+ offered Collectors would move to 19\.470-4.*19\.480-2 halted in canary/s,
    );
    const history = await cli(h, ['history', 'production@19.480-2', '--json']);
    const types = (JSON.parse(history.out) as { events: { type: string }[] }).events.map((e) => e.type);
    expect(types).toContain('ring.waiting');
    // The webhook got the ring events, each about the later ring's rollout of the build.
    const sent = () =>
      r.requests
        .filter((q) => q.status >= 200 && q.status < 300)
        .map((q) => JSON.parse(q.body) as { type: string; rollout: string; detail: Record<string, unknown> });
    const deadline = Date.now() + 15_000;
    while (!sent().some((e) => e.rollout === 'production@19.480-2' && e.detail.reason === 'halted')) {
      if (Date.now() > deadline)
        throw new Error(
          `no ring.waiting (halted) sent: ${JSON.stringify(sent().map((e) => [e.type, e.rollout]))}`,
        );
      await new Promise((res) => setTimeout(res, 200));
    }
    const ringEvents = sent()
      .filter((e) => e.type.startsWith('ring.'))
      .map((e) => `${e.rollout} ${e.type}`);
    expect(ringEvents).toEqual(
      expect.arrayContaining([
        'canary@19.470-4 ring.waiting',
        'canary@19.470-4 ring.released',
        'production@19.470-4 ring.waiting',
        'production@19.470-4 ring.released',
        'production@19.480-2 ring.waiting',
      ]),
    );
    expect(ringEvents).not.toContain('production@19.480-2 ring.released');
    const released = await cli(h, ['history', 'production@19.470-4', '--json']);
    const told = (JSON.parse(released.out) as { events: { type: string }[] }).events.map((e) => e.type);
    expect(told).toEqual(expect.arrayContaining(['ring.waiting', 'ring.released', 'rollout.started']));
  }, 240_000);
});

/**
 * `target: latest` resolves in each organization's build list, and one deployment of the service
 * may offer a new build days after another. When an organization's latest moves on during a
 * rollout, its Collectors whose create was not sent yet go to the new build (`retarget`, keeping
 * their place in the queue); a Collector already upgraded keeps the build it got (one task per
 * Collector in a rollout). Through the built CLI, two simulator processes, the real Redis.
 */
import { afterEach, expect, it } from 'vitest';
import { stopLineChildren } from '../../support/line-child.js';
import { type OrgsHarness, orgFleet, startOrgsHarness } from '../../support/orgs-harness.js';

let h: OrgsHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  await stopLineChildren();
});

it("sends an organization's Collectors not sent yet to its new latest build, once it offers one", async () => {
  h = await startOrgsHarness({
    timeScale: 300,
    orgs: [
      {
        name: 'us',
        fleet: orgFleet('us', {
          builds: ['19.400-5', '19.470-4', '19.480-2'],
          count: 2,
          upgradeSeconds: 600,
          incrementalAbove: 0,
        }),
      },
      // eu offers 19.480-2 only later; one Collector at a time, 20 minutes each.
      { name: 'eu', fleet: orgFleet('eu', { count: 5, upgradeSeconds: 1200, incrementalAbove: 0 }) },
    ],
    policy: {
      name: 'everywhere',
      target: 'latest',
      maxInFlight: 3,
      maxInFlightPerOrg: 1,
      verify: false,
      poll: { initial: '60s', max: '2m' },
    },
  });
  const harness = h;
  const eu = harness.orgs.get('eu');
  if (!eu) throw new Error('no organization eu');
  harness.env.LOG_LEVEL = 'info';
  const run = harness.spawnRun();
  // eu's first task runs (to its latest, 19.470-4); then the service there offers 19.480-2.
  const deadline = Date.now() + 20_000;
  while ((await eu.stats()).tasksCreated < 1) {
    if (Date.now() > deadline) throw new Error(`no task in eu:\n${run.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  expect(await eu.send('POST', '/_sim/builds', { version: '19.480-2' })).toBe(201);

  const done = await harness.waitFor((s) => s.rollouts[0]?.phase === 'converged', 90_000);
  const rollout = done.rollouts[0];
  expect(rollout?.id).toBe('everywhere@19.480-2');
  expect(rollout?.counts).toEqual({ succeeded: 7 });
  const tasks = (await eu.collectors()).map((c) => ({ id: c.id, to: c.tasks.map((t) => t.toVersion) }));
  // One task each: the first to the build eu offered then, every other to the new one.
  expect(tasks.filter((c) => c.to.length !== 1)).toEqual([]);
  const first = tasks.filter((c) => c.to[0] === '19.470-4');
  expect(first, JSON.stringify(tasks)).toHaveLength(1);
  expect(tasks.filter((c) => c.to[0] === '19.480-2')).toHaveLength(4);
  const records = await harness.records('everywhere@19.480-2');
  const euRecords = records.filter((r) => r.org === 'eu');
  const ids = (list: { id: number }[]) => list.map((c) => c.id).sort((a, b) => a - b);
  expect(ids(euRecords.filter((r) => r.to === '19.480-2'))).toEqual(
    ids(tasks.filter((c) => c.to[0] === '19.480-2')),
  );
  expect(run.output()).toMatch(/"retargeted":4/);
}, 120_000);

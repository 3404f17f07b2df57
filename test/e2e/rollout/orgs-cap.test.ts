/**
 * maxInFlightPerOrg with free slots left: an organization at its cap is passed over, and the
 * next Collectors in the order, of the other organizations, take the free slots. (Found by the
 * chaos test across organizations: the admitter took the head of the order, all of one capped
 * organization, and the store refused them one by one; another organization started nothing for
 * minutes while slots stood free.)
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

it('passes over an organization at its maxInFlightPerOrg: the others take the free slots', async () => {
  h = await startOrgsHarness({
    timeScale: 60,
    orgs: [
      { name: 'big', fleet: orgFleet('big', { count: 10, upgradeSeconds: 1200 }) },
      { name: 'small', fleet: orgFleet('small', { count: 3, upgradeSeconds: 1200 }) },
    ],
    policy: {
      name: 'p',
      maxInFlight: 4,
      maxInFlightPerOrg: 2,
      verify: false,
      poll: { initial: '60s', max: '2m' },
    },
  });
  const harness = h;
  harness.spawnRun();
  // Both organizations reach their cap, well within the upgrades' 20 simulated minutes.
  await harness.waitFor((s) => (s.rollouts[0]?.inflight ?? 0) >= 4, 30_000);
  const stats = async (org: string) => {
    const sim = harness.orgs.get(org);
    if (!sim) throw new Error(`no organization ${org}`);
    return sim.stats();
  };
  // Admitted is not yet created: wait (bounded) for the creates to reach the services.
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline && (await stats('big')).tasksCreated + (await stats('small')).tasksCreated < 4)
    await new Promise((r) => setTimeout(r, 50));
  expect((await stats('big')).tasksCreated).toBe(2);
  expect((await stats('small')).tasksCreated).toBe(2);
  expect((await stats('big')).maxConcurrentTasks).toBeLessThanOrEqual(2);
}, 60_000);

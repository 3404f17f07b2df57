/**
 * A rollout's first scan admits page by page, and the tasks it starts take their Collectors off
 * the listing it is still walking: the rest move forward. The walk steps back for them
 * (walk-collector-pages.ts, `left`), so the first scan records every Collector the listing
 * offered. It skipped about one Collector per task started before each page: those waited for
 * the next scan (5 minutes later; at 100,000 Collectors a few dozen did).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FleetFileInput } from '../../../src/simulator/schema.js';
import { type Harness, startHarness } from '../../support/rollout-harness.js';

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const fleet: FleetFileInput = {
  builds: ['19.400-5', '19.450-12', '19.470-4'],
  users: [{ accessId: 'ops', accessKey: 'ops-secret' }],
  generate: { count: 400, seed: 9, hostedRatio: 0, offlineRatio: 0, upToDateRatio: 0 },
  behaviour: { upgradeSeconds: { median: 600, p95: 900 }, failureRatio: 0, stuckRatio: 0 },
  seed: 9,
};

describe("a rollout's first scan", () => {
  it('records every listed Collector although the tasks it starts leave the listing under it', async () => {
    harness = await startHarness({
      timeScale: 60,
      fleet,
      policy: { name: 'first-scan', maxInFlight: 40, pageSize: 50 },
    });
    const h = harness;
    const listed = (await h.simCollectors()).length;
    await h.startRun();
    // Until the first scan has ended (bounded).
    let rollout: Awaited<ReturnType<typeof h.state.rollouts.list>>[number] | undefined;
    for (let i = 0; i < 300 && !(rollout && rollout.scans > 0); i++) {
      await new Promise((r) => setTimeout(r, 20));
      rollout = (await h.state.rollouts.list())[0];
    }
    expect(rollout?.scans).toBe(1);
    const tasks = (await h.simStats()).tasksCreated;
    const records = await h.records(rollout?.id);
    // Tasks started while the scan went on, and none of the rest was skipped.
    expect(tasks).toBeGreaterThan(0);
    expect(records.length).toBe(listed);
  });
});

/**
 * An operator's action is confirmed on a replica before its command exits (with-control.ts):
 * on Debian's real Sentinel, with replication cut off (the replica can no longer authenticate to
 * its primary), `pause` still pauses (on the primary) and exits 0, but says on stderr that a
 * failover now could undo it; once replication is back, `resume` says nothing of the kind.
 * Needs the built CLI (dist/).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ask, type SentinelTopology, startSentinelTopology, within } from '../../support/redis-topology.js';
import { rehearsalFleet } from '../../support/rehearsal-fleet.js';
import { exitOf, type Harness, startHarness } from '../../support/rollout-harness.js';

let topology: SentinelTopology | undefined;
let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await topology?.stop();
  topology = undefined;
});

async function command(
  h: Harness,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = h.spawnCli(args);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const code = await exitOf(child, 20_000);
  return { code, stdout, stderr };
}

describe('an operator action on Sentinel', () => {
  it('is confirmed on the replica, and says so when it cannot be', async () => {
    topology = await startSentinelTopology();
    const t = topology;
    harness = await startHarness({
      fleet: rehearsalFleet(60, 7),
      timeScale: 100,
      policy: { name: 'wait', maxInFlight: 5, poll: { initial: '30s', max: '2m' } },
      redis: { target: t.target(), env: t.env() },
      env: { FLEET_UPGRADE_STALLED_INTERVAL: '5s' },
    });
    const h = harness;
    h.spawnCli(['run', '--policy', h.policyFile, '--listen', '127.0.0.1:0']);
    const started = await h.waitFor((s) => s.rollouts[0]?.phase === 'running', 20_000);
    const id = started.rollouts[0]?.id as string;

    const primary = await t.primary();
    await t.holdReplication(t.replicaOf(primary));
    const cut = await command(h, ['pause', id]);
    expect(cut.code, cut.stderr).toBe(0);
    expect(cut.stdout).toMatch(/paused/i);
    expect(cut.stderr).toMatch(
      /not yet on a replica .*0 of 1 replica\(s\) acknowledged.*a failover now could undo it/,
    );
    expect((await h.status()).rollouts[0]?.phase).toBe('paused');

    const replica = t.replicaOf(primary);
    await t.releaseReplication(replica);
    await within(15_000, 'the replica is back in sync', async () =>
      /master_link_status:up/.test(String(await ask(replica.port, t.password, 'INFO', 'replication'))),
    );
    const back = await command(h, ['resume', id]);
    expect(back.code, back.stderr).toBe(0);
    expect(back.stderr).not.toMatch(/replica/);
  }, 60_000);
});

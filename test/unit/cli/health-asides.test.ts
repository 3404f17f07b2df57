/**
 * What `status` says of a rollout's verification by health events (cli/render/explain-rollout.ts):
 * how Collectors under verification are judged, how many a new health event made unhealthy, and
 * a build judged by heartbeat only.
 */
import { describe, expect, it } from 'vitest';
import { explainRollout } from '../../../src/cli/render/explain-rollout.js';
import type { StateCounts } from '../../../src/rollout/collector/index.js';
import { type RolloutRecord, rolloutStatus } from '../../../src/rollout/life/index.js';

const NOW = Date.UTC(2026, 10, 29, 2, 0, 0);
const VERIFY = { withinMs: 600_000, bakeMs: 300_000, intervalMs: 60_000 };
const HEALTH = { severities: ['Error'], ignore: [] };

function explain(id: string, counts: StateCounts, fields: Partial<RolloutRecord>, health: boolean) {
  const record = {
    id,
    policy: id.split('@')[0] as string,
    target: 'latest',
    build: id.split('@')[1] as string,
    phase: 'running',
    startedAt: 0,
    updatedAt: 0,
    maxInFlight: 50,
    settings: { verify: { ...VERIFY, ...(health ? { health: HEALTH } : {}) } },
    statusReads: 0,
    createRequests: 0,
    scans: 1,
    wave: { index: 0, seq: 0 },
    canaries: 0,
    ...fields,
  } as RolloutRecord;
  return explainRollout(rolloutStatus(record, counts), NOW);
}

describe('status: health-event verdicts', () => {
  it('says Collectors under verification must raise no new health event, and how many did', () => {
    expect(
      explain('linux@19.470-4', { verifying: 3, unhealthy: 4, succeeded: 16 }, { healthUnhealthy: 4 }, true),
    ).toBe(
      '3 upgraded, verifying they stay alive on the build and raise no new health event; ' +
        '4 unhealthy by a new health event (the service says a Source stopped collecting; `fleet-upgrade report linux@19.470-4` names the tracker)',
    );
  });

  it('without health events in the policy: the heartbeat only, as before', () => {
    expect(explain('linux@19.470-4', { verifying: 3 }, {}, false)).toBe(
      '3 upgraded, verifying they stay alive on the build',
    );
  });

  it('a build before 19.308-2 is judged by heartbeat only, and says so', () => {
    expect(explain('old@19.300-7', { verifying: 2 }, {}, true)).toBe(
      '2 upgraded, verifying they stay alive on the build; judged by heartbeat only: 19.300-7 is older than 19.308-2, which sends no health events',
    );
  });
});

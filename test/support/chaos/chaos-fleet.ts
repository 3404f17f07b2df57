/**
 * The fleet of one organization and the policy of the chaos scenario (issues 12 and 17): every
 * fault the simulator has, at once, and a policy under which each Collector gets at most one task
 * in the rollout, so that "no Collector has two tasks" is an invariant and not a matter of degree.
 * The three organizations of the scenario: chaos-orgs.ts.
 *
 * Faults (simulated time): 5 % of API requests answered 500/503 before anything is done; 2 % of
 * the connections dropped after the request was carried out (a create whose task runs but whose
 * answer never arrives); latency; flapping Collectors (online ~20 min, offline ~5 min, mean);
 * Collectors offline for good, and some that come back; Collectors whose tasks get stuck (the
 * service times them out after 30 minutes) or fail. 429 bursts come from a second client on
 * the same key (noisy-neighbour.ts), as they do in real life. An organization may also suffer
 * faults of its own for a while (`schedule`: a 429 storm, an outage).
 */
import type { FleetFileInput } from '../../../src/simulator/schema.js';

export const CHAOS_BUILDS = ['19.400-5', '19.450-12', '19.470-4'] as const;

export interface ChaosFleetOptions {
  /** Collectors in the fleet (explicit ones included). */
  collectors: number;
  seed: number;
  /** The user's access key: the secret that must show nowhere. */
  accessId: string;
  accessKey: string;
  /** Builds, oldest to newest (the last is the latest); they must include 19.400-5 and 19.450-12. Default CHAOS_BUILDS. */
  builds?: readonly string[];
  /** Faults of the whole organization for a while (simulated seconds from the simulator's start). */
  schedule?: FaultWindow[];
}

/** A window of the fleet file's `faults.schedule`. */
export type FaultWindow = NonNullable<NonNullable<FleetFileInput['faults']>['schedule']>[number];

/** Explicit Collectors per 1,000: stuck, failing, offline for good, offline then back. */
const PER_THOUSAND = { stuck: 5, fail: 10, offline: 8, backOnline: 6 } as const;

export function chaosFleet(o: ChaosFleetOptions): FleetFileInput {
  const n = (perThousand: number) => Math.max(1, Math.round((o.collectors * perThousand) / 1000));
  const collectors: NonNullable<FleetFileInput['collectors']> = [];
  let id = 1;
  for (let i = 0; i < n(PER_THOUSAND.stuck); i++)
    collectors.push({ id: id++, version: '19.400-5', outcome: 'stuck' });
  for (let i = 0; i < n(PER_THOUSAND.fail); i++)
    collectors.push({ id: id++, version: '19.450-12', outcome: 'fail', upgradeSeconds: 40 + i * 7 });
  for (let i = 0; i < n(PER_THOUSAND.offline); i++)
    collectors.push({ id: id++, version: '19.400-5', alive: false });
  for (let i = 0; i < n(PER_THOUSAND.backOnline); i++)
    collectors.push({ id: id++, version: '19.450-12', alive: false, offlineForSeconds: 300 + i * 120 });
  return {
    builds: [...(o.builds ?? CHAOS_BUILDS)],
    users: [{ accessId: o.accessId, accessKey: o.accessKey }],
    collectors,
    generate: {
      count: Math.max(0, o.collectors - collectors.length),
      seed: o.seed,
      hostedRatio: 0.01,
      offlineRatio: 0.01,
      upToDateRatio: 0.03,
    },
    behaviour: {
      upgradeSeconds: { median: 120, p95: 400 },
      failureRatio: 0.04,
      stuckRatio: 0.003,
      // 19.400-5 → 19.470-4 goes through 19.450-12: a failure can leave a Collector in between.
      incrementalAbove: 1,
    },
    faults: {
      errorRatio: 0.05,
      dropRatio: 0.02,
      latencyMs: { min: 20, max: 300 },
      flapRatio: 0.03,
      flap: { onlineSeconds: 1200, offlineSeconds: 300 },
      ...(o.schedule?.length ? { schedule: o.schedule } : {}),
    },
    seed: o.seed,
  };
}

/**
 * The policy as its YAML file holds it; it covers every organization (no `orgs`: all), each going
 * to its own latest build. Every failure class ends `failed` (the default retries
 * `network` failures with a new task, by design: that would be a second task for one rollout);
 * a Collector that is not alive is tried 3 times, 5 minutes apart. Verification stays on (the
 * product's default): a success must be seen alive on the build.
 */
export function chaosPolicy(maxInFlight: number, maxInFlightPerOrg?: number): Record<string, unknown> {
  return {
    name: 'chaos',
    target: 'latest',
    maxInFlight,
    ...(maxInFlightPerOrg ? { maxInFlightPerOrg } : {}),
    failureCauses: {
      actions: {
        disk_space: 'fail',
        upgrades_disabled: 'fail',
        permission: 'fail',
        network: 'fail',
        unknown: 'fail',
      },
    },
    retry: { notAlive: { attempts: 3, backoff: '5m' } },
    poll: { initial: '60s', max: '3m' },
    verify: { within: '10m', bake: '3m', interval: '1m' },
  };
}

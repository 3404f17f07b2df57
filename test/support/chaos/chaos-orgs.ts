/**
 * The three organizations of the chaos scenario (issue 17): three deployments of the service,
 * each its own simulator process, fleet, credentials and builds (so its own latest build, the
 * rollout's target there), with Collector ids that repeat across them. One of them (`apac`)
 * suffers a 429 storm and, later, an outage of the whole organization (its fleet file's
 * `faults.schedule`), on top of the faults every organization has (chaos-fleet.ts). The noisy
 * neighbour's 429 bursts go to the two others: in the stormy one the neighbour's own 429s could
 * not be told from the storm's, and so ours from the rate limit's.
 */
import { randomBytes } from 'node:crypto';
import type { FleetFileInput } from '../../../src/simulator/schema.js';
import type { FaultPlan } from './chaos-figures.js';
import { chaosFleet, type FaultWindow } from './chaos-fleet.js';

export interface ChaosOrg {
  name: string;
  /** Its latest build: the rollout's target there. */
  target: string;
  accessId: string;
  accessKey: string;
  /** Where the settings take its key from: a file of its own, or a variable (`keyVar`). */
  keyFrom: 'file' | 'env';
  keyVar: string;
  /** Its faults of the whole organization (simulated seconds from its simulator's start). */
  schedule: FaultWindow[];
  /** Whether a second client of its user sends 429 bursts. */
  neighbour: boolean;
  fleet: FleetFileInput;
}

/** Share of the Collectors, builds and key source of each organization; the last one has the storm and the outage. */
const ORGS = [
  { name: 'amer', share: 0.4, builds: ['19.400-5', '19.450-12', '19.470-4'], keyFrom: 'file' },
  { name: 'emea', share: 0.3, builds: ['19.400-5', '19.450-12', '19.480-2'], keyFrom: 'env' },
  { name: 'apac', share: 0.3, builds: ['19.400-5', '19.450-12', '19.460-7'], keyFrom: 'file' },
] as const;

export const STORMY_ORG = 'apac';

export function chaosOrgs(o: { collectors: number; seed: number; faults: FaultPlan }): ChaosOrg[] {
  let left = o.collectors;
  return ORGS.map((spec, i) => {
    const collectors = i === ORGS.length - 1 ? left : Math.round(o.collectors * spec.share);
    left -= collectors;
    const accessId = `chaos-${spec.name}`;
    const accessKey = `chaoskey${randomBytes(16).toString('hex')}`;
    const schedule: FaultWindow[] =
      spec.name === STORMY_ORG
        ? [
            {
              kind: 'rateLimitStorm',
              from: o.faults.storm.fromMinutes * 60,
              for: o.faults.storm.forMinutes * 60,
              ratio: o.faults.storm.ratio,
            },
            {
              kind: 'outage',
              from: o.faults.outage.fromMinutes * 60,
              for: o.faults.outage.forMinutes * 60,
              mode: o.faults.outage.mode,
            },
          ]
        : [];
    return {
      name: spec.name,
      target: spec.builds[spec.builds.length - 1] as string,
      accessId,
      accessKey,
      keyFrom: spec.keyFrom,
      keyVar: `CHAOS_${spec.name.toUpperCase()}_ACCESS_KEY`,
      schedule,
      neighbour: spec.name !== STORMY_ORG,
      fleet: chaosFleet({
        collectors,
        seed: o.seed + i,
        accessId,
        accessKey,
        builds: spec.builds,
        schedule,
      }),
    };
  });
}

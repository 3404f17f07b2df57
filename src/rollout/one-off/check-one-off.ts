/**
 * What a one-off asks the service before it is written (`fleet-upgrade upgrade`, cli/boot/
 * check-one-off.ts, and `POST /upgrades`): the build list (a build it does not offer is refused:
 * the one-off could never start; `latest` is resolved) and the inventory (ceil(N / 1000) requests):
 * each named Collector is installed there (not hosted, not unknown) and not on the build already;
 * one that is offline is named and kept. A service that cannot be asked is said in one sentence.
 */
import type { CollectorUpgradeClient } from '../../api/index.js';
import { FleetError } from '../../lib/errors.js';
import { LATEST } from '../../policy/schema.js';
import { DEFAULT_ORG } from '../collector/index.js';

/** Builds named when the build is refused, at most (the newest). */
const OFFERS_SHOWN = 8;

/** Why a named Collector is left out of the one-off (`hosted`, `unknown`), or only named (`offline`, `current`). */
export type CollectorFinding = 'hosted' | 'unknown' | 'offline' | 'current';

export interface OneOffCheck {
  /** The build `--to` names, or `latest` resolved (undefined: the service could not be asked). */
  build?: string;
  /** What the inventory says of the named Collectors that are not simply upgradable. */
  findings: Map<number, CollectorFinding>;
  /** Why the service could not be asked (or its inventory not read), in one sentence. */
  unchecked?: string;
}

export const whereOf = (org: string) => (org === DEFAULT_ORG ? 'the service' : `the service of org ${org}`);

/**
 * The check itself, with a client at hand (the command's own, or the daemon's for `POST /upgrades`,
 * which it does not close). Throws FLEET_ERR_USAGE when the build is not offered.
 */
export async function checkOneOffWith(
  client: CollectorUpgradeClient,
  input: { org: string; to: string; collectors: readonly number[] },
): Promise<OneOffCheck> {
  const findings = new Map<number, CollectorFinding>();
  const where = whereOf(input.org);
  let targets: Awaited<ReturnType<CollectorUpgradeClient['listTargets']>>;
  try {
    targets = await client.listTargets();
  } catch (err) {
    return { findings, unchecked: `could not ask ${where}: ${(err as Error).message}` };
  }
  const build =
    input.to === LATEST
      ? targets.find((t) => t.latest)?.version
      : targets.find((t) => t.version === input.to)?.version;
  if (!build) {
    const offers = targets.slice(-OFFERS_SHOWN).map((t) => (t.latest ? `${t.version} (latest)` : t.version));
    throw new FleetError(
      'FLEET_ERR_USAGE',
      `--to: ${where} does not offer ${input.to === LATEST ? 'a latest build' : `build ${input.to}`} (${offers.length ? `it offers ${offers.join(', ')}` : 'it offers none'}); nothing was started`,
    );
  }
  const wanted = new Set(input.collectors);
  const seen = new Set<number>();
  try {
    for await (const page of client.inventoryPages())
      for (const c of page) {
        if (!wanted.has(c.id)) continue;
        seen.add(c.id);
        if (c.collectorType.toLowerCase() === 'hosted') findings.set(c.id, 'hosted');
        else if (c.collectorVersion === build) findings.set(c.id, 'current');
        else if (!c.alive) findings.set(c.id, 'offline');
      }
  } catch (err) {
    return {
      build,
      findings: new Map(),
      unchecked: `could not read the inventory of ${where}: ${(err as Error).message}`,
    };
  }
  for (const id of input.collectors) if (!seen.has(id)) findings.set(id, 'unknown');
  return { build, findings };
}

/** A named Collector's line in the command's output. */
export function describeFinding(id: number, finding: CollectorFinding, org: string, build: string): string {
  const inOrg = org === DEFAULT_ORG ? '' : ` of org ${org}`;
  switch (finding) {
    case 'hosted':
      return `Collector ${id}${inOrg}: hosted (the service runs and upgrades hosted Collectors itself): left out`;
    case 'unknown':
      return `Collector ${id}: not found in the inventory of ${org === DEFAULT_ORG ? 'the organization' : `org ${org}`}: left out`;
    case 'current':
      return `Collector ${id}${inOrg}: already on ${build}: left out (nothing to do)`;
    case 'offline':
      return `Collector ${id}${inOrg}: offline now: upgraded if it comes back while the one-off runs`;
  }
}

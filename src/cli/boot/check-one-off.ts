/**
 * What `fleet-upgrade upgrade` asks the service before it writes a one-off, when the command can
 * reach it (the organization's settings and key are where the command runs; it needs only Redis
 * otherwise, and the daemon finds out):
 * - the build list: `--to BUILD` must be a build the organization's service offers (a one-off of
 *   one it does not offer could never start), and `latest` is resolved to tell which;
 * - the inventory (`GET collectors`, ceil(N / 1000) requests): each named Collector is installed
 *   in that organization (not hosted: the service upgrades those itself; not unknown there), and
 *   not on the build already. One that is offline is named, and kept: it is upgraded if it comes
 *   back while the one-off runs.
 * A service that cannot be asked (no key here, not answering) is said in one sentence; the
 * command then goes on as before. Nothing here logs a key.
 */
import type { CollectorUpgradeClient } from '../../api/index.js';
import { ConfigError, FleetError } from '../../lib/errors.js';
import { createLogger } from '../../lib/logger.js';
import { LATEST } from '../../policy/schema.js';
import { DEFAULT_ORG, type Keys } from '../../rollout/index.js';
import { createApi } from './create-api.js';
import { loadDaemonConfig } from './daemon-config.js';

/** Builds named when `--to` is refused, at most (the newest). */
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

/** The client of `org`'s service as this command can build it, or why it cannot. */
function clientOf(
  flags: { config?: string },
  org: string,
  state: { redis: Parameters<typeof createApi>[0]['redis']; keys: Keys },
): { client: CollectorUpgradeClient } | { why: string } {
  let config: ReturnType<typeof loadDaemonConfig>;
  try {
    config = loadDaemonConfig({ env: process.env, flags, needApi: true });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { why: `its settings are not complete here (${err.issues[0]?.reason ?? err.message})` };
  }
  const settings = config.orgs.find((o) => o.name === org);
  if (!settings) return { why: `the settings name no organization '${org}'` };
  const { client } = createApi({
    api: settings.api,
    org,
    config,
    ...(state.redis ? { redis: state.redis } : {}),
    keys: state.keys,
    logger: createLogger({ level: 'silent' }),
  });
  return { client };
}

export async function checkOneOff(input: {
  flags: { config?: string };
  org: string;
  to: string;
  collectors: readonly number[];
  state: { redis: Parameters<typeof createApi>[0]['redis']; keys: Keys };
}): Promise<OneOffCheck> {
  const findings = new Map<number, CollectorFinding>();
  const got = clientOf(input.flags, input.org, input.state);
  const where = input.org === DEFAULT_ORG ? 'the service' : `the service of org ${input.org}`;
  if ('why' in got) return { findings, unchecked: `could not ask ${where}: ${got.why}` };
  const { client } = got;
  try {
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
      const offers = targets
        .slice(-OFFERS_SHOWN)
        .map((t) => (t.latest ? `${t.version} (latest)` : t.version));
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
  } finally {
    await client.close();
  }
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

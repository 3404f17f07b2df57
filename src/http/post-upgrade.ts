/**
 * `POST /upgrades`: a one-off rollout of the named Collectors, with the checks of `fleet-upgrade
 * upgrade` (rollout/one-off/check-one-off.ts) through the daemon's own client of the
 * organization's service: a build it does not offer is a 400 and nothing is written; a hosted or
 * unknown Collector is named and left out, one already on the build too, an offline one named and
 * kept. The answer: 201 with the one-off's name and what was said of each named Collector; 409
 * when none of them is left to upgrade (nothing written), with what was said of each too (so that
 * `upgrade --server` prints what the command prints on Redis). The caller has passed the control gate
 * (control-gate.ts) and its body is parsed (schema.ts `UpgradeBody`).
 */
import type { ServerResponse } from 'node:http';
import type { Redis } from 'ioredis';
import type { CollectorUpgradeClient } from '../api/index.js';
import type { Clock } from '../lib/clock.js';
import { FleetError } from '../lib/errors.js';
import {
  type AuditNote,
  checkOneOffWith,
  DEFAULT_ORG,
  describeFinding,
  type Keys,
  OneOffPolicies,
} from '../rollout/index.js';
import { HttpError, sendJson } from './http-error.js';
import type { UpgradeBody } from './schema.js';

/** What `POST /upgrades` needs of the daemon: its organizations and a client of each one's service. */
export interface OneOffDeps {
  redis: Redis;
  keys: Keys;
  clock: Clock;
  /** The organizations of the settings, in their order. */
  orgs: readonly string[];
  /** The daemon's client of an organization's service (not closed here). */
  client(org: string): CollectorUpgradeClient;
}

/**
 * The organization of the ids: the body's (one the settings name), or the settings' only one; a
 * 400 otherwise (asked before the caller's organizations are: a usage error is one for everyone).
 */
export function oneOffOrgOf(body: UpgradeBody, orgs: readonly string[]): string {
  if (body.org !== undefined) {
    if (orgs.includes(body.org)) return body.org;
    throw new HttpError(
      'invalid',
      `org: the settings name no organization '${body.org}' (they name ${orgs.join(', ')})`,
    );
  }
  if (orgs.length === 1) return orgs[0] as string;
  throw new HttpError(
    'invalid',
    `org is required: Collector ids repeat across organizations, and the settings name ${orgs.length} (${orgs.join(', ')})`,
  );
}

/** The findings a refusal names: the first ten, then how many more (10,000 ids make no readable line). */
const SAID_IN_FULL = 10;
function sayFirst(messages: readonly string[]): string {
  const shown = messages.slice(0, SAID_IN_FULL).join('; ');
  const more = messages.length - SAID_IN_FULL;
  return more > 0 ? `${shown}; and ${more} more` : shown;
}

export async function postUpgrade(
  res: ServerResponse,
  deps: OneOffDeps,
  body: UpgradeBody,
  actor: string,
  /** The request's audit record, written in the one-off's own step. */
  audit?: (name: string) => AuditNote,
): Promise<void> {
  const org = oneOffOrgOf(body, deps.orgs.length ? deps.orgs : [DEFAULT_ORG]);
  const collectors = [...new Set(body.collectors)];
  let check: Awaited<ReturnType<typeof checkOneOffWith>>;
  try {
    check = await checkOneOffWith(deps.client(org), { org, to: body.to, collectors });
  } catch (err) {
    // The build is not offered: nothing was started (the CLI's exit 64).
    if (err instanceof FleetError) throw new HttpError('invalid', err.message.replace(/^--to: /, 'to: '));
    throw err;
  }
  const build = check.build ?? body.to;
  const named = [...check.findings].map(([id, finding]) => ({
    id,
    finding,
    message: describeFinding(id, finding, org, build),
  }));
  const leftOut = new Set(named.filter((n) => n.finding !== 'offline').map((n) => n.id));
  const kept = collectors.filter((id) => !leftOut.has(id));
  const said = { org, build, named, ...(check.unchecked ? { unchecked: check.unchecked } : {}) };
  if (kept.length === 0)
    throw new HttpError(
      'conflict',
      `no one-off started: none of the ${collectors.length === 1 ? 'named Collector' : `${collectors.length} named Collectors`} can be upgraded to ${body.to} (${sayFirst(named.map((n) => n.message))})`,
      {},
      said,
    );
  const name = await new OneOffPolicies(deps.redis, deps.keys).add(
    {
      collectors: kept,
      // `latest` pinned as the service resolved it: the rollout's id is known now.
      to: check.build ?? body.to,
      allowDowngrade: body.allowDowngrade ?? false,
      org,
      ...(body.maxInFlight === undefined ? {} : { maxInFlight: body.maxInFlight }),
    },
    actor,
    deps.clock.now(),
    audit,
  );
  sendJson(res, 201, {
    oneOff: name,
    ...(check.build ? { rollout: `${name}@${check.build}` } : {}),
    collectors: kept,
    ...said,
    message: `one-off ${name}: ${kept.length === 1 ? '1 Collector' : `${kept.length} Collectors`} to ${body.to}${check.build && body.to !== check.build ? ` (now ${check.build})` : ''}; the daemon starts it at its next round (GET /rollouts; until it starts, POST /rollouts/${name}/abort removes it)`,
  });
}

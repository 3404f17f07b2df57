/**
 * A one-off (`fleet-upgrade upgrade`) as the scheduler looks at it after each round:
 *
 * - Not started: its build is not offered in its organization. Why is kept on the one-off's
 *   record (one-off-policies.ts: `notStarted`), for `status`; the scheduler looks again
 *   only after a growing wait (ONE_OFF_LOOKS_MS), logging each look once, and gives up after the
 *   last (an error, once). Until it starts, `abort` or `forget` of it removes it.
 * - Started, its first scan done: the Collectors it names that the scan did not find are named on
 *   the rollout (`unmatched`, with a `collectors.unmatched` event), each with what the service's
 *   inventory says of it (hosted, not found in the organization, offline, on the build already),
 *   for `status`, `report` and the history. Looked at once.
 *
 *   created ──looked: started──► its rollout (the wait dropped) ──first scan──► unmatched named
 *      │
 *      └─looked: not offered──► waits (reason, next look) ──looked: not offered──► ... ──► gave up
 *                                   └──looked: offered──► its rollout
 * A look while its organization's service has a problem counts for nothing: the organization's
 * wait says why (tick/org-service.ts).
 */
import type { BuildTarget, CollectorUpgradeClient } from '../../api/index.js';
import type { Logger } from '../../lib/logger.js';
import { LATEST, type Policy } from '../../policy/schema.js';
import { targetCandidates } from '../../policy/target.js';
import { type CollectorStore, collectorKey, DEFAULT_ORG } from '../collector/index.js';
import {
  buildOf,
  orgsOf,
  type RolloutStore,
  type UnmatchedCollector,
  type UnmatchedFinding,
} from '../life/index.js';
import { type OneOffPolicies, parseOneOffRecord } from './one-off-policies.js';

/** Builds named in the reason, at most (the newest). */
const OFFERS_SHOWN = 8;

export interface OneOffLookDeps {
  rollouts: Pick<RolloutStore, 'currentOf' | 'get' | 'write'>;
  store: Pick<CollectorStore, 'getMany'>;
  oneOffs: Pick<OneOffPolicies, 'notStarted'>;
  logger: Logger;
  /** The builds an organization's service offers, or undefined while it has a problem. */
  builds(org: string): Promise<readonly BuildTarget[] | undefined>;
  /**
   * The client of an organization whose listings can be read now, or undefined; without
   * `inventoryPages` (a test's stand-in), the unmatched are named `not_listed`.
   */
  client(org: string): Partial<Pick<CollectorUpgradeClient, 'inventoryPages'>> | undefined;
}

/** After a round: why a one-off has no rollout, or which of its Collectors its first scan did not find. */
export async function lookedAtOneOff(
  deps: OneOffLookDeps,
  policy: Pick<Policy, 'name' | 'target'>,
  /** The one-off's record as stored (its Collector ids). */
  raw: string | undefined,
  orgs: readonly string[],
  now: number,
): Promise<void> {
  const id = await deps.rollouts.currentOf(policy.name);
  if (id === undefined) return notStartedOneOff(deps, policy, orgs, now);
  const select = parseOneOffRecord(raw)?.policy.select as { ids?: unknown } | undefined;
  const named = Array.isArray(select?.ids) ? (select.ids as number[]) : [];
  if (named.length) await unmatchedOfOneOff(deps, id, named, now);
}

async function notStartedOneOff(
  deps: OneOffLookDeps,
  policy: Pick<Policy, 'name' | 'target'>,
  orgs: readonly string[],
  now: number,
): Promise<void> {
  const missing: { org: string; offers: string[] }[] = [];
  for (const org of orgs) {
    const targets = await deps.builds(org);
    if (!targets) return; // its organization waits: not a look at the build
    if (targetCandidates(policy.target, targets)[0]) return; // offered: another reason, said where it happened
    missing.push({ org, offers: describeOffers(targets) });
  }
  if (missing.length === 0) return;
  const reason = missing
    .map(({ org, offers }) => {
      const where = org === DEFAULT_ORG ? 'the service' : `the service of org ${org}`;
      const what = policy.target === LATEST ? 'any build' : `build ${policy.target}`;
      return `${where} does not offer ${what} (${offers.length ? `it offers ${offers.join(', ')}` : 'it offers none'})`;
    })
    .join('; ');
  const wait = await deps.oneOffs.notStarted(policy.name, reason, now);
  if (!wait) return;
  const fields = { oneOff: policy.name, target: policy.target, reason, looks: wait.looks };
  if (wait.gaveUpAt !== undefined)
    deps.logger.error(
      fields,
      'one-off not started: gave up looking; `fleet-upgrade forget` (or abort) of it removes it',
    );
  else
    deps.logger.warn(
      { ...fields, nextLookInMs: (wait.nextLookAt ?? now) - now },
      'one-off not started; looking again later',
    );
}

/**
 * Once the one-off's first scan is done: the Collectors it names that the scan did not find,
 * each with what the organization's inventory says of it, written on the rollout with its event.
 */
async function unmatchedOfOneOff(deps: OneOffLookDeps, id: string, named: readonly number[], now: number) {
  const rollout = await deps.rollouts.get(id);
  if (!rollout || rollout.unmatched !== undefined || rollout.scans < 1) return;
  const org = orgsOf(rollout)[0] ?? DEFAULT_ORG;
  const client = deps.client(org);
  if (!client) return; // its organization waits: its scan may have been cut short
  const found = await deps.store.getMany(
    id,
    named.map((n) => collectorKey(org, n)),
  );
  const missing = named.filter((n) => !found.has(collectorKey(org, n)));
  const findings = new Map<number, UnmatchedFinding>(missing.map((n) => [n, 'not_listed']));
  if (missing.length && client.inventoryPages) {
    try {
      const seen = new Set<number>();
      for await (const page of client.inventoryPages())
        for (const c of page) {
          if (!findings.has(c.id)) continue;
          seen.add(c.id);
          const build = buildOf(rollout, org);
          if (c.collectorType.toLowerCase() === 'hosted') findings.set(c.id, 'hosted');
          else if (c.collectorVersion === build) findings.set(c.id, 'on_build');
          else if (!c.alive) findings.set(c.id, 'offline');
        }
      for (const n of missing) if (!seen.has(n)) findings.set(n, 'not_found');
    } catch (err) {
      // Without the inventory, what the scan saw is all that is known.
      deps.logger.warn({ rollout: id, org, err: (err as Error).message }, 'one-off: inventory not read');
    }
  }
  const unmatched: UnmatchedCollector[] = missing.map((n) => ({
    id: n,
    ...(org === DEFAULT_ORG ? {} : { org }),
    finding: findings.get(n) ?? 'not_listed',
  }));
  const written = await deps.rollouts.write(
    rollout,
    {
      phase: rollout.phase,
      unless: 'unmatched',
      patch: { unmatched },
      news: unmatched.length
        ? [{ type: 'collectors.unmatched', source: 'scheduler', collectors: unmatched }]
        : [],
    },
    now,
  );
  if (written && unmatched.length)
    deps.logger.warn({ rollout: id, unmatched }, 'one-off: named Collectors not upgraded by it');
}

function describeOffers(targets: readonly BuildTarget[]): string[] {
  return targets.slice(-OFFERS_SHOWN).map((t) => (t.latest ? `${t.version} (latest)` : t.version));
}

/**
 * `plan` and a policy's `minAge` and `after`: the build the daemon would start now is not only the
 * one the target names. A build younger than `minAge` here, or one the ring it follows has not
 * released, does not start, and a policy's current rollout never goes back. So with either rule
 * plan decides as the scheduler does (rollout/tick/choose-build.ts), from what the deployment's
 * Redis holds: the first sightings of builds, the policy's current rollout and the ring's
 * rollouts, on the deployment's clock. Redis is the one `status` reads (the settings' Redis, else
 * the private Redis of `run` on this machine). Without one, plan shows what the target names and
 * says that the daemon may not start it yet. Nothing is written.
 */
import type { BuildTarget } from '../../api/index.js';
import { FleetError } from '../../lib/errors.js';
import type { Policy } from '../../policy/schema.js';
import { chooseBuild, readBuildsSeen } from '../../rollout/index.js';
import type { DaemonConfig } from '../boot/daemon-config.js';
import { openState, type StateAccess } from '../boot/open-state.js';
import { sanitizeLine } from '../render/sanitize.js';

export interface PlannedBuilds {
  /** The build each organization would go to now; an organization left out starts nothing. */
  builds: Record<string, string>;
  /** What the rules decided, in sentences (empty without `minAge` and `after`). */
  notes: string[];
}

/** The policy's rules beyond its target, in words: `minAge 14d and after canary`. */
function rulesOf(policy: Pick<Policy, 'minAge' | 'after'>): string {
  return [
    ...(policy.minAge === undefined ? [] : ['minAge']),
    ...(policy.after ? [`after ${policy.after.policy}`] : []),
  ].join(' and ');
}

/**
 * The builds `policy` would go to now in each organization, from each one's build list (`lists`)
 * and what the target names there (`named`).
 */
export async function plannedBuilds(
  config: DaemonConfig,
  policy: Pick<Policy, 'name' | 'target' | 'minAge' | 'after'>,
  lists: ReadonlyMap<string, readonly BuildTarget[]>,
  named: Record<string, string>,
): Promise<PlannedBuilds> {
  if (policy.minAge === undefined && !policy.after) return { builds: named, notes: [] };
  let state: Awaited<ReturnType<typeof openState>>;
  try {
    state = await openState(config, { name: 'plan' });
  } catch (err) {
    if (!(err instanceof FleetError)) throw err;
    return {
      builds: named,
      notes: [
        `policy ${policy.name} has ${rulesOf(policy)}; deciding as the daemon would needs the deployment's Redis, and none answers (${sanitizeLine(err.message)}): shown is what the target names, which the daemon may not start yet`,
      ],
    };
  }
  try {
    return await decideBuilds(state, policy, lists, named);
  } finally {
    await state.close();
  }
}

/** What the deployment's Redis holds that `decideBuilds` reads: the daemon's own, or a command's. */
export type BuildState = Pick<StateAccess, 'rollouts' | 'redis' | 'keys' | 'clock'>;

/**
 * The builds `policy` would go to now, decided from `state` as the scheduler does. `plan` calls it
 * through plannedBuilds; the daemon's `POST /plan` with its own Redis, so both say the same.
 */
export async function decideBuilds(
  state: BuildState,
  policy: Pick<Policy, 'name' | 'target' | 'minAge' | 'after'>,
  lists: ReadonlyMap<string, readonly BuildTarget[]>,
  named: Record<string, string>,
): Promise<PlannedBuilds> {
  if (policy.minAge === undefined && !policy.after) return { builds: named, notes: [] };
  const { rollouts, redis, keys, clock } = state;
  const seen = new Map<string, ReadonlyMap<string, number>>();
  for (const org of lists.keys()) seen.set(org, await readBuildsSeen(redis, keys, org));
  const currentId = await rollouts.currentOf(policy.name);
  const [current] = currentId ? await rollouts.readMany([currentId]) : [];
  const choice = await chooseBuild({
    policy,
    lists,
    seen: (org) => seen.get(org) ?? new Map(),
    ...(current ? { current } : {}),
    readRing: (ids) => rollouts.readMany(ids),
    now: clock.now(),
  });
  const notes: string[] = [];
  if (choice.wait) notes.push(`policy ${policy.name}: ${sanitizeLine(choice.wait.text)}`);
  if (choice.build === undefined) {
    notes.push(`policy ${policy.name}: no build would start now (${rulesOf(policy)})`);
    return { builds: {}, notes };
  }
  let builds = choice.builds;
  if (current && choice.build === current.rollout.build) {
    notes.push(
      `policy ${policy.name}: its rollout ${sanitizeLine(current.rollout.id)} goes on (a rollout never goes back)`,
    );
    // Its Collectors not on the build yet, in each organization that offers it.
    if (Object.keys(builds).length === 0)
      builds = Object.fromEntries(
        [...lists].flatMap(([org, list]) =>
          list.some((t) => t.version === choice.build) ? [[org, choice.build as string]] : [],
        ),
      );
  }
  return { builds, notes };
}

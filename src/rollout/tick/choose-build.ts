/**
 * The build a policy's rollout goes to this tick, where its target is not all that decides:
 * 1. the target (`latest`, `latest-N`, a build: policy/target.ts) allows, in each organization's
 *    build list, the build it names and the older ones;
 * 2. `minAge` keeps those this deployment first saw less than that long ago (BuildsSeen: the
 *    build list has no release date; the age is the age seen here);
 * 3. `after` keeps those the ring it follows has not released (ring-gate.ts): the newest one it
 *    released is the choice.
 * A rollout never goes back: when the choice is older than the build the policy's current rollout
 * runs (or there is none), that rollout goes on. The newest build the target names that does not
 * start, and why, is the policy's wait (life/target-waits.ts, for `status` and the history).
 * Without `minAge` and `after`, the choice is what the target names, as it always was.
 */
import type { BuildTarget } from '../../api/index.js';
import { formatDuration } from '../../lib/duration.js';
import { compareBuildVersions } from '../../lib/version.js';
import type { Policy } from '../../policy/schema.js';
import { followsLatest, targetCandidates } from '../../policy/target.js';
import { type CurrentRollout, orgsOf, type TargetWait } from '../life/index.js';
import { rolloutId } from '../rollout-id.js';
import { judgeRing, type RingVerdict, ringDate } from './ring-gate.js';

/** Builds of a ring looked at, newest first, when the newest is not released. */
const MAX_RING_CANDIDATES = 10;

export interface BuildChoice {
  /** The build of each organization that offers one (the rollout's `builds`); empty when the current rollout goes on. */
  builds: Record<string, string>;
  /** The rollout's build (the newest of `builds`), or the current rollout's; undefined: nothing runs. */
  build?: string;
  /** Organizations whose build list offers nothing the target names. */
  notOffered: string[];
  /** The newest build the target names that does not start, and why (without `since`). */
  wait?: Omit<TargetWait, 'since'>;
  /** The ring's verdict on the build the current rollout runs (with `after`): `blocked` pauses it. */
  running?: RingVerdict;
  /** With `after`: when the chosen build converged in the ring that released it. */
  releasedAt?: number;
}

export interface ChooseInput {
  policy: Pick<Policy, 'name' | 'target' | 'minAge' | 'after'>;
  /** Each organization's build list (those whose list could be read). */
  lists: ReadonlyMap<string, readonly BuildTarget[]>;
  /** When this deployment first saw each build of each organization. */
  seen: (org: string) => ReadonlyMap<string, number>;
  current?: CurrentRollout;
  /** The rollouts of the earlier ring with these ids (undefined for those that do not exist). */
  readRing?: (ids: readonly string[]) => Promise<(CurrentRollout | undefined)[]>;
  now: number;
}

const DAY_MS = 86_400_000;
/** `14d`, `36h`, `90s`: a minimum age as a policy writes it. */
const formatAge = (ms: number) =>
  ms >= DAY_MS && ms % DAY_MS === 0 ? `${ms / DAY_MS}d` : formatDuration(ms);

const newestFirst = (a: string, b: string) => compareBuildVersions(b, a);

export async function chooseBuild(input: ChooseInput): Promise<BuildChoice> {
  const { policy, now } = input;
  const notOffered: string[] = [];
  const aged = new Map<string, string[]>();
  let named: string | undefined;
  let young: { build: string; firstSeen: number; until: number } | undefined;
  for (const [org, list] of input.lists) {
    const candidates = targetCandidates(policy.target, list);
    if (candidates.length === 0) {
      notOffered.push(org);
      continue;
    }
    const first = candidates[0] as string;
    if (named === undefined || newestFirst(first, named) < 0) named = first;
    if (policy.minAge === undefined) {
      aged.set(org, candidates);
      continue;
    }
    const seen = input.seen(org);
    const ok: string[] = [];
    for (const b of candidates) {
      const at = seen.get(b) ?? now;
      if (at + policy.minAge <= now) ok.push(b);
      else if (b === first && (!young || newestFirst(b, young.build) < 0))
        young = { build: b, firstSeen: at, until: at + policy.minAge };
    }
    aged.set(org, ok);
  }
  const union = [...new Set([...aged.values()].flat())].sort(newestFirst);
  const cur = input.current?.rollout;
  let chosen: string | undefined = union[0];
  let ringWait: { build: string; verdict: RingVerdict } | undefined;
  let running: RingVerdict | undefined;
  let releasedAt: number | undefined;
  const after = policy.after;
  if (after && input.readRing) {
    const looked = union
      .filter((b) => !cur || compareBuildVersions(b, cur.build) >= 0)
      .slice(0, MAX_RING_CANDIDATES);
    const ids = [...looked, ...(cur ? [cur.build] : [])].map((b) => rolloutId(after.policy, b));
    const read = await input.readRing(ids);
    chosen = undefined;
    for (const [i, b] of looked.entries()) {
      const verdict = judgeRing(after, b, read[i], now);
      if (verdict.kind === 'released') {
        chosen = b;
        releasedAt = verdict.convergedAt;
        break;
      }
      ringWait ??= { build: b, verdict };
    }
    if (cur) running = judgeRing(after, cur.build, read[looked.length], now);
  }
  // Never back: an older choice (or none) leaves the current rollout on its build.
  if (cur && (chosen === undefined || compareBuildVersions(chosen, cur.build) <= 0))
    return {
      builds: chosen === cur.build ? buildsUpTo(aged, chosen) : {},
      build: cur.build,
      notOffered,
      ...waitOf(policy, named, cur.build, young, ringWait),
      ...(running ? { running } : {}),
    };
  if (chosen === undefined)
    return { builds: {}, notOffered, ...waitOf(policy, named, undefined, young, ringWait) };
  const builds = buildsUpTo(aged, chosen);
  const build = followsLatest(policy.target) ? chosen : policy.target;
  return {
    builds,
    build,
    notOffered,
    ...waitOf(policy, named, build, young, ringWait),
    ...(running && cur?.build === build ? { running } : {}),
    ...(releasedAt === undefined ? {} : { releasedAt }),
  };
}

/** Each organization's newest allowed build at or below `top`. */
function buildsUpTo(aged: ReadonlyMap<string, string[]>, top: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [org, list] of aged) {
    const b = list.find((x) => compareBuildVersions(x, top) <= 0);
    if (b) out[org] = b;
  }
  return out;
}

/** The wait of the newest build the target names, when it is not the one that runs. */
function waitOf(
  policy: ChooseInput['policy'],
  named: string | undefined,
  runs: string | undefined,
  young: { build: string; firstSeen: number; until: number } | undefined,
  ring: { build: string; verdict: RingVerdict } | undefined,
): { wait?: Omit<TargetWait, 'since'> } {
  if (named === undefined || named === runs) return {};
  const running = runs === undefined ? {} : { running: runs };
  if (young && young.build === named && policy.minAge !== undefined)
    return {
      wait: {
        policy: policy.name,
        build: named,
        kind: 'age',
        reason: 'young',
        text: `${named} first seen here ${ringDate(young.firstSeen)}; it becomes a target once ${formatAge(policy.minAge)} old, at ${ringDate(young.until)}`,
        until: young.until,
        firstSeen: young.firstSeen,
        ...running,
      },
    };
  if (ring && policy.after && ring.verdict.kind !== 'released')
    return {
      wait: {
        policy: policy.name,
        build: ring.build,
        kind: 'ring',
        after: policy.after.policy,
        reason: ring.verdict.reason,
        text: ring.verdict.text,
        ...(ring.verdict.kind === 'waiting' && ring.verdict.until !== undefined
          ? { until: ring.verdict.until }
          : {}),
        ...running,
      },
    };
  return {};
}

/**
 * Narrows the scheduler's resolution of the target (the build each organization's target names,
 * and the organizations whose part goes on) to the choice, in place: each organization's build is
 * the chosen one (none when the current rollout goes on with an older one), and an organization whose
 * builds are all held back takes no part unless the current rollout already runs there.
 */
export function narrowResolution(
  builds: Record<string, string>,
  parts: { org: string }[],
  choice: BuildChoice,
  current: Pick<CurrentRollout['rollout'], 'build' | 'builds' | 'orgs'> | undefined,
): void {
  for (const org of Object.keys(builds)) delete builds[org];
  Object.assign(builds, choice.builds);
  const keeps = current !== undefined && current.build === choice.build;
  const runs = (org: string) => choice.builds[org] !== undefined || (keeps && orgsOf(current).includes(org));
  for (let i = parts.length - 1; i >= 0; i--)
    if (!runs((parts[i] as { org: string }).org)) parts.splice(i, 1);
}

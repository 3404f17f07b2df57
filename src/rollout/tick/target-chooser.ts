/**
 * The scheduler's side of `minAge` and `after` (choose-build.ts decides; this keeps what it needs
 * and tells what it decided): the first sightings of builds (BuildsSeen, recorded at every read
 * of a build list, whatever the policies), each policy's wait (life/target-waits.ts: written when
 * it begins or its reason changes, with `ring.waiting`; cleared when the build starts, with
 * `ring.released`), and the pause of a rollout whose build turned bad in the ring it follows:
 *
 *   running | converged ──ring blocked (halted, aborted, rolled back there)──► paused (ring: ...)
 *   paused (ring: ...) ──the ring runs the build again──► running
 * An operator's `resume` ends such a pause for good: the rollout is not paused again for the
 * same reason (`ringPausedFor`).
 */
import type { Policy } from '../../policy/schema.js';
import { describeSelection, knownIssuesOf } from '../../policy/select/known-issue-match.js';
import type { KnownIssueNote, RolloutRecord } from '../life/index.js';
import {
  admits,
  type CurrentRollout,
  isRingPause,
  RING_PAUSE_PREFIX,
  type RolloutDraft,
  type TargetWait,
  TargetWaits,
} from '../life/index.js';
import { BuildsSeen } from './builds-seen.js';
import { type BuildChoice, chooseBuild } from './choose-build.js';
import type { OrgService } from './org-service.js';
import { dueAt, type TickDeps, type TickMemory } from './tick-context.js';

export class TargetChooser {
  private readonly seen: BuildsSeen;
  private readonly waits: TargetWaits;
  /** Each policy's wait as last written (read from Redis at the first tick). */
  private told: Map<string, TargetWait> | undefined;

  constructor(
    private readonly deps: Pick<TickDeps, 'redis' | 'keys' | 'rollouts' | 'clock' | 'logger'>,
    private readonly orgs: Pick<OrgService, 'builds'>,
    private readonly memory: TickMemory,
  ) {
    this.seen = new BuildsSeen(deps.redis, deps.keys);
    this.waits = new TargetWaits(deps.redis, deps.keys);
  }

  /**
   * The build `policy`'s rollout goes to now (choose-build.ts), from its organizations' build lists
   * (read at most once per scan interval: OrgService), with its wait recorded.
   */
  async choose(
    policy: Policy,
    orgs: readonly string[],
    current: CurrentRollout | undefined,
    live: readonly RolloutRecord[],
  ): Promise<BuildChoice> {
    const now = this.deps.clock.now();
    const lists = new Map<string, Awaited<ReturnType<OrgService['builds']>> & object>();
    for (const org of orgs) {
      const list = await this.orgs.builds(org, live);
      if (!list) continue;
      lists.set(org, list);
      await this.seen.record(
        org,
        list.map((b) => b.version),
        now,
      );
    }
    const choice = await chooseBuild({
      policy,
      lists,
      seen: (org) => this.seen.of(org),
      ...(current ? { current } : {}),
      ...(policy.after ? { readRing: (ids) => this.deps.rollouts.readMany(ids) } : {}),
      now,
    });
    await this.note(policy.name, choice.wait, now);
    return choice;
  }

  /** The rollout of `build` starts after a ring released it: `ring.released`, and no wait. */
  async started(policy: Policy, build: string, choice: BuildChoice): Promise<void> {
    if (!policy.after || choice.releasedAt === undefined) return;
    const now = this.deps.clock.now();
    const news = [
      {
        type: 'ring.released' as const,
        source: 'scheduler' as const,
        after: policy.after.policy,
        convergedAt: choice.releasedAt,
      },
    ];
    await this.waits.set(policy.name, build, undefined, news, now);
    (await this.toldWaits()).delete(policy.name);
  }

  /**
   * Pauses the rollout whose build turned bad in the ring it follows, and lets it go on once the
   * ring runs the build again (see the header).
   */
  async follow(draft: RolloutDraft, policy: Policy, choice: BuildChoice, now: number): Promise<void> {
    noteVersionRules(draft, policy);
    const r = draft.view;
    const verdict = policy.after ? choice.running : undefined;
    const after = policy.after?.policy ?? '';
    if (verdict?.kind === 'blocked') {
      if (!admits(r.phase) || r.ringPausedFor === verdict.reason) return;
      const news = [
        {
          type: 'ring.paused' as const,
          source: 'scheduler' as const,
          after,
          reason: verdict.reason,
          text: verdict.text,
        },
      ];
      if (
        await draft.move(this.deps.rollouts, 'pause', now, {
          reason: `${RING_PAUSE_PREFIX}${verdict.text}`,
          patch: { ringPausedFor: verdict.reason },
          news,
        })
      )
        this.deps.logger.warn({ rollout: r.id, after, reason: verdict.reason }, 'rollout paused by its ring');
      return;
    }
    if (r.ringPausedFor === undefined) return;
    if (r.phase === 'paused' && isRingPause(r.pauseReason)) {
      const news = [{ type: 'ring.resumed' as const, source: 'scheduler' as const, after }];
      if (await draft.move(this.deps.rollouts, 'unpause', now, { patch: { ringPausedFor: null }, news }))
        this.deps.logger.info({ rollout: r.id, after }, 'rollout running again: its ring runs the build');
    } else draft.set({ ringPausedFor: null });
  }

  /** Clears the waits of policies that are not enabled any more. */
  async keepOnly(enabled: ReadonlySet<string>): Promise<void> {
    const told = await this.toldWaits();
    for (const [policy, wait] of told)
      if (!enabled.has(policy)) {
        await this.waits.set(policy, wait.build, undefined, [], this.deps.clock.now());
        told.delete(policy);
      }
  }

  private async toldWaits(): Promise<Map<string, TargetWait>> {
    this.told ??= await this.waits.read();
    return this.told;
  }

  /** Records a policy's wait when it begins or changes; a ring's wait is told as `ring.waiting`. */
  private async note(policy: string, wait: Omit<TargetWait, 'since'> | undefined, now: number) {
    const told = await this.toldWaits();
    const before = told.get(policy);
    if (wait?.until !== undefined) dueAt(this.memory, wait.until);
    if (!wait) {
      if (!before) return;
      await this.waits.set(policy, before.build, undefined, [], now);
      told.delete(policy);
      return;
    }
    const same = before && before.build === wait.build && before.reason === wait.reason;
    if (same && before.text === wait.text && before.until === wait.until && before.running === wait.running)
      return;
    const next: TargetWait = { ...wait, since: same ? before.since : now };
    const news =
      wait.kind === 'ring' && !same
        ? [
            {
              type: 'ring.waiting' as const,
              source: 'scheduler' as const,
              after: wait.after ?? '',
              reason: wait.reason,
              text: wait.text,
              ...(wait.until === undefined ? {} : { until: wait.until }),
            },
          ]
        : [];
    await this.waits.set(policy, wait.build, next, news, now);
    told.set(policy, next);
    if (!same)
      this.deps.logger.info(
        { policy, build: wait.build, reason: wait.reason, text: wait.text },
        'build waits',
      );
  }
}

/**
 * What `status` shows of the policy's version rules on its rollout: `minimumBuild`, and the known
 * issues that concern the rollout's build (with their notes). Set when they change.
 */
function noteVersionRules(draft: RolloutDraft, policy: Policy): void {
  const r = draft.view;
  const builds = [...new Set([r.build, ...Object.values(r.builds ?? {})])];
  const issues: KnownIssueNote[] = (policy.knownIssues ?? [])
    .filter((i) => builds.some((b) => knownIssuesOf({ knownIssues: [i] }, b).length > 0))
    .map((i) => {
      const where = describeSelection(i.select);
      return { build: i.build, action: i.action, note: i.note, ...(where ? { where } : {}) };
    });
  if (JSON.stringify(issues) !== JSON.stringify(r.knownIssues ?? []))
    draft.set({ knownIssues: issues.length ? issues : null });
  if ((policy.minimumBuild ?? '') !== (r.minimumBuild ?? ''))
    draft.set({ minimumBuild: policy.minimumBuild ?? null });
}

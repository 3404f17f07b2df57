/**
 * A step of a policy's round: the rollout of a build new to the policy starts (its first wave
 * from the start), the one it replaces is superseded (its Collectors not sent yet leave it), and a
 * rollout of this build that was superseded before runs again. A one-off of `latest` is pinned to
 * the build it started with. Answers the rollout as read after its start.
 */
import type { Policy } from '../../../policy/schema.js';
import type { CurrentRollout } from '../../life/index.js';
import { isOneOffPolicy, rollbackSource } from '../../one-off/index.js';
import { supersedeRollout } from '../../operator/index.js';
import { policyHash, settingsOf } from '../policy-settings.js';
import type { PolicyContext } from './policy-context.js';
import type { ResolvedBuilds } from './resolve-builds.js';

export async function startRollout(
  ctx: Pick<PolicyContext, 'rollouts' | 'store' | 'logger' | 'chooser' | 'orgService' | 'oneOffs' | 'live'>,
  policy: Policy,
  resolved: ResolvedBuilds,
  covered: { orgs: string[]; now: number },
): Promise<CurrentRollout | undefined> {
  const { rollouts } = ctx;
  const { build, builds } = resolved;
  const { orgs, now } = covered;
  await ctx.chooser.started(policy, build, resolved.choice);
  const source = rollbackSource(policy);
  const patch = { policyHash: policyHash(policy), builds, orgs, ...(source ? { rollbackOf: source } : {}) };
  const { rollout, replaced } = await rollouts.start({
    policy: policy.name,
    target: policy.target,
    build,
    maxInFlight: policy.maxInFlight,
    settings: settingsOf(policy),
    now,
    patch,
    tell: true,
  });
  if (replaced) await supersedeRollout(ctx, replaced, rollout.id, now);
  if (rollout.phase === 'superseded') await rollouts.move(rollout, 'restart', now);
  const [view] = await rollouts.readMany([rollout.id]);
  if (!view) return undefined;
  ctx.logger.info({ rollout: rollout.id, policy: policy.name, build, replaced }, 'rollout started');
  ctx.live.push(view.rollout);
  await ctx.orgService.started(view.rollout);
  if (policy.target !== build && isOneOffPolicy(policy)) await ctx.oneOffs.pin(policy.name, build);
  return view;
}

/**
 * A step of a policy's round: the rollout takes its policy's edited settings, its in-flight limit
 * for the Collectors found so far (a share grows with them) and each organization's build, written
 * at once (the jobs this tick admits read the settings); an organization that waits keeps the
 * build it had. A rollout its policy paused (disabled) runs again now that the policy is enabled.
 */
import { maxInFlightOf, resolveMaxInFlight } from '../../../policy/max-in-flight.js';
import type { Policy } from '../../../policy/schema.js';
import { COLLECTOR_STATES, type StateCounts, sumStates } from '../../collector/index.js';
import { isPolicyPause, type RolloutDraft } from '../../life/index.js';
import { policyHash, settingsOf } from '../policy-settings.js';
import type { PolicyContext } from './policy-context.js';

export async function takeSettings(
  ctx: Pick<PolicyContext, 'rollouts' | 'logger' | 'memory'>,
  draft: RolloutDraft,
  policy: Policy,
  where: { counts: StateCounts; builds: Record<string, string>; orgs: string[]; now: number },
): Promise<void> {
  const { rollouts, logger } = ctx;
  const { builds, orgs, now } = where;
  const r = draft.view;
  const settings = settingsOf(policy);
  const hash = policyHash(policy);
  const limit = resolveMaxInFlight(maxInFlightOf(policy), sumStates(where.counts, COLLECTOR_STATES));
  if (
    r.maxInFlight !== limit ||
    r.target !== policy.target ||
    r.policyHash !== hash ||
    JSON.stringify(r.settings) !== JSON.stringify(settings) ||
    JSON.stringify(r.builds) !== JSON.stringify({ ...r.builds, ...builds }) ||
    JSON.stringify(r.orgs) !== JSON.stringify(orgs)
  ) {
    // An organization's build moved on (its build list offers a newer latest): scan now, so that
    // its Collectors not sent yet go to the new build (`retarget`) before this tick admits any.
    if (Object.entries(builds).some(([org, b]) => r.builds?.[org] !== undefined && r.builds[org] !== b))
      ctx.memory.lastScan.delete(r.id);
    draft.set({
      maxInFlight: limit,
      target: policy.target,
      settings,
      policyHash: hash,
      builds: { ...r.builds, ...builds },
      orgs,
    });
    await draft.flush(rollouts, now, logger);
  }
  if (r.phase === 'paused' && isPolicyPause(r.pauseReason)) {
    const news = [
      { type: 'rollout.resumed' as const, source: 'policy' as const, released: 'policy' as const },
    ];
    if (await draft.move(rollouts, 'unpause', now, { news }))
      logger.info({ rollout: r.id }, 'rollout running again: its policy is enabled');
  }
}

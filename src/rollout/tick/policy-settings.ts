/**
 * What a rollout takes of its policy: the settings its workers need (stored with the rollout, so
 * workers read no policy files), a fingerprint of the policy (a changed policy file releases an
 * aborted rollout's policy), and the build its target names today.
 */
import { createHash } from 'node:crypto';
import type { BuildTarget } from '../../api/index.js';
import type { Policy } from '../../policy/schema.js';
import { targetCandidates } from '../../policy/target.js';
import { verifySettings } from '../../policy/verify.js';
import type { RolloutSettings } from '../life/index.js';

/** Longest back-off of a Collector's retries (clock time). */
export const MAX_BACKOFF_MS = 30 * 60_000;

export function settingsOf(policy: Policy): RolloutSettings {
  const verify = verifySettings(policy.verify);
  return {
    pollInitialMs: policy.poll.initial,
    pollMaxMs: policy.poll.max,
    pollJitter: policy.poll.jitter,
    taskTimeoutMs: policy.taskTimeout,
    notAliveAttempts: policy.retry.notAlive.attempts,
    notAliveBackoffMs: policy.retry.notAlive.backoff,
    ...(policy.retry.notAlive.until === undefined ? {} : { notAliveUntilMs: policy.retry.notAlive.until }),
    errorAttempts: policy.retry.errors.attempts,
    errorBackoffMs: policy.retry.errors.backoff,
    transientAttempts: policy.retry.transient.attempts,
    transientBackoffMs: policy.retry.transient.backoff,
    maxBackoffMs: MAX_BACKOFF_MS,
    ...(verify ? { verify } : {}),
    causes: policy.failureCauses,
  };
}

/** A short fingerprint of a policy as loaded: a changed policy file releases an aborted rollout's policy. */
export function policyHash(policy: Policy): string {
  return createHash('sha256').update(JSON.stringify(policy)).digest('hex').slice(0, 16);
}

/**
 * The build a policy's target names today (`latest`, `latest-N` or a build), or undefined when the
 * service does not offer it. Without `minAge` and `after`: those are the scheduler's
 * (choose-build.ts), which reads Redis.
 */
export function resolveTarget(target: string, builds: readonly BuildTarget[]): string | undefined {
  return targetCandidates(target, builds)[0];
}

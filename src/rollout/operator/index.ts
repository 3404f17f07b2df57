/**
 * The door of operator/: what an operator does to a rollout, one verb a file (pause.ts,
 * resume.ts, abort.ts, promote.ts, retry.ts, forget.ts with its guards, approve.ts, rollback.ts;
 * control.ts: what they share), the one-off rollouts of `upgrade` and of rollbacks
 * (one-off-policies.ts) and what a one-off asks the service first (check-one-off.ts), a newer
 * build taking over (supersede-rollout.ts) and retention (expire-rollouts.ts). They need only
 * Redis (but check-one-off.ts): they work while the daemon is down.
 */

export { abort, abortRollout, abortWaiting } from './abort.js';
export * from './approve.js';
export * from './check-one-off.js';
export {
  type ControlDeps,
  ControlError,
  type ControlErrorKind,
  type ControlResult,
  type PolicyView,
} from './control.js';
export * from './expire-rollouts.js';
export * from './forget.js';
export * from './one-off-policies.js';
export * from './pause.js';
export * from './promote.js';
export * from './resume.js';
export * from './retry.js';
export * from './rollback.js';
export * from './supersede-rollout.js';

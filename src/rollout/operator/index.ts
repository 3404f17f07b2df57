/**
 * The door of operator/: what an operator does to a rollout, one verb a file (pause.ts,
 * resume.ts, abort.ts, promote.ts, retry.ts, forget.ts with its guards, approve.ts, rollback.ts;
 * control.ts: what they share; remove-unstarted-one-off.ts: abort and forget of a one-off
 * that never started), a newer build taking over (supersede-rollout.ts) and retention
 * (expire-rollouts.ts). They need only Redis: they work while the daemon is down. One-off
 * upgrades are one-off/'s.
 */

export { abort, abortRollout, abortWaiting } from './abort.js';
export * from './approve.js';
export {
  type ControlDeps,
  ControlError,
  type ControlErrorKind,
  type ControlResult,
  type PolicyView,
} from './control.js';
export * from './expire-rollouts.js';
export * from './forget.js';
export * from './pause.js';
export * from './promote.js';
export * from './resume.js';
export * from './retry.js';
export * from './rollback.js';
export * from './supersede-rollout.js';

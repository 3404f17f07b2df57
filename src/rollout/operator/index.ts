/**
 * The door of operator/: what an operator does to a rollout (control.ts: pause, resume, abort,
 * promote, retry, forget; rollback.ts), the one-off rollouts of `upgrade` and of rollbacks
 * (one-off-policies.ts) and what a one-off asks the service first (check-one-off.ts), a newer
 * build taking over (supersede-rollout.ts) and retention (expire-rollouts.ts). They need only
 * Redis (but check-one-off.ts): they work while the daemon is down.
 */
export * from './approve.js';
export * from './check-one-off.js';
export * from './control.js';
export * from './expire-rollouts.js';
export * from './one-off-policies.js';
export * from './rollback.js';
export * from './supersede-rollout.js';

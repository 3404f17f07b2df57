/**
 * The door of tick/: the daemon's scheduler. One leader (leader-lock.ts) runs the loop
 * (scheduler-loop.ts); each round is one tick over every policy (scheduler.ts), and each
 * rollout's pass runs its steps in one order (advance-rollout.ts) over one context
 * (tick-context.ts). The job repair keeps a live job for every Collector a job drives.
 */

export { readBuildsSeen } from './builds-seen.js';
export { type BuildChoice, chooseBuild } from './choose-build.js';
export * from './leader-lock.js';
export * from './scheduler.js';
export * from './scheduler-loop.js';
export * from './tick-context.js';

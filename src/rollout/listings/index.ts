/**
 * The door of listings/: what the service's listings of upgradable Collectors tell a rollout.
 * A scan finds its Collectors (scan-upgradable.ts); a pass over another build's listing watches
 * the tasks under way and verifies the successes (listing-pass.ts, verify-collectors.ts); and the
 * listings resolve tasks whose id was lost (reconcile-unknown-tasks.ts). The service's health
 * events judge the bake too (health-verdicts.ts, read-health-view.ts).
 */
export * from './health-verdicts.js';
export * from './listing-pass.js';
export * from './notice-cadence.js';
export * from './read-health-view.js';
export * from './reconcile-unknown-tasks.js';
export * from './scan-upgradable.js';
export * from './verify-collectors.js';

/**
 * The door of one-off/: one-off upgrades, the rollouts of `fleet-upgrade upgrade --collector ...`
 * and of rollbacks, from request to start. What a one-off asks the service first
 * (check-one-off.ts: the build offered, the Collectors' findings), its policy written to Redis
 * instead of a file with the request's audit record in the same step (one-off-policies.ts), and
 * how the scheduler looks at it after each round (one-off-starts.ts: not offered yet, started,
 * its Collectors not found named). What the rollouts' store keeps of one-offs, and how `status`
 * shows one not started, are the store's and the status's (life/one-off-records.ts,
 * life/one-off-views.ts); `abort` and `forget` of one not started are operator/'s.
 */
export * from './check-one-off.js';
export * from './one-off-policies.js';
export * from './one-off-starts.js';

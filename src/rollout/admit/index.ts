/**
 * The door of admit/: the one admitter (admit.ts: the only way into a state that holds an
 * in-flight slot, with every rule in its header) and where a rollout's waves stand
 * (wave-progress.ts, a pure step).
 */
export * from './admit.js';
export * from './upgrade-length.js';
export * from './wave-progress.js';

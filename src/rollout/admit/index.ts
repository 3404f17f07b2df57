/**
 * The door of admit/: the one admitter (admit.ts: the only way into a state that holds an
 * in-flight slot, with every rule in its header) and where a rollout's waves stand
 * (wave-progress.ts, a pure step), with the Collectors outside the waves (outside-waves.ts: below
 * minimumBuild, held by a known issue).
 */
export * from './admit.js';
export * from './outside-waves.js';
export * from './upgrade-length.js';
export * from './wave-progress.js';

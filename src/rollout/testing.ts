/**
 * The test door of rollout/: names that only tests use and no door exports, the pure functions
 * tested alone (a ring's judgement, the learning of lengths and first reads) and the key list of
 * `forget` checked against its script. Tests import rollout/ through index.ts, a room's own
 * index.ts, or this file (test/unit/architecture/walls.test.ts); nothing in src/ imports it, and
 * it alone may reach into a room's files.
 */
export { applyMovesKeys, forgetRolloutKeys } from './keys.js';
export { learnFirstRead, MIN_SAMPLES } from './tick/learn-first-read.js';
export { longestFirst } from './tick/learn-lengths.js';
export { judgeRing, verifiedRatio } from './tick/ring-gate.js';

/**
 * The test door of rollout/: names that only tests use, which the door (index.ts) does not
 * export. Tests import rollout/ through index.ts, a room's own index.ts, or this file
 * (test/unit/architecture/walls.test.ts); nothing in src/ imports it.
 */
export { forgetRolloutKeys } from './keys.js';

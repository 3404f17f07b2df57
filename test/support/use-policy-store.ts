/**
 * A hot-reloading policy store for each test of the calling file, on a fresh policy folder, with
 * what it reports collected; closed (and the folder removed) after each test.
 */
import { afterEach, beforeEach } from 'vitest';
import {
  createPolicyStore,
  type PolicyStore,
  type PolicyStoreEvent,
  type PolicyStoreOptions,
} from '../../src/policy/load/policy-store.js';
import { type PolicyDir, usePolicyDir } from './policy-dir.js';

export interface TestPolicyStore {
  /** The current test's policy folder. */
  readonly dir: PolicyDir;
  /** What the stores of the current test told `onEvent` (unless a test gave its own); emptied before each test. */
  readonly events: PolicyStoreEvent[];
  /** What they told `onError` (unless a test gave its own); emptied before each test. */
  readonly errors: unknown[];
  /** A store on the folder that reports to `events` and `errors`; `options` override. Closed after the test. */
  open(options?: PolicyStoreOptions): PolicyStore;
}

export function usePolicyStore(): TestPolicyStore {
  const dir = usePolicyDir();
  const events: PolicyStoreEvent[] = [];
  const errors: unknown[] = [];
  let store: PolicyStore | undefined;
  beforeEach(() => {
    events.length = 0;
    errors.length = 0;
  });
  afterEach(() => {
    store?.close();
    store = undefined;
  });
  return {
    dir,
    events,
    errors,
    open(options = {}) {
      store = createPolicyStore({
        dir: dir.dir,
        onEvent: (e) => events.push(e),
        onError: (err) => errors.push(err),
        ...options,
      });
      return store;
    },
  };
}

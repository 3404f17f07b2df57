/**
 * The ConfigError that a call throws, for tests of everything that reads configuration (policy
 * files, settings, env): the test fails when the call throws nothing or another error.
 */
import { basename } from 'node:path';
import { expect } from 'vitest';
import { ConfigError } from '../../src/lib/errors.js';

/** The ConfigError that `run` throws; fails the test when it throws nothing or something else. */
export function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

/**
 * The message of the ConfigError that `read(file)` throws, the file's path written as its name
 * (`/tmp/fleet-policies-x/p.yaml:3:1` → `p.yaml:3:1`), so that expectations need no folder.
 */
export function configErrorMessage(file: string, read: (file: string) => unknown): string {
  return configError(() => read(file)).message.replaceAll(file, basename(file));
}

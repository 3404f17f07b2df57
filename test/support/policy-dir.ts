/**
 * Temporary policy folders for the policy tests: `usePolicyDir()` registers hooks that give each
 * test of the file a fresh folder and remove it afterwards.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';

export interface PolicyDir {
  dir: string;
  /** Writes `text` to `name` in the folder and returns the file's path. */
  write(name: string, text: string): string;
  remove(name: string): void;
  cleanup(): void;
}

export function makePolicyDir(): PolicyDir {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-policies-'));
  return {
    dir,
    write(name, text) {
      const file = join(dir, name);
      writeFileSync(file, text);
      return file;
    },
    remove(name) {
      rmSync(join(dir, name), { force: true });
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A policy folder for each test of the calling file: made before it, removed after it. */
export function usePolicyDir(): PolicyDir {
  let current: PolicyDir | undefined;
  beforeEach(() => {
    current = makePolicyDir();
  });
  afterEach(() => {
    current?.cleanup();
    current = undefined;
  });
  const now = (): PolicyDir => {
    if (!current) throw new Error('the policy folder is only available inside a test');
    return current;
  };
  return {
    get dir() {
      return now().dir;
    },
    write: (name, text) => now().write(name, text),
    remove: (name) => now().remove(name),
    cleanup: () => now().cleanup(),
  };
}

/** Joins lines into a YAML text, so that a test can count the line of each field. */
export const yaml = (...lines: string[]): string => `${lines.join('\n')}\n`;

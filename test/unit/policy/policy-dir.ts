/** Temporary policy folders for the policy tests, removed after each test. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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

/** Joins lines into a YAML text, so that a test can count the line of each field. */
export const yaml = (...lines: string[]): string => `${lines.join('\n')}\n`;

/**
 * The one place where Lua scripts are loaded. Scripts live in `.lua` files beside the module that
 * uses them (`src/<module>/lua/<name>-<N>.lua`, copied to `dist/` by the build). As in BullMQ, a
 * script's file name ends with its number of keys (`apply-moves-15.lua` takes 15 KEYS), and it is
 * the only place that number is written: the caller names the file, the count comes from the name.
 * Each script opens with a comment telling its KEYS, ARGV and what it returns
 * (test/integration/lib/redis-scripts.test.ts checks both). A line `--#include <name>` inserts
 * `<name>.lua` of the same folder (a snippet, named without a count), so that shared snippets are
 * written once. Each script becomes an ioredis command (EVALSHA, falling back to EVAL once per
 * connection after a Redis restart).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';

/** src/ (or dist/ once built): the scripts' paths are relative to it. */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const sources = new Map<string, string>();

/** The text of `module/lua/name.lua`, with its includes inserted. */
export function scriptSource(module: string, name: string, depth = 0): string {
  const path = join(module, 'lua', `${name}.lua`);
  const cached = sources.get(path);
  if (cached !== undefined) return cached;
  if (depth > 4) throw new Error(`Lua includes nest too deep at ${path}`);
  const text = readFileSync(join(ROOT, path), 'utf8').replace(
    /^--#include ([a-z0-9-]+)$/gm,
    (_line, included: string) => scriptSource(module, included, depth + 1),
  );
  sources.set(path, text);
  return text;
}

export interface ScriptSpec {
  /** The ioredis command name it becomes, e.g. `fuApplyMoves`. */
  command: string;
  /** The folder under src/ holding `lua/`, e.g. `rollout`. */
  module: string;
  /** The file name without `.lua`, ending with its number of keys: `apply-moves-15`. */
  name: string;
}

/** The number of keys of the script `name` (`apply-moves-15` → 15), told by its file name. */
export function scriptKeyCount(name: string): number {
  const m = /^[a-z0-9-]+-(\d{1,3})$/.exec(name);
  if (!m) throw new Error(`Lua script name ${JSON.stringify(name)} does not end with its key count (name-N)`);
  return Number(m[1]);
}

/** Defines the scripts on `redis` once (a connection shared by several stores defines them once). */
export function defineScripts(redis: Redis, specs: readonly ScriptSpec[]): void {
  const commands = redis as unknown as Record<string, unknown>;
  for (const s of specs) {
    if (typeof commands[s.command] === 'function') continue;
    redis.defineCommand(s.command, {
      numberOfKeys: scriptKeyCount(s.name),
      lua: scriptSource(s.module, s.name),
    });
  }
}

/**
 * The Lua scripts and their callers kept in step (src/lib/redis/redis-scripts.ts): every script's
 * file name ends with its number of keys (BullMQ's `name-N.lua`), its header tells its KEYS, ARGV
 * and returns, the KEYS it uses are exactly KEYS[1..N], every caller names a file that exists
 * (modules given by a string such as 'rollout/life' too), and each script, includes inserted,
 * loads on a real Redis. The numbers the Lua mirrors from TypeScript (the queue's score bands,
 * the keys `forget` passes) are checked against their one TypeScript source.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { closeRedis, createRedis, type Redis } from '../../../src/lib/redis/create-redis.js';
import {
  defineScripts,
  type ScriptSpec,
  scriptKeyCount,
  scriptSource,
} from '../../../src/lib/redis/redis-scripts.js';
import { INDEX_CODE, QUEUE_SCORE_BANDS } from '../../../src/rollout/collector/index.js';
import { createKeys } from '../../../src/rollout/index.js';
import { applyMovesKeys, forgetRolloutKeys } from '../../../src/rollout/testing.js';
import { testRedisUrl } from '../../support/redis.js';

const SRC = resolve(import.meta.dirname, '../../../src');

function filesUnder(dir: string, ending: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(ending))
    .map((e) => join(e.parentPath, e.name));
}

/** Every Lua file of src/: `module` (its folder under src/ without `lua/`) and `name`. */
const luaFiles = filesUnder(SRC, '.lua').map((path) => {
  const rel = relative(SRC, path).split('\\').join('/');
  const m = /^(.+)\/lua\/([a-z0-9-]+)\.lua$/.exec(rel);
  if (!m) throw new Error(`${rel}: a Lua file lies in <module>/lua/<name>.lua`);
  return { rel, module: m[1] as string, name: m[2] as string, text: readFileSync(path, 'utf8') };
});
const scripts = luaFiles.filter((f) => /-\d+$/.test(f.name));
const snippets = luaFiles.filter((f) => !/-\d+$/.test(f.name));

/** Every `{ command, module, name }` a caller in src/ hands to `defineScripts`. */
const specs: (ScriptSpec & { file: string })[] = filesUnder(SRC, '.ts').flatMap((path) =>
  [
    ...readFileSync(path, 'utf8').matchAll(
      /\{\s*command:\s*'([A-Za-z]+)',\s*module:\s*'([a-z/]+)',\s*name:\s*'([a-z0-9-]+)'\s*\}/g,
    ),
  ].map((m) => ({
    file: relative(SRC, path),
    command: m[1] as string,
    module: m[2] as string,
    name: m[3] as string,
  })),
);

/** The comment lines a script opens with (its `--#include` lines are not part of it). */
function header(text: string): string {
  const lines = text.split('\n');
  const end = lines.findIndex((l) => !l.startsWith('--') || l.startsWith('--#include'));
  return lines.slice(0, end).join('\n');
}

/** The KEYS a script uses: `KEYS[i]`, and the ranges of `unpack(KEYS, a, b)`. */
function keysUsed(source: string): number[] {
  const used = new Set([...source.matchAll(/KEYS\[(\d+)\]/g)].map((m) => Number(m[1])));
  for (const m of source.matchAll(/unpack\(KEYS, (\d+), (\d+)\)/g)) {
    for (let i = Number(m[1]); i <= Number(m[2]) && i <= 100; i++) used.add(i);
  }
  return [...used].sort((a, b) => a - b);
}

describe('Lua scripts', () => {
  it('finds the scripts, their snippets and their callers', () => {
    expect(scripts.length).toBeGreaterThanOrEqual(18);
    expect(specs.length).toBeGreaterThanOrEqual(scripts.length);
  });

  it.each(scripts.map((s) => [s.rel, s] as const))(
    '%s names its key count, opens with KEYS, ARGV, returns',
    (_rel, s) => {
      const head = header(s.text);
      expect(head, `${s.rel}: KEYS in its header`).toMatch(/KEYS/);
      expect(head, `${s.rel}: ARGV in its header`).toMatch(/ARGV/);
      expect(head, `${s.rel}: what it returns in its header`).toMatch(/Returns/);
      const n = scriptKeyCount(s.name);
      const used = keysUsed(scriptSource(s.module, s.name));
      expect(used, `${s.rel}: uses KEYS[1..${n}] exactly`).toEqual(
        Array.from({ length: n }, (_, i) => i + 1),
      );
    },
  );

  it('keeps its snippets (named without a count) to be included, and marked so', () => {
    for (const s of snippets) {
      expect(s.text, `${s.rel}: a snippet says it is included`).toMatch(/^-- \(included\)/);
      const includers = scripts.filter(
        (x) => x.module === s.module && x.text.includes(`--#include ${s.name}\n`),
      );
      expect(includers.length, `${s.rel}: included by a script`).toBeGreaterThan(0);
      expect(keysUsed(s.text), `${s.rel}: a snippet takes its keys as arguments`).toEqual([]);
    }
  });

  it('has every caller name a script that exists, and every script a caller', () => {
    const files = new Set(scripts.map((s) => `${s.module}/${s.name}`));
    for (const spec of specs) {
      expect(
        files.has(`${spec.module}/${spec.name}`),
        `${spec.file}: ${spec.module}/lua/${spec.name}.lua`,
      ).toBe(true);
    }
    const named = new Set(specs.map((s) => `${s.module}/${s.name}`));
    for (const s of scripts) expect(named.has(`${s.module}/${s.name}`), `${s.rel} has a caller`).toBe(true);
  });

  it('refuses a script name without its key count', () => {
    expect(() => scriptKeyCount('apply-moves')).toThrow(/apply-moves.*name-N/);
    expect(scriptKeyCount('apply-moves-15')).toBe(15);
  });

  it('has the queue score bands of apply-moves-15.lua be QUEUE_SCORE_BANDS', () => {
    const text = scriptSource('rollout/collector', 'apply-moves-15');
    const band = (field: string) => {
      const m = new RegExp(`'${field}', 1\\) - ([0-9.e]+) end`).exec(text);
      if (!m) throw new Error(`apply-moves-15.lua: no band for '${field}'`);
      return -Number(m[1]);
    };
    expect(band('canaries')).toBe(QUEUE_SCORE_BANDS.canaries);
    expect(band('belowMinimum')).toBe(QUEUE_SCORE_BANDS.belowMinimum);
  });

  it("has apply pass apply-moves-15.lua's keys, and its index codes name the keys they map to", () => {
    const k = createKeys('t:');
    const keys = applyMovesKeys(k, 'r1', 'p', 'o');
    expect(keys).toHaveLength(scriptKeyCount('apply-moves-15'));
    expect(new Set(keys).size).toBe(keys.length);
    const table =
      /local index = \{([^}]*)\}/.exec(scriptSource('rollout/collector', 'apply-moves-15'))?.[1] ?? '';
    const lua = Object.fromEntries(
      [...table.matchAll(/([a-z]) = KEYS\[(\d+)\]/g)].map((m) => [m[1], Number(m[2])]),
    );
    expect(Object.keys(lua).sort()).toEqual(Object.values(INDEX_CODE).sort());
    for (const [name, code] of Object.entries(INDEX_CODE)) {
      expect(keys[(lua[code] as number) - 1], `index '${code}' is ${name}`).toBe(
        k[name as keyof typeof INDEX_CODE]('r1'),
      );
    }
  });

  it("has forget pass forget-rollout-22.lua's keys: one list, of its count, each once", () => {
    const keys = forgetRolloutKeys(createKeys('t:'), 'r1');
    expect(keys).toHaveLength(scriptKeyCount('forget-rollout-22'));
    expect(new Set(keys).size).toBe(keys.length);
  });

  describe('on a real Redis', () => {
    let redis: Redis | undefined;
    afterEach(async () => {
      if (redis) await closeRedis(redis);
      redis = undefined;
    });

    it('loads every script, and defines every caller command with its count', async () => {
      redis = createRedis(testRedisUrl());
      for (const s of scripts) {
        const sha = await redis.script('LOAD', scriptSource(s.module, s.name));
        expect(sha, s.rel).toMatch(/^[0-9a-f]{40}$/);
      }
      defineScripts(redis, specs);
      const commands = redis as unknown as Record<string, unknown>;
      for (const spec of specs) expect(typeof commands[spec.command], spec.command).toBe('function');
      // The count reaches Redis: a one-key script called with its key and argument works.
      const fu = redis as unknown as { fuHdelIf(key: string, field: string, value: string): Promise<number> };
      const key = `test:${process.pid}:{scripts}:h`;
      await redis.hset(key, 'f', 'v');
      expect(await fu.fuHdelIf(key, 'f', 'v')).toBe(1);
      expect(await redis.exists(key)).toBe(0);
    });
  });
});

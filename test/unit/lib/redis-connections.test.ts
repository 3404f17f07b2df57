/**
 * src/lib/redis/ is the only module that constructs a Redis connection, and createRedis the one
 * function in it that does: the topology (one server, Sentinel or Cluster) is decided in one place. Elsewhere in src/ ioredis is imported for its types only (as the
 * build emits it: type-only imports erased), nothing calls `new Redis(` or `new Cluster(`, and
 * no BullMQ connection is written as options (`connection: { host ... }`): BullMQ gets a
 * connection that createRedis made.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const REDIS_MODULE = join('src', 'lib', 'redis');

const files = readdirSync('src', { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
  .map((f) => ({ file: join('src', f), text: readFileSync(join('src', f), 'utf8') }));

/** The modules that `source` loads at run time, as tsc emits it. */
function runtimeImports(source: string, fileName: string): string[] {
  const js = ts.transpileModule(source, {
    fileName,
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      verbatimModuleSyntax: true,
    },
  }).outputText;
  return ts.preProcessFile(js, true, true).importedFiles.map((f) => f.fileName);
}

const CONSTRUCTS = /\bnew\s+(?:Redis|Cluster|IORedis)\s*\(/g;

describe('Redis connections in src/', () => {
  it('sees a construction, and a value import of ioredis but not a type-only one', () => {
    expect('const r = new Redis(url, {});'.match(CONSTRUCTS)).toHaveLength(1);
    expect('new Cluster([node])'.match(CONSTRUCTS)).toHaveLength(1);
    expect(runtimeImports("import { Redis } from 'ioredis';\nnew Redis();", 'a.ts')).toEqual(['ioredis']);
    expect(runtimeImports("import type { Redis } from 'ioredis';", 'a.ts')).toEqual([]);
  });

  it('are constructed in src/lib/redis/ only', () => {
    const outside = files
      .filter((f) => !f.file.startsWith(REDIS_MODULE))
      .flatMap((f) => [
        ...(f.text.match(CONSTRUCTS) ?? []).map((m) => `${f.file}: ${m}`),
        ...runtimeImports(f.text, f.file)
          .filter((m) => m === 'ioredis')
          .map((m) => `${f.file}: imports ${m}`),
        ...(/\bconnection:\s*\{/.test(f.text) ? [`${f.file}: a connection written as options`] : []),
      ]);
    expect(outside).toEqual([]);
  });

  it('are constructed by createRedis alone: one construction per topology, inside that function', () => {
    const inside = files
      .filter((f) => f.file.startsWith(REDIS_MODULE))
      .flatMap((f) => (f.text.match(CONSTRUCTS) ?? []).map(() => f.file));
    expect(inside).toEqual(Array(3).fill(join(REDIS_MODULE, 'create-redis.ts')));
    const file = files.find((f) => f.file === join(REDIS_MODULE, 'create-redis.ts'));
    const source = ts.createSourceFile('create-redis.ts', file?.text ?? '', ts.ScriptTarget.ES2022, true);
    const owners: string[] = [];
    const visit = (node: ts.Node): void => {
      if (ts.isNewExpression(node) && /^(Redis|Cluster)$/.test(node.expression.getText(source))) {
        let up: ts.Node | undefined = node.parent;
        while (up && !ts.isFunctionDeclaration(up)) up = up.parent;
        owners.push(
          `${node.expression.getText(source)} in ${up && ts.isFunctionDeclaration(up) ? up.name?.text : 'module'}`,
        );
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    // A Cluster, a Sentinel-backed Redis, a standalone Redis.
    expect(owners).toEqual(['Cluster in createRedis', 'Redis in createRedis', 'Redis in createRedis']);
  });
});

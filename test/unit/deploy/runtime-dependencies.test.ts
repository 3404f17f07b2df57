/**
 * The image installs the dependencies only (`npm install --omit=dev` in deploy/Dockerfile), so
 * every package that src/ loads at run time must be a dependency, and every dependency should be
 * loaded by src/. "At run time" is what the build emits: each file is transpiled as tsc does
 * (type-only imports erased, `verbatimModuleSyntax`) and its static and dynamic imports listed.
 * The same holds of what the image actually runs: every .js file of the built dist/ (when built:
 * `npm test` builds it; otherwise that test says it was skipped), bin/ and deploy/healthcheck.mjs.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => join(dir, f));
}

/** The package names a module loads at run time (no relative paths, no Node built-ins). */
function runtimePackages(source: string, fileName: string): string[] {
  const js = ts.transpileModule(source, {
    fileName,
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      verbatimModuleSyntax: true,
    },
  }).outputText;
  return bareImports(js);
}

/** The packages that JavaScript loads: static, dynamic and re-exporting imports. */
function bareImports(js: string): string[] {
  return ts
    .preProcessFile(js, true, true)
    .importedFiles.map((f) => f.fileName)
    .filter((s) => !s.startsWith('.') && !s.startsWith('node:') && !builtinModules.includes(s))
    .map((s) =>
      s
        .split('/')
        .slice(0, s.startsWith('@') ? 2 : 1)
        .join('/'),
    );
}

const imports = sourceFiles('src').flatMap((file) =>
  runtimePackages(readFileSync(file, 'utf8'), file).map((pkg) => ({ file, pkg })),
);

describe('runtime dependencies of src/', () => {
  it('sees static, dynamic and re-exporting imports, and not type-only ones', () => {
    const source = [
      "import type { Mock } from 'vitest';",
      "import { type Logger, pino } from 'pino';",
      "export { parse } from 'yaml';",
      "import { join } from 'node:path';",
      "import { x } from './x.js';",
      "const { GenericContainer } = await import('testcontainers');",
      "import { SomeType } from '@grafana/grafana-foundation-sdk/dashboard';",
    ].join('\n');
    expect(runtimePackages(source, 'probe.ts').sort()).toEqual([
      '@grafana/grafana-foundation-sdk',
      'pino',
      'testcontainers',
      'yaml',
    ]);
    expect(imports.map((i) => i.pkg)).toEqual(expect.arrayContaining(['ioredis', 'zod']));
  });

  it('loads only dependencies, never a devDependency, at run time', () => {
    const outside = imports.filter(({ pkg }) => !(pkg in manifest.dependencies));
    expect(outside.map(({ file, pkg }) => `${file}: ${pkg}`)).toEqual([]);
  });

  it('uses every dependency', () => {
    const used = new Set(imports.map((i) => i.pkg));
    expect(Object.keys(manifest.dependencies).filter((d) => !used.has(d))).toEqual([]);
  });
});

describe('runtime dependencies of what the image runs', () => {
  const built = existsSync('dist/cli/main.js');
  const builtFiles = built
    ? readdirSync('dist', { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.js'))
        .map((f) => join('dist', f))
    : [];
  const shipped = [
    ...builtFiles,
    ...readdirSync('bin').map((f) => join('bin', f)),
    'deploy/healthcheck.mjs',
  ].flatMap((file) => bareImports(readFileSync(file, 'utf8')).map((pkg) => ({ file, pkg })));

  it.skipIf(!built)(
    built
      ? 'every bare import of the built dist/ names a dependency'
      : 'every bare import of the built dist/ names a dependency (skipped: dist/ is not built; `npm run build`)',
    () => {
      expect(builtFiles.length).toBeGreaterThan(50);
      expect(shipped.map((i) => i.pkg)).toEqual(expect.arrayContaining(['bullmq', 'ioredis', 'zod']));
      const outside = shipped.filter(
        ({ file, pkg }) => file.startsWith('dist') && !(pkg in manifest.dependencies),
      );
      expect(outside.map(({ file, pkg }) => `${file}: ${pkg}`)).toEqual([]);
    },
  );

  it('bin/ and deploy/healthcheck.mjs load Node built-ins only', () => {
    expect(shipped.filter(({ file }) => !file.startsWith('dist'))).toEqual([]);
  });
});

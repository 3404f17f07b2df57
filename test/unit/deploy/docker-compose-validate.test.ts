/**
 * docker-compose.yml through the tools, not only read as data (docker-compose.test.ts does that):
 *   - Debian's `docker-compose config` (1.29; found, or installed as root by debian-tool.ts; the
 *     tests say in their title why they were skipped otherwise) renders it: the YAML anchor merged,
 *     the Compose schema checked; it rejects a misspelt key in a temp copy;
 *   - dclint (npm) lints it with the repository's .dclintrc.yml, without a single problem, and the
 *     rendered file too (the anchor's fields merged into the daemon and the worker), so that no
 *     service both builds and pulls an image; it rejects a broken temp copy;
 *   - the Prometheus and Grafana images are the versions the tests check with: Debian's
 *     prometheus (promtool) for the rules, scrape config and dashboard queries, and
 *     @grafana/schema for the dashboard.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DCLinter } from 'dclint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ensureDebianTool } from '../../support/debian-tool.js';
import { ensurePrometheusTools, run } from '../../support/prometheus.js';

const COMPOSE_FILE = 'docker-compose.yml';
const LINT_CONFIG = '.dclintrc.yml';
// biome-ignore lint/suspicious/noExplicitAny: compose is free-form YAML, checked field by field
type Service = Record<string, any>;

const dockerCompose = await ensureDebianTool('docker-compose', 'docker-compose');
const skipped = (title: string) => (dockerCompose.ok ? title : `${title} (skipped: ${dockerCompose.reason})`);
if (!dockerCompose.ok) console.warn(`skipped: ${dockerCompose.reason}`);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fleet-compose-'));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** `docker-compose config` of a compose text, run in the repository (its paths resolve here). */
async function composeConfig(text: string): Promise<{ code: number | null; output: string }> {
  if (!dockerCompose.ok) throw new Error(dockerCompose.reason);
  const file = join(dir, `compose-${Math.random().toString(36).slice(2)}.yml`);
  await writeFile(file, text);
  // --project-directory: relative paths resolve against the repository, as for the real file.
  return run(dockerCompose.path, ['--project-directory', process.cwd(), '-f', file, 'config'], {
    timeoutMs: 30_000,
  });
}

interface LintMessage {
  rule: string;
  type: string;
  line: number;
  message: string;
}

/** dclint's problems in a compose text, with the repository's configuration and `overrides`. */
async function lint(text: string, overrides: Record<string, 0 | 1 | 2> = {}): Promise<LintMessage[]> {
  const config = parse(readFileSync(LINT_CONFIG, 'utf8')) as { rules: Record<string, unknown> };
  const sub = await mkdtemp(join(dir, 'lint-'));
  const file = join(sub, 'docker-compose.yml');
  await writeFile(file, text);
  const linter = new DCLinter({
    rules: { ...config.rules, ...overrides } as never,
    quiet: false,
    debug: false,
    exclude: [],
  });
  const results: { messages: LintMessage[] }[] = linter.lintFiles([file], false);
  return results.flatMap((r) => r.messages);
}

const format = (messages: LintMessage[]) => messages.map((m) => `${m.line}: ${m.rule}: ${m.message}`);

describe(skipped('docker-compose config (Debian docker-compose 1.29)'), () => {
  it.skipIf(!dockerCompose.ok)(
    'renders docker-compose.yml: every service, the anchor merged into the daemon and the worker',
    async () => {
      const r = await composeConfig(readFileSync(COMPOSE_FILE, 'utf8'));
      expect(r.code, r.output).toBe(0);
      const rendered = parse(r.output) as { services: Record<string, Service> };
      expect(Object.keys(rendered.services).sort()).toEqual([
        'daemon',
        'grafana',
        'prometheus',
        'redis',
        'simulator',
        'worker',
      ]);
      for (const name of ['daemon', 'worker']) {
        const s = rendered.services[name] as Service;
        expect(s.image, name).toBe('fleet-upgrade:local');
        expect(s.build, `${name} runs the image the simulator builds`).toBeUndefined();
        expect(s.pull_policy, name).toBe('never');
        expect(s.depends_on.simulator, name).toEqual({ condition: 'service_healthy' });
        expect(s.healthcheck.test, name).toEqual(['CMD', 'node', 'deploy/healthcheck.mjs']);
      }
      const simulator = rendered.services.simulator as Service;
      expect(simulator.build.dockerfile).toBe('deploy/Dockerfile');
      expect(simulator.image).toBe('fleet-upgrade:local');
      expect(simulator.pull_policy).toBe('build');
    },
  );

  it.skipIf(!dockerCompose.ok)('rejects a misspelt key (the check is not a no-op)', async () => {
    // In the anchor, so that the daemon and the worker get it.
    const broken = readFileSync(COMPOSE_FILE, 'utf8').replace(
      '  restart: unless-stopped',
      '  restrat: unless-stopped',
    );
    const r = await composeConfig(broken);
    expect(r.code).not.toBe(0);
    expect(r.output).toMatch(/restrat/);
  });

  it.skipIf(!dockerCompose.ok)(
    'dclint finds no error in the rendered file (no service both builds and pulls an image)',
    async () => {
      const r = await composeConfig(readFileSync(COMPOSE_FILE, 'utf8'));
      expect(r.code, r.output).toBe(0);
      // 1.29 writes `version:` and unquoted ports: style, not errors.
      const errors = (await lint(r.output, { 'no-version-field': 0 })).filter((m) => m.type === 'error');
      expect(format(errors)).toEqual([]);
    },
  );
});

describe('dclint', () => {
  it('finds no problem in docker-compose.yml (warnings included), with .dclintrc.yml', async () => {
    expect(format(await lint(readFileSync(COMPOSE_FILE, 'utf8')))).toEqual([]);
  });

  it('rejects a service that builds and pulls, an unknown key and an unbound port (not a no-op)', async () => {
    const broken = readFileSync(COMPOSE_FILE, 'utf8')
      .replace('    pull_policy: build\n', '')
      .replace('ports: ["127.0.0.1:9090:9090"]', 'ports: ["9090:9090"]');
    const rules = (await lint(broken)).map((m) => m.rule);
    expect(rules).toContain('no-build-and-image');
    expect(rules).toContain('no-unbound-port-interfaces');
    const unknownKey = await lint(broken.replace('  restart: unless-stopped', '  restrat: unless-stopped'));
    expect(unknownKey.map((m) => m.rule)).toContain('invalid-schema');
  });
});

describe('image versions match what the tests check with', () => {
  const services = (
    parse(readFileSync(COMPOSE_FILE, 'utf8'), { merge: true }) as {
      services: Record<string, Service>;
    }
  ).services;
  const tagOf = (name: string) => String(services[name]?.image).split(':')[1];

  it('prom/prometheus is the version of the promtool and prometheus the tests run (Debian)', async () => {
    const tools = await ensurePrometheusTools();
    const r = await run(tools.prometheus, ['--version']);
    const version = /version (\d+\.\d+\.\d+)/.exec(r.output)?.[1];
    expect(version, r.output).toBeTruthy();
    expect(String(services.prometheus?.image)).toMatch(/^prom\/prometheus:/);
    expect(tagOf('prometheus'), `prometheus --version says ${version}`).toBe(`v${version}`);
  }, 660_000);

  it('grafana/grafana is the version of the @grafana/schema the dashboard is validated against', () => {
    const require = createRequire(import.meta.url);
    const schema = require('@grafana/schema/package.json') as { version: string };
    expect(String(services.grafana?.image)).toMatch(/^grafana\/grafana:/);
    expect(tagOf('grafana')).toBe(schema.version);
  });
});

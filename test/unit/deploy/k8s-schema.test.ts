/**
 * deploy/k8s against the Kubernetes and Prometheus Operator schemas, offline:
 *   - `kubectl kustomize deploy/k8s` renders the kustomization (kubectl found, or Debian's
 *     kubernetes-client installed as root by debian-tool.ts; otherwise those tests say in their
 *     title why they were skipped): every resource, in the namespace, with the image rewritten;
 *   - every object, rendered or in a file (the ServiceMonitor, PrometheusRule and Secret example
 *     are not in the kustomization), is validated two ways: by kubernetes-models (the API's
 *     OpenAPI schema as JSON Schema: types, formats, patterns, required fields) and by the
 *     TypeScript compiler against the same models' types (typecheck-literals.ts), which rejects a
 *     field the API does not know: JSON Schema here lets unknown fields through, as a server
 *     without strict field validation would, and drops them silently;
 *   - a temp copy with a wrong type, a misspelt field and a malformed duration is rejected.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as monitoring from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import * as apps from 'kubernetes-models/apps/v1';
import * as core from 'kubernetes-models/v1';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { ensureDebianTool } from '../../support/debian-tool.js';
import { run } from '../../support/prometheus.js';
import { typecheckLiterals } from '../../support/typecheck-literals.js';

const DIR = 'deploy/k8s';
// biome-ignore lint/suspicious/noExplicitAny: manifests are free-form YAML, checked by the schemas
type Manifest = Record<string, any>;
type ModelClass = new (data: unknown) => { validate(): void };

/** The schema of each apiVersion: its kubernetes-models module, and the name its types go by. */
const SCHEMAS: Record<string, { module: Record<string, unknown>; types: string; from: string }> = {
  v1: { module: core, types: 'core', from: 'kubernetes-models/v1' },
  'apps/v1': { module: apps, types: 'apps', from: 'kubernetes-models/apps/v1' },
  'monitoring.coreos.com/v1': {
    module: monitoring,
    types: 'monitoring',
    from: '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1',
  },
};
const TYPE_IMPORTS = Object.values(SCHEMAS)
  .map((s) => `import type * as ${s.types} from '${s.from}';`)
  .join('\n');

const label = (m: Manifest) => `${m.kind} ${m.metadata?.name}`;

/** Problems found by the JSON Schema of each object's kind (one line each; none = valid). */
function schemaProblems(manifests: readonly Manifest[]): string[] {
  return manifests.flatMap((m) => {
    const schema = SCHEMAS[m.apiVersion];
    const Model = schema?.module[m.kind] as ModelClass | undefined;
    if (!Model) return [`${label(m)}: no schema for ${m.apiVersion} ${m.kind}`];
    try {
      new Model(m).validate();
      return [];
    } catch (err) {
      return [`${label(m)}: ${(err as Error).message}`];
    }
  });
}

/** Unknown fields and wrong types found by the compiler against the models' types. */
function typeProblems(manifests: readonly Manifest[]): string[] {
  const known = manifests.filter((m) => SCHEMAS[m.apiVersion]?.module[m.kind]);
  return typecheckLiterals({
    imports: TYPE_IMPORTS,
    values: known.map((m) => ({
      label: label(m),
      type: `${SCHEMAS[m.apiVersion]?.types}.I${m.kind}`,
      value: m,
    })),
  });
}

function readManifestFiles(dir: string): Manifest[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .flatMap((f) => parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((d) => d.toJS() as Manifest));
}

const kubectl = await ensureDebianTool('kubectl', 'kubernetes-client');
const skipped = (title: string) => (kubectl.ok ? title : `${title} (skipped: ${kubectl.reason})`);
if (!kubectl.ok) console.warn(`skipped: ${kubectl.reason}`);

async function kustomize(dir: string): Promise<Manifest[]> {
  if (!kubectl.ok) throw new Error(kubectl.reason);
  const r = await run(kubectl.path, ['kustomize', dir], { timeoutMs: 30_000 });
  if (r.code !== 0) throw new Error(`kubectl kustomize ${dir} failed: ${r.output}`);
  return parseAllDocuments(r.output).map((d) => d.toJS() as Manifest);
}

const temp = mkdtempSync(join(tmpdir(), 'fleet-k8s-schema-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** A copy of deploy/k8s with `edit` applied to one file's text. */
function brokenCopy(file: string, edit: (text: string) => string): string {
  const dir = mkdtempSync(join(temp, 'k8s-'));
  cpSync(DIR, dir, { recursive: true });
  const path = join(dir, file);
  const before = readFileSync(path, 'utf8');
  const after = edit(before);
  if (after === before) throw new Error(`the edit of ${file} changed nothing`);
  writeFileSync(path, after);
  return dir;
}

describe('deploy/k8s files against the Kubernetes and Prometheus Operator schemas', () => {
  const manifests = readManifestFiles(DIR);

  it('knows the schema of every object (core, apps, monitoring.coreos.com)', () => {
    expect(manifests.map(label).sort()).toEqual([
      'ConfigMap fleet-upgrade-policies',
      'ConfigMap fleet-upgrade-settings',
      'Deployment fleet-upgrade-daemon',
      'Deployment fleet-upgrade-worker',
      'Namespace fleet-upgrade',
      'PrometheusRule fleet-upgrade',
      'Secret fleet-upgrade-credentials',
      'Service fleet-upgrade',
      'ServiceMonitor fleet-upgrade',
    ]);
  });

  it('every object is valid by its JSON Schema', () => {
    expect(schemaProblems(manifests)).toEqual([]);
  });

  it('every field of every object is one the API knows, of the right type', () => {
    expect(typeProblems(manifests)).toEqual([]);
  });

  it('a malformed ServiceMonitor interval and a wrong type in the PrometheusRule are rejected', () => {
    const dir = brokenCopy('servicemonitor.yaml', (t) => t.replace('interval: 15s', 'interval: fifteen'));
    expect(schemaProblems(readManifestFiles(dir)).join('\n')).toMatch(
      /ServiceMonitor fleet-upgrade: .*interval/,
    );
    const rule = brokenCopy('prometheusrule.yaml', (t) => t.replace('for: 10m', 'for: [10m]'));
    expect(schemaProblems(readManifestFiles(rule)).join('\n')).toMatch(/PrometheusRule fleet-upgrade: .*for/);
  });
});

describe(skipped('kubectl kustomize deploy/k8s'), () => {
  it.skipIf(!kubectl.ok)(
    'renders every resource in the fleet-upgrade namespace, with the image from kustomization.yaml',
    async () => {
      const rendered = await kustomize(DIR);
      const kustomization = parse(readFileSync(join(DIR, 'kustomization.yaml'), 'utf8')) as Manifest;
      const inFiles = (kustomization.resources as string[]).flatMap((f) =>
        parseAllDocuments(readFileSync(join(DIR, f), 'utf8')).map((d) => label(d.toJS() as Manifest)),
      );
      expect(rendered.map(label).sort()).toEqual(inFiles.sort());
      for (const m of rendered) {
        if (m.kind !== 'Namespace') expect(m.metadata.namespace, label(m)).toBe(kustomization.namespace);
      }
      const image = `${kustomization.images[0].newName}:${kustomization.images[0].newTag}`;
      for (const m of rendered.filter((x) => x.kind === 'Deployment')) {
        expect(
          m.spec.template.spec.containers.map((c: Manifest) => c.image),
          label(m),
        ).toEqual([image]);
      }
    },
  );

  it.skipIf(!kubectl.ok)('what it renders is valid by the schemas, field by field', async () => {
    const rendered = await kustomize(DIR);
    expect(schemaProblems(rendered)).toEqual([]);
    expect(typeProblems(rendered)).toEqual([]);
  });

  it.skipIf(!kubectl.ok)(
    'a broken copy (replicas: "one", a misspelt imagePullPolicy) renders, and is rejected (not a no-op)',
    async () => {
      const dir = brokenCopy('deployment-daemon.yaml', (t) =>
        t
          .replace('replicas: 1', 'replicas: one')
          .replace('          args: ["run"]', '          args: ["run"]\n          imagePullPolcy: Always'),
      );
      const rendered = await kustomize(dir);
      expect(schemaProblems(rendered).join('\n')).toMatch(
        /Deployment fleet-upgrade-daemon: .*replicas must be integer/,
      );
      const types = typeProblems(rendered).join('\n');
      expect(types).toMatch(/Deployment fleet-upgrade-daemon.*replicas/);
      expect(types).toMatch(/Deployment fleet-upgrade-daemon.*unknown field 'imagePullPolcy'/);
    },
  );
});

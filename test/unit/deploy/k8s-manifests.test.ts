/**
 * deploy/k8s: the daemon and worker Deployments run the right commands as non-root with probes on
 * /healthz and /readyz, take credentials from the Secret (the access key as a file), are scraped
 * by annotations or the ServiceMonitor; the settings ConfigMap makes a valid daemon config; the
 * policies ConfigMap holds valid policies; the Secret example holds placeholders only; the
 * PrometheusRule carries the rules file verbatim. No cluster here: these read the manifests.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { loadDaemonConfig } from '../../../src/cli/boot/daemon-config.js';
import { loadPolicies } from '../../../src/policy/load/load-policies.js';

const DIR = 'deploy/k8s';
// biome-ignore lint/suspicious/noExplicitAny: manifests are free-form YAML, checked field by field
type Manifest = Record<string, any>;

const files = readdirSync(DIR).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
const manifests: (Manifest & { file: string })[] = files.flatMap((file) =>
  parseAllDocuments(readFileSync(join(DIR, file), 'utf8')).map((d) => ({ ...(d.toJS() as Manifest), file })),
);
const byKindName = (kind: string, name: string): Manifest => {
  const m = manifests.find((x) => x.kind === kind && x.metadata?.name === name);
  if (!m) throw new Error(`no ${kind} ${name} in ${DIR}`);
  return m;
};
const daemon = byKindName('Deployment', 'fleet-upgrade-daemon');
const worker = byKindName('Deployment', 'fleet-upgrade-worker');
const settings = byKindName('ConfigMap', 'fleet-upgrade-settings').data as Record<string, string>;
const secret = byKindName('Secret', 'fleet-upgrade-credentials');

const temp = mkdtempSync(join(tmpdir(), 'fleet-k8s-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

describe.each([
  ['daemon', daemon, 'run'],
  ['worker', worker, 'worker'],
])('%s Deployment', (_name, deployment, command) => {
  const pod = deployment.spec.template;
  const container = pod.spec.containers[0];

  it(`runs \`fleet-upgrade ${command}\` with labels the selector and the Service match`, () => {
    expect(container.args).toEqual([command]);
    expect(pod.metadata.labels).toMatchObject(deployment.spec.selector.matchLabels);
    const service = byKindName('Service', 'fleet-upgrade');
    expect(pod.metadata.labels).toMatchObject(service.spec.selector);
  });

  it('runs as a non-root user, without privilege escalation, capabilities or a writable root', () => {
    expect(pod.spec.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod.spec.securityContext.runAsUser).toBeGreaterThan(0);
    expect(container.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(pod.spec.automountServiceAccountToken).toBe(false);
  });

  it('probes /healthz (liveness, startup) and /readyz (readiness) on the metrics port', () => {
    expect(container.ports).toContainEqual({ name: 'metrics', containerPort: 9464, protocol: 'TCP' });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(container.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
  });

  it('carries the prometheus.io scrape annotations for the metrics port', () => {
    expect(pod.metadata.annotations).toEqual({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': '9464',
      'prometheus.io/path': '/metrics',
    });
  });

  it('takes the access ID and REDIS_URL from the Secret and the access key as a mounted file', () => {
    expect(container.envFrom).toEqual([{ configMapRef: { name: 'fleet-upgrade-settings' } }]);
    for (const e of container.env as Manifest[]) {
      expect(e.value, `${e.name} must come from the Secret`).toBeUndefined();
      expect(e.valueFrom.secretKeyRef.name).toBe('fleet-upgrade-credentials');
      expect(Object.keys(secret.stringData)).toContain(e.valueFrom.secretKeyRef.key);
    }
    expect((container.env as Manifest[]).map((e) => e.name).sort()).toEqual([
      'REDIS_URL',
      'SUMOLOGIC_ACCESSID',
    ]);
    const keyFile = settings.SUMOLOGIC_ACCESSKEY_FILE as string;
    const mount = (container.volumeMounts as Manifest[]).find((m) => m.mountPath === dirname(keyFile));
    const volume = (pod.spec.volumes as Manifest[]).find((v) => v.name === mount?.name);
    expect(volume?.secret.secretName).toBe('fleet-upgrade-credentials');
    expect(volume?.secret.items).toEqual([{ key: 'accessKey', path: basename(keyFile) }]);
  });

  it('gives the process a writable /tmp and nothing else writable', () => {
    const writable = (container.volumeMounts as Manifest[])
      .filter((m) => !m.readOnly)
      .map((m) => m.mountPath);
    expect(writable).toEqual(['/tmp']);
  });
});

describe('memory', () => {
  it("caps V8's old space well under each container's memory limit (garbage never reaches the limit)", () => {
    const old = /--max-old-space-size=(\d+)/.exec(settings.NODE_OPTIONS ?? '');
    expect(old, 'NODE_OPTIONS in the settings ConfigMap').not.toBeNull();
    const mb = Number(old?.[1]);
    for (const name of ['fleet-upgrade-daemon', 'fleet-upgrade-worker']) {
      const c = (byKindName('Deployment', name).spec.template.spec.containers as Manifest[])[0];
      expect(c?.envFrom, name).toEqual([{ configMapRef: { name: 'fleet-upgrade-settings' } }]);
      const limit = /^(\d+)Mi$/.exec(c?.resources.limits.memory ?? '');
      // The young generation, code and buffers need the rest: at most 70 % for the old space.
      expect(mb, name).toBeLessThanOrEqual(0.7 * Number(limit?.[1]));
      // ... and the 100,000-Collector run's live heap fits: it ran with 192 MB.
      expect(mb, name).toBeGreaterThanOrEqual(192);
    }
  });
});

describe('settings, policies and the Secret', () => {
  it('the settings ConfigMap and the Secret make a valid daemon configuration listening beyond loopback', () => {
    const keyFile = join(temp, 'accessKey');
    writeFileSync(keyFile, 'k8s-test-key\n');
    const config = loadDaemonConfig({
      env: {
        ...settings,
        SUMOLOGIC_ACCESSKEY_FILE: keyFile,
        SUMOLOGIC_ACCESSID: 'id',
        REDIS_URL: 'redis://redis:6379',
      },
      flags: {},
      needApi: true,
      fileExists: () => false,
    });
    expect(config.listen).toEqual({ host: '0.0.0.0', port: 9464 });
    expect(config.policyDir).toBe('/etc/fleet-upgrade/policies');
    expect(config.api?.baseUrl).toMatch(/^https:\/\/api\.[a-z0-9]+\.sumologic\.com\/api\/v1$/);
    expect(config.api?.accessKey).toBe('k8s-test-key');
    expect(Object.keys(settings).some((k) => /ACCESSKEY$|PASSWORD|SECRET/.test(k))).toBe(false);
  });

  it('the daemon mounts the policies ConfigMap where FLEET_UPGRADE_POLICIES points, and its policies are valid', () => {
    const container = daemon.spec.template.spec.containers[0];
    const mount = (container.volumeMounts as Manifest[]).find(
      (m) => m.mountPath === settings.FLEET_UPGRADE_POLICIES,
    );
    const volume = (daemon.spec.template.spec.volumes as Manifest[]).find((v) => v.name === mount?.name);
    expect(volume?.configMap.name).toBe('fleet-upgrade-policies');
    const data = byKindName('ConfigMap', 'fleet-upgrade-policies').data as Record<string, string>;
    const dir = join(temp, 'policies');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir);
    for (const [name, text] of Object.entries(data)) writeFileSync(join(dir, name), text);
    const loaded = loadPolicies({ dir });
    expect(loaded.map((l) => l.policy.name)).toEqual(['linux-fleet']);
  });

  it('the Secret example holds placeholders only', () => {
    expect(secret.file).toBe('secret.example.yaml');
    for (const [key, value] of Object.entries(secret.stringData as Record<string, string>)) {
      expect(value, key).toMatch(/REPLACE_WITH_/);
    }
    expect(secret.data).toBeUndefined();
    const kustomization = parse(readFileSync(join(DIR, 'kustomization.yaml'), 'utf8')) as Manifest;
    expect(kustomization.resources).not.toContain('secret.example.yaml');
  });
});

describe('monitoring objects and kustomization', () => {
  it('the ServiceMonitor scrapes the metrics port of the fleet-upgrade Service (job name fleet-upgrade)', () => {
    const service = byKindName('Service', 'fleet-upgrade');
    const monitor = byKindName('ServiceMonitor', 'fleet-upgrade');
    expect(service.metadata.labels).toMatchObject(monitor.spec.selector.matchLabels);
    expect(service.spec.ports).toContainEqual({
      name: 'metrics',
      port: 9464,
      targetPort: 'metrics',
      protocol: 'TCP',
    });
    expect(monitor.spec.endpoints[0]).toMatchObject({ port: 'metrics', path: '/metrics' });
    expect(service.metadata.name).toMatch(/^fleet-upgrade/);
  });

  it('the PrometheusRule carries the alert rules file verbatim', () => {
    const rules = parse(readFileSync('deploy/prometheus/rules/fleet-upgrade.rules.yml', 'utf8')) as Manifest;
    expect(byKindName('PrometheusRule', 'fleet-upgrade').spec.groups).toEqual(rules.groups);
  });

  it('every object is labelled, and the kustomization lists existing files only', () => {
    for (const m of manifests) {
      expect(m.apiVersion, m.file).toBeTruthy();
      expect(m.metadata?.name, m.file).toBeTruthy();
      expect(m.metadata?.labels?.['app.kubernetes.io/name'], m.file).toBe('fleet-upgrade');
    }
    const kustomization = parse(readFileSync(join(DIR, 'kustomization.yaml'), 'utf8')) as Manifest;
    for (const r of kustomization.resources as string[]) expect(files).toContain(r);
    expect(kustomization.images[0].name).toBe(daemon.spec.template.spec.containers[0].image.split(':')[0]);
  });
});

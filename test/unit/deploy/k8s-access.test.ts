/**
 * deploy/k8s-access: the overlay that gives the daemon named people (docs/access.md) renders with
 * kustomize, points the daemon at its settings file, mounts the users Secret where the settings'
 * tokenFiles are, and makes a valid configuration with the example Secret's keys (placeholders
 * only). No cluster here: these read the manifests.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { loadDaemonConfig } from '../../../src/cli/boot/daemon-config.js';
import { DaemonConfigFile } from '../../../src/cli/boot/schema.js';
import { ensureDebianTool } from '../../support/debian-tool.js';

const DIR = 'deploy/k8s-access';
// biome-ignore lint/suspicious/noExplicitAny: manifests are free-form YAML, checked field by field
type Manifest = Record<string, any>;

const kubectl = await ensureDebianTool('kubectl', 'kubernetes-client');
if (!kubectl.ok) console.warn(`skipped: ${kubectl.reason}`);
// With kubectl found, a render that fails is a failure, not a skip.
const rendered = kubectl.ok
  ? execFileSync(kubectl.path, ['kustomize', DIR], { encoding: 'utf8', timeout: 60_000 })
  : undefined;

describe('deploy/k8s-access', () => {
  it.skipIf(rendered === undefined)(
    'renders: the daemon reads the access settings and mounts the users Secret',
    () => {
      const docs = parseAllDocuments(rendered as string).map((d) => d.toJS() as Manifest);
      const daemon = docs.find((d) => d.kind === 'Deployment' && d.metadata.name === 'fleet-upgrade-daemon');
      const container = daemon?.spec.template.spec.containers[0];
      expect(container.args).toEqual(['run']);
      const config = (container.env as Manifest[]).find((e) => e.name === 'FLEET_UPGRADE_CONFIG')?.value;
      const mounts = container.volumeMounts as Manifest[];
      const volumes = daemon?.spec.template.spec.volumes as Manifest[];
      const settingsMount = mounts.find((m) => config.startsWith(`${m.mountPath}/`));
      expect(volumes.find((v) => v.name === settingsMount?.name)?.configMap.name).toBe(
        'fleet-upgrade-access',
      );
      const usersMount = mounts.find((m) => m.mountPath === '/run/secrets/fleet-upgrade-users');
      expect(volumes.find((v) => v.name === usersMount?.name)?.secret.secretName).toBe('fleet-upgrade-users');
      // The base's mounts are kept.
      expect(mounts.map((m) => m.mountPath)).toContain('/etc/fleet-upgrade/policies');
      expect(docs.some((d) => d.kind === 'Secret')).toBe(false);
    },
  );

  it('makes a valid configuration with the example Secret, whose values are placeholders', () => {
    const map = parse(readFileSync(join(DIR, 'configmap-access.yaml'), 'utf8')) as Manifest;
    const secret = parse(readFileSync(join(DIR, 'secret-users.example.yaml'), 'utf8')) as Manifest;
    const tokens = secret.stringData as Record<string, string>;
    for (const value of Object.values(tokens)) expect(value).toMatch(/^REPLACE_WITH_/);
    const text = map.data['fleet-upgrade.yaml'] as string;
    const config = loadDaemonConfig({
      env: { FLEET_UPGRADE_CONFIG: '/etc/fleet-upgrade/settings/fleet-upgrade.yaml' },
      flags: {},
      needApi: false,
      needControl: true,
      readFile: () => DaemonConfigFile.parse(parse(text)),
      readText: (file) => {
        const person = file.replace('/run/secrets/fleet-upgrade-users/', '');
        if (person in tokens) return `${tokens[person]}\n`;
        return text;
      },
    });
    expect(config.access?.users.map((u) => [u.name, u.grant.role])).toEqual([
      ['alice', 'admin'],
      ['bob', 'operator'],
      ['carol', 'viewer'],
    ]);
    expect(config.audit).toEqual({ maxRecords: 1_000_000, retentionMs: 400 * 86_400_000 });
  });
});

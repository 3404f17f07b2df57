/**
 * docker-compose.yml, read as data (no container runtime here): the services the issue lists,
 * wired to each other as the processes and Prometheus expect (names, ports, environment, the
 * demo fleet and policy that load), Redis append-only, workers scalable, every bind-mounted path
 * present, Grafana provisioned with the dashboard as its home page, ports on 127.0.0.1 only,
 * and no credential but the simulator's demo user.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadDaemonConfig } from '../../../src/cli/boot/daemon-config.js';
import { loadSourceFile } from '../../../src/lib/source/yaml-source.js';
import { loadPolicies } from '../../../src/policy/load/load-policies.js';
import { FleetFile } from '../../../src/simulator/schema.js';

// biome-ignore lint/suspicious/noExplicitAny: compose is free-form YAML, checked field by field
type Service = Record<string, any>;
const compose = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};
const services = compose.services;
const service = (name: string): Service => {
  const s = services[name];
  if (!s) throw new Error(`no service ${name} in docker-compose.yml`);
  return s;
};
/** The container's view of a bind mount `./host:/container[:ro]` → [host, container]. */
const binds = (s: Service): [string, string][] =>
  ((s.volumes ?? []) as string[])
    .filter((v) => v.startsWith('./'))
    .map((v) => v.split(':').slice(0, 2) as [string, string]);
const flagValue = (command: string[], flag: string) => command[command.indexOf(flag) + 1];

describe('docker-compose.yml', () => {
  it('has redis, the simulator, the daemon, a worker, prometheus and grafana', () => {
    expect(Object.keys(services).sort()).toEqual([
      'daemon',
      'grafana',
      'prometheus',
      'redis',
      'simulator',
      'worker',
    ]);
  });

  it('runs Redis append-only with its data in a volume', () => {
    const redis = service('redis');
    expect(redis.command.join(' ')).toMatch(/--appendonly yes/);
    expect(redis.volumes).toContain('redis-data:/data');
    expect(redis.healthcheck.test).toEqual(['CMD', 'redis-cli', 'ping']);
  });

  it('serves the demo fleet from the simulator, and the daemon uses its demo user', () => {
    const simulator = service('simulator');
    const fleetFile = flagValue(simulator.command, '--fleet') as string;
    expect(fleetFile).toBe('config/demo/fleet.yaml');
    const fleet = loadSourceFile(fleetFile, FleetFile);
    const env = service('daemon').environment;
    expect(fleet.users).toContainEqual(
      expect.objectContaining({ accessId: env.SUMOLOGIC_ACCESSID, accessKey: env.SUMOLOGIC_ACCESSKEY }),
    );
    expect(flagValue(simulator.command, '--time-scale')).toBe('60');
    expect(flagValue(simulator.command, '--host')).toBe('0.0.0.0');
  });

  it('gives the daemon and the worker the settings the issue fixes, which make a valid configuration', () => {
    for (const name of ['daemon', 'worker']) {
      const env = service(name).environment;
      expect(env, name).toMatchObject({
        SUMOLOGIC_BASE_URL: 'http://simulator:8080/api/v1',
        SUMOLOGIC_ACCESSID: 'demo',
        SUMOLOGIC_ACCESSKEY: 'demo-secret',
        REDIS_URL: 'redis://redis:6379',
        FLEET_UPGRADE_LISTEN: '0.0.0.0:9464',
        FLEET_UPGRADE_TIME_SCALE: '60',
      });
      const config = loadDaemonConfig({ env, flags: {}, needApi: true, fileExists: () => false });
      expect(config.listen).toEqual({ host: '0.0.0.0', port: 9464 });
      expect(config.timeScale).toBe(60);
      expect(service(name).restart).toBe('unless-stopped');
      expect(service(name).depends_on).toMatchObject({
        redis: { condition: 'service_healthy' },
        simulator: { condition: 'service_healthy' },
      });
    }
  });

  it('runs the demo policy in the daemon, and a scalable worker without a published port', () => {
    const daemon = service('daemon');
    expect(daemon.command.slice(0, 1)).toEqual(['run']);
    const policy = flagValue(daemon.command, '--policy') as string;
    expect(loadPolicies({ files: [policy] }).map((l) => l.policy.name)).toEqual(['demo']);
    const worker = service('worker');
    expect(worker.command).toEqual(['worker']);
    expect(worker.ports).toBeUndefined();
    expect(worker.container_name).toBeUndefined();
  });

  it('builds one image for the simulator, the daemon and the worker from deploy/Dockerfile', () => {
    // Built once, by the simulator (which the others wait for), and never pulled.
    expect(service('simulator').build).toEqual({ context: '.', dockerfile: 'deploy/Dockerfile' });
    expect(service('simulator').pull_policy).toBe('build');
    for (const name of ['simulator', 'daemon', 'worker']) {
      expect(service(name).image, name).toBe('fleet-upgrade:local');
    }
    for (const name of ['daemon', 'worker']) {
      expect(service(name).build, name).toBeUndefined();
      expect(service(name).pull_policy, name).toBe('never');
    }
    const dockerfile = readFileSync('deploy/Dockerfile', 'utf8');
    expect(dockerfile.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/^USER 1000:1000$/m);
    expect(dockerfile).not.toMatch(/^USER (root|0)\b/m);
  });

  it('has Prometheus scrape the daemon and every worker replica by their compose names', () => {
    const prometheus = service('prometheus');
    const mount = binds(prometheus).find(([, inside]) => inside === '/etc/prometheus');
    expect(mount?.[0]).toBe('./deploy/prometheus');
    const config = parse(readFileSync('deploy/prometheus/prometheus.yml', 'utf8')) as {
      scrape_configs: Service[];
    };
    const job = (name: string) => config.scrape_configs.find((j) => j.job_name === name);
    expect(job('fleet-upgrade-daemon')?.static_configs).toEqual([{ targets: ['daemon:9464'] }]);
    expect(job('fleet-upgrade-worker')?.dns_sd_configs).toEqual([
      { names: ['worker'], type: 'A', port: 9464, refresh_interval: '10s' },
    ]);
  });

  it('provisions Grafana with the Prometheus data source and the dashboard as its home page', () => {
    const grafana = service('grafana');
    const mounts = new Map(binds(grafana).map(([host, inside]) => [inside, host]));
    expect(mounts.get('/etc/grafana/provisioning')).toBe('./deploy/grafana/provisioning');
    const provider = parse(
      readFileSync('deploy/grafana/provisioning/dashboards/fleet-upgrade.yml', 'utf8'),
    ) as {
      providers: { options: { path: string } }[];
    };
    const dashboardsInside = provider.providers[0]?.options.path as string;
    expect(mounts.get(dashboardsInside)).toBe('./deploy/grafana/dashboards');
    const home = grafana.environment.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH as string;
    expect(home).toBe(`${dashboardsInside}/fleet-upgrade.json`);
    expect(existsSync('deploy/grafana/dashboards/fleet-upgrade.json')).toBe(true);
    const datasources = parse(
      readFileSync('deploy/grafana/provisioning/datasources/prometheus.yml', 'utf8'),
    ) as {
      datasources: Service[];
    };
    expect(datasources.datasources).toEqual([
      expect.objectContaining({ type: 'prometheus', url: 'http://prometheus:9090', isDefault: true }),
    ]);
    expect(grafana.environment.GF_AUTH_ANONYMOUS_ORG_ROLE).toBe('Viewer');
  });

  it('publishes ports on 127.0.0.1 only, and every bind-mounted path exists', () => {
    for (const [name, s] of Object.entries(services)) {
      for (const port of (s.ports ?? []) as string[]) expect(port, name).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
      for (const [host] of binds(s)) expect(existsSync(host), `${name}: ${host}`).toBe(true);
    }
    for (const volume of ['redis-data', 'prometheus-data', 'grafana-data'])
      expect(compose.volumes).toHaveProperty(volume);
  });
});

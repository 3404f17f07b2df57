/**
 * `fleet-upgrade demo` (what `npm run demo` runs): a whole rollout rehearsed on this machine.
 * Starts Redis (REDIS_URL, or a private redis-server from PATH, as `run` does; `npm run demo` first
 * provides one of these when the machine has neither), the simulator with the demo fleet at an
 * accelerated clock, and the orchestrator on the demo policy until it converges; shows progress
 * on the terminal and ends with a summary checked against the simulator's own truth, then three
 * next steps whose commands work as printed (demo-next-steps.ts).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { createLogger } from '../../lib/logger.js';
import { ensureRedis } from '../../lib/redis/redis-server.js';
import { loadSourceFile } from '../../lib/source/yaml-source.js';
import { loadPolicies } from '../../policy/load/load-policies.js';
import type { RolloutStatus } from '../../rollout/index.js';
import { FleetFile } from '../../simulator/schema.js';
import { startSimulator } from '../../simulator/start-simulator.js';
import { rehearsalConfig } from '../boot/daemon-config.js';
import { EXIT } from '../boot/exit-codes.js';
import { startDaemon } from '../boot/start-daemon.js';
import { watchRollouts } from '../boot/watch-rollouts.js';
import { nextSteps } from '../render/demo-next-steps.js';
import { countsByMetricState, formatRolloutTable, progressBar } from '../render/format-status.js';

const DEMO_DEFAULTS = {
  fleetFile: 'config/demo/fleet.yaml',
  policyFile: 'config/demo/policy.yaml',
  timeScale: 120,
} as const;

interface DemoFlags {
  fleet: string;
  policy: string;
  timeScale: number;
}

function progressLine(r: RolloutStatus): string {
  const c = countsByMetricState(r.counts);
  // The usual counts always, the rarer ones once they appear.
  const rare = (
    [
      ['verifying', c.verifying],
      ['unhealthy', c.unhealthy],
      ['worklist', c.manual],
      ['quarantined', c.quarantined],
    ] as const
  )
    .filter(([, n]) => n > 0)
    .map(([label, n]) => ` ${label} ${n}`)
    .join('');
  return (
    `${r.id} ${progressBar(r.done, r.total, 30)} ${r.done}/${r.total}  in flight ${r.inflight}/${r.maxInFlight}  ` +
    `ok ${c.succeeded} failed ${c.failed} timed out ${c.timed_out} not alive ${c.not_alive} retrying ${c.waiting_retry}${rare}`
  );
}

/** What the rehearsal found beyond the counts, with what an operator would do about it. */
export function findings(r: RolloutStatus): string[] {
  const out: string[] = [];
  const unhealthy = r.counts.unhealthy ?? 0;
  if (unhealthy)
    out.push(
      `${unhealthy} upgrades succeeded but the Collector did not stay alive on the build (unhealthy); in a deployment, \`fleet-upgrade rollback ${r.id} --only unhealthy\` takes them back.`,
    );
  const manual = r.counts.manual ?? 0;
  if (manual)
    out.push(
      `${manual} failures need a person (disk space, permissions, upgrades disabled): \`fleet-upgrade report ${r.id} --worklist\` lists them.`,
    );
  for (const q of r.quarantined ?? [])
    out.push(`Cohort ${q.cohort} was quarantined, ${q.held} of its Collectors held: ${q.reason}.`);
  return out;
}

export function demoCommand(): Command {
  return new Command('demo')
    .description(
      'Rehearse a whole rollout on this machine: private Redis, the simulator, the orchestrator; then a summary.',
    )
    .option('--fleet <file>', 'fleet of the simulator', DEMO_DEFAULTS.fleetFile)
    .option('--policy <file>', 'rollout policy', DEMO_DEFAULTS.policyFile)
    .option(
      '--time-scale <k>',
      'how much faster than the wall clock the rehearsal runs',
      (v) => Number(v),
      DEMO_DEFAULTS.timeScale,
    )
    .action(async (flags: DemoFlags) => {
      // Warnings (a dropped connection, a 5xx) are part of the show; the summary counts them.
      const logger = createLogger({ level: 'error', name: 'demo' });
      const fleet = loadSourceFile(flags.fleet, FleetFile);
      const [loaded] = loadPolicies({ files: [flags.policy] });
      const policy = loaded?.policy;
      const user = fleet.users[0];
      if (!policy || !user) throw new Error(`${flags.policy} holds no policy or ${flags.fleet} no user`);
      const dir = mkdtempSync(join(tmpdir(), 'fleet-upgrade-demo-'));
      const out = (line: string) => process.stdout.write(`${line}\n`);
      const redis = await ensureRedis({ logger, dataDir: join(dir, 'redis') });
      out(`Redis: ${redis.source === 'env' ? 'REDIS_URL' : `a private redis-server (${redis.url})`}`);
      const sim = await startSimulator({ fleet, timeScale: flags.timeScale });
      out(
        `Simulator: ${sim.baseUrl}, ${sim.model.size} Collectors, builds up to ${sim.model.latest}, clock x${flags.timeScale}`,
      );
      out(
        `Policy: ${policy.name} (target ${policy.target}, maxInFlight ${policy.maxInFlight}, ${policy.api.requestsPerSecond} requests/s)`,
      );
      const daemon = await startDaemon({
        role: 'run',
        logger,
        policies: () => [policy],
        config: rehearsalConfig({
          redisUrl: redis.url,
          keyPrefix: `demo-${randomBytes(4).toString('hex')}:`,
          dataDir: dir,
          timeScale: flags.timeScale,
          policyFiles: [flags.policy],
          api: { baseUrl: sim.baseUrl, accessId: user.accessId, accessKey: user.accessKey },
        }),
      });
      out(`Metrics: ${daemon.http?.url}/metrics\n`);
      const started = Date.now();
      const tty = process.stdout.isTTY;
      let lastPrint = 0;
      try {
        const done = await watchRollouts({
          daemon,
          policies: () => [policy],
          intervalMs: 250,
          onProgress: (rollouts) => {
            const r = rollouts[0];
            if (!r) return;
            if (tty) process.stdout.write(`\r${progressLine(r)}\x1b[K`);
            else if (Date.now() - lastPrint > 3000) {
              lastPrint = Date.now();
              out(progressLine(r));
            }
          },
        });
        if (tty) out('');
        const stats = (await (await fetch(`${sim.url}/_sim/stats`)).json()) as {
          tasksCreated: number;
          maxConcurrentTasks: number;
          rateLimited: number;
          requests: { total: number; byEndpoint: Record<string, number> };
          injectedErrors: number;
          dropped: number;
        };
        out(`\n${formatRolloutTable(done ?? [])}\n`);
        for (const line of (done ?? []).flatMap(findings)) out(line);
        const minutes = (((Date.now() - started) / 1000) * flags.timeScale) / 60;
        out(
          `Done in ${((Date.now() - started) / 1000).toFixed(1)} s (${minutes.toFixed(0)} simulated minutes).`,
        );
        out(
          `The service saw ${stats.requests.total} requests (${stats.rateLimited} answered 429), ` +
            `${stats.tasksCreated} tasks created, at most ${stats.maxConcurrentTasks} unfinished at once (limit ${policy.maxInFlight}), ` +
            `${((stats.requests.byEndpoint.status ?? 0) / Math.max(1, stats.tasksCreated)).toFixed(1)} status reads per task; ` +
            `it injected ${stats.injectedErrors} server errors and ${stats.dropped} dropped connections.`,
        );
        out('');
        for (const line of nextSteps({
          fleetFile: flags.fleet,
          policyFile: flags.policy,
          timeScale: flags.timeScale,
          user,
          redis:
            redis.source === 'local'
              ? 'local'
              : process.env.FLEET_UPGRADE_DEMO_REDIS === 'container'
                ? 'container'
                : 'env',
          defaults: DEMO_DEFAULTS,
        }))
          out(line);
      } finally {
        await daemon.stop();
        await sim.close();
        await redis.stop();
        rmSync(dir, { recursive: true, force: true });
      }
      process.exitCode = EXIT.ok;
    });
}

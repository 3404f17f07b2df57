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
import { isAbsolute, join, relative } from 'node:path';
import { Command } from 'commander';
import { createLogger } from '../../lib/logger.js';
import { ensureRedis } from '../../lib/redis/redis-server.js';
import { loadSourceFile } from '../../lib/source/yaml-source.js';
import { loadPolicies } from '../../policy/load/load-policies.js';
import { FleetFile } from '../../simulator/schema.js';
import { startSimulator } from '../../simulator/start-simulator.js';
import { rehearsalConfig } from '../boot/daemon-config.js';
import { EXIT } from '../boot/exit-codes.js';
import { startDaemon } from '../boot/start-daemon.js';
import { watchRollouts } from '../boot/watch-rollouts.js';
import {
  closingLines,
  DEMO_WIDTH,
  findings,
  progressLines,
  type ServiceStats,
} from '../render/demo-lines.js';
import { nextSteps } from '../render/demo-next-steps.js';
import { formatStatus, wrapText } from '../render/format-status.js';

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
      // A sentence within the demo's 80 columns.
      const say = (text: string) => {
        for (const line of wrapText(text, DEMO_WIDTH, '', '  ')) out(line);
      };
      const redis = await ensureRedis({ logger, dataDir: join(dir, 'redis') });
      out(`Redis: ${redis.source === 'env' ? 'REDIS_URL' : `a private redis-server (${redis.url})`}`);
      const sim = await startSimulator({ fleet, timeScale: flags.timeScale });
      say(
        `Simulator: ${sim.baseUrl}, ${sim.model.size} Collectors, builds up to ${sim.model.latest}, clock x${flags.timeScale}`,
      );
      say(
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
      // Lines of the last redraw: the next one goes back up over them.
      let drawn = 0;
      try {
        const done = await watchRollouts({
          daemon,
          policies: () => [policy],
          intervalMs: 250,
          onProgress: (rollouts) => {
            const r = rollouts[0];
            if (!r) return;
            // A terminal narrower than 80 columns gets lines as narrow: a redraw that wrapped
            // would go back up too few lines.
            const lines = progressLines(
              r,
              tty ? Math.min(DEMO_WIDTH, process.stdout.columns || DEMO_WIDTH) : DEMO_WIDTH,
            );
            if (tty) {
              while (lines.length < drawn) lines.push('');
              const up = drawn > 1 ? `\x1b[${drawn - 1}A` : '';
              process.stdout.write(`${up}\r${lines.map((l) => `${l}\x1b[K`).join('\n')}`);
              drawn = lines.length;
            } else if (Date.now() - lastPrint > 3000) {
              lastPrint = Date.now();
              for (const line of lines) out(line);
            }
          },
        });
        if (tty) out('');
        const stats = (await (await fetch(`${sim.url}/_sim/stats`)).json()) as ServiceStats;
        // status's table (80 columns), without the sentences under its rows: the findings say more.
        out(
          `\n${formatStatus({ rollouts: (done ?? []).map((r) => ({ ...r, quarantined: [] })), now: Date.now() }, { width: DEMO_WIDTH })}\n`,
        );
        for (const text of (done ?? []).flatMap(findings)) say(text);
        for (const line of closingLines({
          seconds: (Date.now() - started) / 1000,
          timeScale: flags.timeScale,
          maxInFlight: policy.maxInFlight,
          stats,
        }))
          out(line);
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
          command: commandFromHere(),
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

/** This command's entry as typed from the current folder: `./bin/fleet-upgrade.js` in the project. */
function commandFromHere(): string {
  const entry = process.argv[1];
  if (!entry) return './bin/fleet-upgrade.js';
  const path = relative(process.cwd(), entry);
  if (isAbsolute(path) || path.startsWith('..')) return path.length < entry.length ? path : entry;
  return `./${path}`;
}

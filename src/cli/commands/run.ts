/**
 * `fleet-upgrade run`: the usual deployment, scheduler + workers + HTTP. With `--once`, runs the
 * given policies until their rollouts have converged (or halted with nothing under way), prints
 * a summary and exits 0 when every selected Collector succeeded, 2 otherwise. SIGINT (Ctrl-C),
 * SIGTERM and SIGHUP stop it within seconds (stop-on-signal.ts): exit 0 when the stop was clean,
 * 1 when Redis was away; `--once` interrupted exits 130, 143 or 129; a second signal exits at once.
 */
import { Command } from 'commander';
import { createLogger } from '../../lib/logger.js';
import { policyProblems } from '../../policy/load/policy-problems.js';
import { createPolicyStore, type PolicyFileChange } from '../../policy/load/policy-store.js';
import type { AuditRecord } from '../../rollout/index.js';
import { addDaemonOptions } from '../boot/add-daemon-options.js';
import { type DaemonFlags, loadDaemonConfig } from '../boot/daemon-config.js';
import { EXIT } from '../boot/exit-codes.js';
import { guardDaemon } from '../boot/guard-daemon.js';
import { DEFAULT_GIVE_UP_AFTER_MS } from '../boot/read-redis-settings.js';
import { type Daemon, startDaemon } from '../boot/start-daemon.js';
import { createStopper, SIGNAL_EXIT } from '../boot/stop-on-signal.js';
import { allSucceeded, blockedByCredentials, watchRollouts } from '../boot/watch-rollouts.js';
import { formatStatus } from '../render/format-status.js';

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

interface RunFlags extends DaemonFlags {
  once?: boolean;
}

export function runCommand(): Command {
  const command = new Command('run')
    .description(
      'Run the scheduler, workers and HTTP endpoints (/metrics, /healthz, /readyz, /status, the rollout API).',
    )
    .option('--listen <host:port>', 'address of the HTTP endpoints (default 127.0.0.1:9464)')
    .option('--policy <file>', 'run this policy file instead of the folder (repeatable)', collect)
    .option('--policies <dir>', 'folder of policy files (default config/policies)')
    .option('--once', 'run until the rollouts converge, print a summary, exit 0 (all succeeded) or 2', false)
    .option(
      '--auth-reads',
      'the HTTP read endpoints (/status, /rollouts...) need the control token too (FLEET_UPGRADE_AUTH_READS)',
    );
  addDaemonOptions(command).action(async (flags: RunFlags) => {
    const config = loadDaemonConfig({ env: process.env, flags, needApi: true, needControl: true });
    const logger = createLogger({ level: config.logLevel, name: 'run' });
    let policiesChanged = () => {};
    let auditPolicy = (_change: PolicyFileChange) => {};
    const store = createPolicyStore({
      ...(config.policyFiles.length ? { files: config.policyFiles } : { dir: config.policyDir }),
      onEvent: (e) => {
        if (e.type === 'invalid') {
          logger.error(
            { file: e.file, error: e.error.message, keeping: e.keeping?.name },
            'policy file invalid; keeping the last valid version',
          );
        } else if (e.type === 'folder-error')
          logger.error({ error: e.error.message }, 'policy folder unreadable; policies unchanged');
        else logger.info({ file: e.file, policy: e.policy.name }, `policy ${e.type}`);
        // `status` shows an invalid file (and stops showing it once it is valid) at once.
        policiesChanged();
      },
      onError: (err) => logger.error({ err }, 'policy reload error'),
      // Every policy file change the daemon loads is an audit record (docs/access.md).
      onFileChange: (change) => auditPolicy(change),
    });
    store.reload(); // throws a ConfigError (exit 78) when a policy is invalid at start
    store.start();
    const policies = () => store.policies().map((l) => l.policy);
    // /readyz: 503 naming each invalid file, its line and reason (policy-problems.ts).
    const problems = () => policyProblems(store.status());
    let daemon: Daemon | undefined;
    let finished = false;
    // Ctrl-C, SIGTERM: a bounded stop, the private Redis last; a second signal exits at once
    // (stop-on-signal.ts). Interrupted before its rollouts finished, `--once` exits 128 + the
    // signal's number: 0 would tell a script that every Collector succeeded. Listening before the
    // daemon starts: a signal meanwhile exits, and the exit stops a private redis-server begun.
    const stopper = createStopper({
      logger,
      close: async () => {
        store.close();
        return daemon ? daemon.stop() : true;
      },
      exitCode: (signal, clean) =>
        flags.once && !finished ? SIGNAL_EXIT[signal] : clean ? EXIT.ok : EXIT.failure,
    });
    daemon = await startDaemon({
      config,
      role: 'run',
      logger,
      policies,
      policyProblems: problems,
      policyStatus: () => store.status(),
    });
    const running = daemon;
    // Through a Redis failover or restart the process goes on; past redis.giveUpAfter it exits 1.
    guardDaemon({
      logger,
      redis: running.redis,
      giveUpAfterMs: config.redisGiveUpAfterMs ?? DEFAULT_GIVE_UP_AFTER_MS,
      stop: (code) => stopper.stop(code),
    });
    policiesChanged = () => running.problems.kick();
    auditPolicy = (change) => {
      const record: AuditRecord = {
        who: 'daemon',
        via: 'daemon',
        what: 'policy.changed',
        answer: 'allowed',
        ...change,
      };
      logger.info({ audit: true, ...record }, 'audit');
      running.audit
        .append(record)
        .catch((err: Error) => logger.warn({ err: err.message }, 'audit record not written'));
    };
    if (!flags.once) {
      await stopper.signalled;
      return;
    }
    // --once: watch Redis until the policies' rollouts are done.
    const started = Date.now();
    let lastLog = 0;
    const done = await watchRollouts({
      daemon,
      policies,
      logger,
      intervalMs: Math.max(200, config.tickMs),
      stopped: () => stopper.signal() !== undefined,
      onProgress: (rollouts) => {
        if (Date.now() - lastLog < 5000) return;
        lastLog = Date.now();
        for (const r of rollouts) {
          logger.info(
            { rollout: r.id, phase: r.phase, done: r.done, total: r.total, counts: r.counts },
            'progress',
          );
        }
      },
    }).catch(async (err: unknown) => {
      // Said here, then stopped: a daemon left open would keep the process alive.
      process.stderr.write(`fleet-upgrade: ${err instanceof Error ? err.message : String(err)}\n`);
      return stopper.stop(() => EXIT.failure);
    });
    if (!done || stopper.stopping()) return;
    finished = true;
    const good = allSucceeded(done);
    // status's table, within 80 columns, with what each rollout waits for under its row.
    process.stdout.write(`${formatStatus({ rollouts: done, now: running.clock.now() })}\n`);
    // A rollout that cannot move until a person fixes credentials ends --once too: said, exit 1.
    const blocked = done.filter(blockedByCredentials);
    for (const r of blocked)
      for (const p of r.byOrg.filter((part) => part.waiting))
        process.stdout.write(
          `${r.id}: ${p.waiting}: fix the organization's access key; nothing else moves it\n`,
        );
    const verdict = blocked.length
      ? 'stopped: organizations wait for their credentials'
      : good
        ? 'every selected Collector succeeded'
        : 'some Collectors did not succeed';
    process.stdout.write(`finished in ${((Date.now() - started) / 1000).toFixed(1)} s: ${verdict}\n`);
    await stopper.stop(() => (blocked.length ? EXIT.failure : good ? EXIT.ok : EXIT.incomplete));
  });
  return command;
}

/**
 * What the end-to-end harnesses share about one deployment under test: its CLI run as child
 * processes (output kept, every child killed by `killChildren`), and its state read from Redis as
 * `status` shows it (`waitFor` polls it every 100 ms until a condition holds, or fails naming the
 * last status and the organizations' problems).
 */
import type { ChildProcess } from 'node:child_process';
import type { FleetState } from '../../src/cli/boot/create-state.js';
import { type CollectorRecord, type FleetStatus, readFleetStatus } from '../../src/rollout/index.js';
import { type CliChild, spawnCliChild } from './cli-child.js';

export interface DeploymentView {
  /** `fleet-upgrade <args>` as a child process; its output (stdout and stderr) in `output()`. */
  spawnCli(args: string[]): CliChild;
  status(): Promise<FleetStatus>;
  waitFor(done: (s: FleetStatus) => boolean, timeoutMs: number): Promise<FleetStatus>;
  records(rolloutId: string): Promise<CollectorRecord[]>;
  /** SIGKILLs every child still running. */
  killChildren(): void;
}

export function deploymentView(state: FleetState, env: NodeJS.ProcessEnv): DeploymentView {
  const children: ChildProcess[] = [];
  return {
    spawnCli: (args) => spawnCliChild(args, env, children),
    status: () => readFleetStatus(state),
    async waitFor(done, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      let last: FleetStatus | undefined;
      while (Date.now() < deadline) {
        last = await readFleetStatus(state);
        if (done(last)) return last;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(
        `not reached within ${timeoutMs} ms; last status: ${JSON.stringify(
          last?.rollouts.map((r) => ({ id: r.id, phase: r.phase, byOrg: r.byOrg })),
        )}; org problems: ${JSON.stringify(last?.orgProblems)}`,
      );
    },
    async records(rolloutId) {
      const out: CollectorRecord[] = [];
      for await (const r of state.store.all(rolloutId)) out.push(r);
      return out;
    },
    killChildren() {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    },
  };
}

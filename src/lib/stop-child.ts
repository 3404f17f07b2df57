import type { ChildProcess } from 'node:child_process';
import { withTimeout } from './with-timeout.js';

/** Stops a child process: SIGTERM, then SIGKILL when it has not exited after `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<'exited'>((resolve) => child.once('exit', () => resolve('exited')));
  child.kill('SIGTERM');
  if ((await withTimeout(exited, graceMs, () => 'timeout' as const)) === 'timeout') {
    child.kill('SIGKILL');
    await exited;
  }
}

/**
 * The built CLI (`bin/fleet-upgrade.js`, after `npm run build`) as a child process of a test, its
 * stdout and stderr kept together in `output()`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

export const CLI = join(import.meta.dirname, '..', '..', 'bin', 'fleet-upgrade.js');

export type CliChild = ChildProcess & { output(): string };

/** `fleet-upgrade <args>` (the built CLI) as a child with `env`, added to `children`. */
export function spawnCliChild(args: string[], env: NodeJS.ProcessEnv, children: ChildProcess[]): CliChild {
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  children.push(child);
  return Object.assign(child, { output: () => out });
}

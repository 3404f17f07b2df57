/** A short-lived command of the built CLI, run to its end. */
import { spawn } from 'node:child_process';

/** `fleet-upgrade ARGS` to its end (bounded): its stdout, stderr and exit code. */
export function runCli(
  cli: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ stdout: string; stderr: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = { stdout: '', stderr: '' };
    child.stdout.on('data', (d: Buffer) => {
      out.stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out.stderr += d.toString();
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`fleet-upgrade ${args.join(' ')} did not end within 60 s`));
    }, 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ ...out, code });
    });
  });
}

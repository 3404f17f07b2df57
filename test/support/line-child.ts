/**
 * A child process (`node --import tsx script.ts`) that talks in lines: `next()` returns the
 * next line it printed (buffered, so none is lost while the test waits on another child),
 * bounded in time, with the child's stderr in the error when it says nothing or exits.
 * Every child started here is killed by `stopLineChildren()` (call it in afterEach).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface LineChild {
  child: ChildProcess;
  next(limitMs?: number): Promise<string>;
  send(line: string): void;
}

const running = new Set<ChildProcess>();

export function startLineChild(script: string, env: Record<string, string>): LineChild {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  running.add(child);
  child.on('exit', () => running.delete(child));
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-4000);
  });
  const lines: string[] = [];
  let wake: (() => void) | undefined;
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (l) => {
    lines.push(l);
    wake?.();
  });
  child.on('exit', () => wake?.());
  const name = script.split('/').at(-1);
  return {
    child,
    async next(limitMs = 20_000) {
      const deadline = Date.now() + limitMs;
      while (lines.length === 0) {
        if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}): ${stderr}`);
        if (Date.now() >= deadline) throw new Error(`${name} said nothing within ${limitMs} ms: ${stderr}`);
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, Math.max(1, deadline - Date.now()));
        });
      }
      return lines.shift() as string;
    },
    send(line) {
      child.stdin?.write(`${line}\n`);
    },
  };
}

export async function stopLineChildren(): Promise<void> {
  const all = [...running];
  running.clear();
  await Promise.all(all.map(stopLineChild));
}

/** Stops one child: SIGTERM, then SIGKILL after 2 s. */
export function stopLineChild(c: ChildProcess): Promise<void> {
  running.delete(c);
  return new Promise<void>((resolve) => {
    if (c.exitCode !== null || c.signalCode !== null) return resolve();
    const timer = setTimeout(() => c.kill('SIGKILL'), 2000);
    c.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    c.kill('SIGTERM');
  });
}

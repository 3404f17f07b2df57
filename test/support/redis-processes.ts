/**
 * The redis-server processes of a data folder, read from /proc (Linux): which serve a folder, and
 * in which process group each runs. Redis rewrites its command line (its process title), so the
 * folder is read from its working directory: it moves there.
 */
import { existsSync, readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';

/** Whether /proc can be read here (the helpers answer nothing elsewhere). */
export const hasProc = existsSync('/proc/self/cwd');

/** Pids of the redis-server processes serving `dir` (none must be left behind). */
export function serversOn(dir: string): number[] {
  if (!hasProc || !existsSync(dir)) return [];
  const target = realpathSync(dir);
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readFileSync(`/proc/${entry}/comm`, 'utf8').startsWith('redis-server')) continue;
      if (readlinkSync(`/proc/${entry}/cwd`) === target) pids.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to look at
    }
  }
  return pids;
}

/** The process group of `pid` (field 5 of /proc/PID/stat), or undefined when it is gone. */
export function processGroupOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count after its end.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[2]);
  } catch {
    return undefined;
  }
}

/** Waits (bounded) until no redis-server serves `dir`; answers the pids still there. */
export async function serversGone(dir: string, limitMs: number): Promise<number[]> {
  const deadline = Date.now() + limitMs;
  let left = serversOn(dir);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    left = serversOn(dir);
  }
  return left;
}

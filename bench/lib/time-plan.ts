/**
 * Times `fleet-upgrade plan --policy FILE --json` against a simulator, as a user runs it: a
 * process of its own, the API settings from the environment, no Redis (the budget in memory).
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface PlanTiming {
  command: string;
  seconds: number;
  exitCode: number | null;
  listed?: number;
  wouldMove?: number;
  stderr: string;
}

const root = fileURLToPath(new URL('../..', import.meta.url));

export async function timePlan(o: {
  /** 'dist': bin/fleet-upgrade.js (the built CLI); 'source': the sources through tsx. */
  build: 'dist' | 'source';
  baseUrl: string;
  accessId: string;
  accessKey: string;
  dir: string;
  /** FLEET_UPGRADE_TIME_SCALE of the plan (the budget is 4 requests per second of that clock). */
  timeScale: number;
}): Promise<PlanTiming> {
  const policyFile = join(o.dir, 'scale-policy.yaml');
  writeFileSync(policyFile, 'name: scale\n');
  const args =
    o.build === 'dist'
      ? [join(root, 'bin', 'fleet-upgrade.js')]
      : // tsx by its file URL: the plan runs in a folder of its own, where the package is not found.
        ['--import', import.meta.resolve('tsx'), join(root, 'bench', 'lib', 'fleet-upgrade-cli.ts')];
  args.push('plan', '--policy', policyFile, '--json');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SUMOLOGIC_BASE_URL: o.baseUrl,
    SUMOLOGIC_ACCESSID: o.accessId,
    SUMOLOGIC_ACCESSKEY: o.accessKey,
    FLEET_UPGRADE_TIME_SCALE: String(o.timeScale),
    LOG_LEVEL: 'warn',
  };
  delete env.REDIS_URL;
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { cwd: o.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => out.push(d));
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exitCode = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const seconds = Number(((performance.now() - t0) / 1000).toFixed(2));
  const timing: PlanTiming = {
    command: `node ${args.join(' ')}`,
    seconds,
    exitCode,
    stderr: stderr.slice(0, 500),
  };
  try {
    const body = JSON.parse(Buffer.concat(out).toString()) as { listed: number; collectors: unknown[] };
    timing.listed = body.listed;
    timing.wouldMove = body.collectors.length;
  } catch {
    // the exit code and stderr say what went wrong
  }
  return timing;
}

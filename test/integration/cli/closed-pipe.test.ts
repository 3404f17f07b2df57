/**
 * `fleet-upgrade report | head`: a reader that closes its end early. The built CLI must end
 * quietly with its exit code, not print a stack trace of the unhandled EPIPE (it did).
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CLI } from '../../support/rollout-harness.js';

describe('a closed pipe on stdout', () => {
  it('ends the command quietly with exit 0', async () => {
    // The reader is gone before the CLI writes its help (node takes far longer to start).
    const child = spawn(process.execPath, [CLI, '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});

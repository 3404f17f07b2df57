import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  commandLines,
  type NextStepsInput,
  nextSteps,
  shellWord,
} from '../../../src/cli/render/demo-next-steps.js';

const input: NextStepsInput = {
  fleetFile: 'config/demo/fleet.yaml',
  policyFile: 'config/demo/policy.yaml',
  timeScale: 120,
  user: { accessId: 'demo', accessKey: 'demo-secret' },
  redis: 'local',
  defaults: { fleetFile: 'config/demo/fleet.yaml', policyFile: 'config/demo/policy.yaml', timeScale: 120 },
};

describe('nextSteps', () => {
  it('with the defaults: three steps, `npm run demo` plain, nothing said of Redis', () => {
    const text = nextSteps(input).join('\n');
    // Within 80 columns: a long command goes on over lines ending in ` \`, as a shell reads it.
    for (const line of text.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(text.replace(/ \\\n\s+/g, ' ')).toContain(
      'SUMOLOGIC_BASE_URL=http://127.0.0.1:8080/api/v1 SUMOLOGIC_ACCESSID=demo SUMOLOGIC_ACCESSKEY=demo-secret FLEET_UPGRADE_TIME_SCALE=120 ./bin/fleet-upgrade.js run --policy config/demo/policy.yaml',
    );
    expect(text).toMatch(/\n {7}npm run demo$/);
    expect(text).not.toMatch(/REDIS_URL/);
  });

  it('names the flags that differ from the defaults, and the Redis the commands need', () => {
    const text = nextSteps({ ...input, timeScale: 60, redis: 'container' }).join('\n');
    expect(text).toContain('npm run demo -- --time-scale 60');
    expect(text.replace(/ \\\n\s+/g, ' ')).toContain('--time-scale 60 --port 8080');
    expect(text).toMatch(/container is gone[\s\S]*export REDIS_URL=redis:\/\/127\.0\.0\.1:6379/);
    expect(nextSteps({ ...input, redis: 'env' }).join('\n')).toMatch(/with REDIS_URL set as for this demo/);
  });

  it('commandLines breaks a command between words, each line but the last ending in a backslash', () => {
    const words = Array.from({ length: 30 }, (_, i) => `word${i}`);
    const lines = commandLines(words, '  ', 40);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(40);
    expect(lines.slice(0, -1).every((l) => l.endsWith(' \\'))).toBe(true);
    const echoed = spawnSync('sh', ['-c', `printf '%s ' ${lines.join('\n')}`]).stdout.toString();
    expect(echoed.trim()).toBe(words.join(' '));
  });

  it('quotes a word only when a shell would read it otherwise', () => {
    expect(shellWord('config/demo/fleet.yaml')).toBe('config/demo/fleet.yaml');
    for (const word of ["my fleet's.yaml", 'a$b', '*.yaml', ''])
      expect(spawnSync('sh', ['-c', `printf %s ${shellWord(word)}`]).stdout.toString()).toBe(word);
  });
});

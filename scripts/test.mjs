// `npm test`: sets up what the tests need (dependencies, a build for the CLI tests; Redis is
// found or started by test/support/global-setup.ts) and runs vitest. Extra arguments go to vitest.
// It ends with one plain line, "N passed, N failed, N skipped", and vitest's exit code.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build, ensureDeps, root } from './ensure-deps.mjs';

ensureDeps();
build();
const summaryFile = join(root, '.tmp', 'vitest-summary.json');
mkdirSync(join(root, '.tmp'), { recursive: true });
rmSync(summaryFile, { force: true });
const vitest = spawnSync(
  'npx',
  [
    'vitest',
    'run',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${summaryFile}`,
    ...process.argv.slice(2),
  ],
  { cwd: root, stdio: 'inherit' },
);
if (existsSync(summaryFile)) {
  const s = JSON.parse(readFileSync(summaryFile, 'utf8'));
  process.stdout.write(
    `\n${s.numPassedTests} passed, ${s.numFailedTests} failed, ${s.numPendingTests + s.numTodoTests} skipped\n`,
  );
}
process.exit(vitest.status ?? 1);

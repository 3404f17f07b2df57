// `npm test`: sets up what the tests need (dependencies, a build for the CLI tests; Redis is
// found or started by test/support/global-setup.ts) and runs vitest. Extra arguments go to vitest.
import { build, ensureDeps, run } from './ensure-deps.mjs';

ensureDeps();
build();
run('npx', ['vitest', 'run', ...process.argv.slice(2)]);

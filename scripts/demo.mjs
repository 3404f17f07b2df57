// `npm run demo`: sets itself up (dependencies, build, Redis) and rehearses a whole rollout on this
// machine: a private Redis, the simulator with the demo fleet, the orchestrator on the demo
// policy (see `fleet-upgrade demo --help`). Extra arguments go to the demo command.
// Redis: the demo command itself uses REDIS_URL or starts a private redis-server from PATH (as
// `run` does); when neither is there, this script first starts a container or installs Debian's
// redis-server (scripts/provision-redis.mjs) and runs the demo in the environment that finds it.
import { spawn } from 'node:child_process';
import { build, ensureDeps, root } from './ensure-deps.mjs';
import { prepareRedis } from './provision-redis.mjs';

// Said at once: setting up on a fresh clone takes a while, and silence looks like a hang.
process.stderr.write('fleet-upgrade demo: setting up (dependencies, build, Redis), then the rehearsal\n');
ensureDeps();
build();
const redis = await prepareRedis().catch((/** @type {Error} */ err) => {
  process.stderr.write(`fleet-upgrade: ${err.message}\n`);
  process.exit(1);
});
const demo = spawn(process.execPath, ['bin/fleet-upgrade.js', 'demo', ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
  // A container stops with this script: the demo's next steps then say to start a Redis first.
  env: redis.source === 'container' ? { ...redis.env, FLEET_UPGRADE_DEMO_REDIS: 'container' } : redis.env,
});
// Ctrl-C reaches the demo from the terminal; wait for it to finish, then stop a container we started.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => demo.kill('SIGTERM'));
const code = await new Promise((resolve) => {
  demo.on('error', (err) => {
    process.stderr.write(`fleet-upgrade: ${err.message}\n`);
    resolve(1);
  });
  demo.on('exit', (status) => resolve(status ?? 1));
});
await redis.stop();
process.exit(code);

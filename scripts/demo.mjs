// `npm run demo`: sets itself up (dependencies, build) and rehearses a whole rollout on this
// machine: a private Redis, the simulator with the demo fleet, the orchestrator on the demo
// policy (see `fleet-upgrade demo --help`). Extra arguments go to the demo command.
import { build, ensureDeps, run } from './ensure-deps.mjs';

ensureDeps();
build();
run(process.execPath, ['bin/fleet-upgrade.js', 'demo', ...process.argv.slice(2)]);

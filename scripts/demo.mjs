// `npm run demo`: sets itself up (dependencies, build) and runs the demo.
// The rollout demo arrives with the orchestrator (issue #4). Until then this starts the simulator
// with the demo fleet (config/fleets/demo.yaml), shows what a client sees, and stops.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, ensureDeps, root } from './ensure-deps.mjs';

ensureDeps();
build();
const { loadSourceFile } = await import(pathToFileURL(join(root, 'dist/lib/yaml-source.js')).href);
const { FleetFile } = await import(pathToFileURL(join(root, 'dist/simulator/schema.js')).href);
const { startSimulator } = await import(pathToFileURL(join(root, 'dist/simulator/start-simulator.js')).href);

const fleet = loadSourceFile(join(root, 'config/fleets/demo.yaml'), FleetFile);
const sim = await startSimulator({ fleet, timeScale: 60 });
const headers = {
  authorization: `Basic ${Buffer.from('demo:demo-secret').toString('base64')}`,
  'content-type': 'application/json',
  accept: 'application/json',
};
// The demo fleet injects the odd 5xx and dropped connection, as the real service has them: try again.
async function get(path) {
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await fetch(`${sim.baseUrl}${path}`, { headers });
      if (res.ok) return await res.json();
      if (attempt >= 5) throw new Error(`GET ${path} answered ${res.status}`);
    } catch (err) {
      if (attempt >= 5) throw err;
    }
    await new Promise((r) => setTimeout(r, 100 * attempt));
  }
}
console.log(`fleet-upgrade demo: the rollout demo comes with the orchestrator (issue #4).`);
console.log(`Simulated Collector Upgrade Service at ${sim.baseUrl} (demo fleet, clock x60):`);
const { targets } = await get('/collectors/upgrades/targets');
console.log(`  builds: ${targets.map((t) => t.version + (t.latest ? ' (latest)' : '')).join(', ')}`);
let upgradable = 0;
for (let offset = 0; ; offset += 1000) {
  const page = await get(`/collectors/upgrades/collectors?offset=${offset}&limit=1000`);
  upgradable += page.collectors.length;
  if (page.collectors.length < 1000) break;
}
console.log(`  ${upgradable} of ${sim.model.size} Collectors can be upgraded to the latest build`);
const stats = await (await fetch(`${sim.url}/_sim/stats`)).json();
console.log(
  `  requests served: ${stats.requests.total} (${stats.injectedErrors} answered 5xx, ${stats.dropped} dropped, by design)`,
);
console.log('Run it yourself: npx fleet-upgrade simulate --fleet config/fleets/demo.yaml --time-scale 60');
await sim.close();

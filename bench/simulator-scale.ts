/**
 * Benchmark: how fast a large simulated fleet of several organizations starts and serves pages
 * of 1,000 records. The vendor caps an organization at 10,000 Collectors, so 100,000 Collectors
 * are 10 organizations of 10,000 in one process, each with its own user.
 * Run: npm run bench -- simulator-scale [--orgs 10] [--per-org 10000]
 * Prints JSON with start time, heap, and page latencies (p50/p95/max) over a full scan of every
 * organization: of the upgradable listing and of the inventory (GET collectors).
 */
import { request } from 'undici';
import { startSimulator } from '../src/simulator/start-simulator.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const orgCount = arg('orgs', 10);
const perOrg = arg('per-org', 10_000);
const builds = ['19.400-5', '19.418-9', '19.432-7', '19.450-12', '19.470-4'];
const orgs = Array.from({ length: orgCount }, (_, i) => ({
  name: `org-${i + 1}`,
  builds,
  users: [{ accessId: `bench-${i + 1}`, accessKey: `bench-${i + 1}-secret` }],
  generate: { count: perOrg, seed: 7 + i },
  faults: { rateLimit: { perSecond: 0, concurrent: 0 } },
  seed: 7 + i,
}));

global.gc?.();
const heapBefore = process.memoryUsage().heapUsed;
const t0 = performance.now();
const sim = await startSimulator({ fleet: { orgs } });
const startMs = performance.now() - t0;
global.gc?.();
const heapMb = (process.memoryUsage().heapUsed - heapBefore) / 1024 / 1024;

/** Every page of `path` for each organization, 1,000 records at a time: latencies and records seen. */
async function scan(path: string) {
  const latencies: number[] = [];
  let seen = 0;
  for (let i = 1; i <= orgCount; i++) {
    const headers = {
      authorization: `Basic ${Buffer.from(`bench-${i}:bench-${i}-secret`).toString('base64')}`,
      'content-type': 'application/json',
      accept: 'application/json',
    };
    for (let offset = 0; offset < perOrg * 2; offset += 1000) {
      const t = performance.now();
      const res = await request(`${sim.baseUrl}/${path}?offset=${offset}&limit=1000`, { headers });
      const body = (await res.body.json()) as { collectors: unknown[] };
      latencies.push(performance.now() - t);
      seen += body.collectors.length;
      if (body.collectors.length < 1000) break;
    }
  }
  latencies.sort((a, b) => a - b);
  const pct = (p: number) =>
    Number((latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0).toFixed(1));
  return { pages: latencies.length, seen, pageMs: { p50: pct(0.5), p95: pct(0.95), max: pct(1) } };
}

const upgradable = await scan('collectors/upgrades/collectors');
const inventory = await scan('collectors');
await sim.close();
console.log(
  JSON.stringify({
    orgs: orgCount,
    collectorsPerOrg: perOrg,
    collectors: orgCount * perOrg,
    startMs: Math.round(startMs),
    heapMb: Math.round(heapMb),
    upgradable,
    inventory,
  }),
);

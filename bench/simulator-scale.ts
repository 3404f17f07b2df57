/**
 * Benchmark: how fast a large simulated fleet starts and serves pages of 1,000 records.
 * Run: npm run bench -- simulator-scale [--collectors 100000]
 * Prints JSON with start time, memory, and page latencies (p50/p95/max) over a full scan.
 */
import { request } from 'undici';
import { startSimulator } from '../src/simulator/start-simulator.js';

const arg = process.argv.indexOf('--collectors');
const count = arg > 0 ? Number(process.argv[arg + 1]) : 100_000;
const heapBefore = process.memoryUsage().heapUsed;
const t0 = performance.now();
const sim = await startSimulator({
  fleet: {
    builds: ['19.400-5', '19.418-9', '19.432-7', '19.450-12', '19.470-4'],
    users: [{ accessId: 'bench', accessKey: 'bench-secret' }],
    generate: { count, seed: 7 },
    faults: { rateLimit: { perSecond: 0, concurrent: 0 } },
  },
});
const startMs = performance.now() - t0;
const heapMb = (process.memoryUsage().heapUsed - heapBefore) / 1024 / 1024;
const headers = {
  authorization: `Basic ${Buffer.from('bench:bench-secret').toString('base64')}`,
  'content-type': 'application/json',
  accept: 'application/json',
};
const latencies: number[] = [];
let seen = 0;
for (let offset = 0; offset < count * 2; offset += 1000) {
  const t = performance.now();
  const res = await request(`${sim.baseUrl}/collectors/upgrades/collectors?offset=${offset}&limit=1000`, {
    headers,
  });
  const body = (await res.body.json()) as { collectors: unknown[] };
  latencies.push(performance.now() - t);
  seen += body.collectors.length;
  if (body.collectors.length < 1000) break;
}
await sim.close();
latencies.sort((a, b) => a - b);
const pct = (p: number) =>
  (latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0).toFixed(1);
console.log(
  JSON.stringify({
    collectors: count,
    startMs: Math.round(startMs),
    heapMb: Math.round(heapMb),
    pages: latencies.length,
    upgradableSeen: seen,
    pageMs: { p50: pct(0.5), p95: pct(0.95), max: pct(1) },
  }),
);

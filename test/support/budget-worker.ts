/**
 * One client process for the shared-budget test (run as `node --import tsx budget-worker.ts`):
 * connects to Redis and the simulator as told by its environment, sends one request to warm up
 * (a daemon's connections are warm), prints `ready`, waits for `go <startEpochMs> <durationMs>`
 * on stdin, then keeps LOOPS requests going through the shared Redis budget until the end, and
 * prints one JSON line with what it saw. A request counts as sent in the window when it was
 * written out (the budget's `sent()`) before the end, even if it was still under way then.
 */
import { createInterface } from 'node:readline';
import { createCollectorUpgradeClient } from '../../src/api/collector-upgrade-client.js';
import { createRedisRequestBudget } from '../../src/api/redis-request-budget.js';
import type { RequestBudget } from '../../src/api/request-budget.js';
import { createScaledClock } from '../../src/lib/clock.js';
import { closeRedis, createRedis } from '../../src/lib/redis/create-redis.js';

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`budget-worker: ${name} is not set`);
  return v;
};

const timeScale = Number(env('TIME_SCALE'));
const loops = Number(env('LOOPS'));
const redis = createRedis(env('REDIS_URL'), { name: 'budget-worker' });
const shared = createRedisRequestBudget({
  redis,
  accessId: env('ACCESS_ID'),
  keyPrefix: env('KEY_PREFIX'),
  perSecond: Number(env('PER_SECOND')),
  concurrent: Number(env('CONCURRENT')),
  timeScale,
  ...(process.env.MARGIN_RATIO ? { marginRatio: Number(process.env.MARGIN_RATIO) } : {}),
});

let start = 0;
let end = 0;
let sentInWindow = 0;
/** The shared budget, counting the requests written out inside the window. */
const budget: RequestBudget = {
  ...shared,
  acquire: async (signal, priority) => {
    const lease = await shared.acquire(signal, priority);
    return {
      ...lease,
      sent: () => {
        const now = Date.now();
        if (start > 0 && now >= start && now < end) sentInWindow++;
        lease.sent();
      },
    };
  },
};
let attempts = 0;
let budgetWaitMs = 0;
const rateLimitedAtMs: number[] = [];
const client = createCollectorUpgradeClient({
  config: { baseUrl: env('BASE_URL'), accessId: env('ACCESS_ID'), accessKey: env('ACCESS_KEY') },
  budget,
  clock: createScaledClock(timeScale),
  hooks: {
    onAttempt(e) {
      attempts++;
      budgetWaitMs += e.budgetWaitMs;
      if (e.statusCode === 429) rateLimitedAtMs.push(Date.now() - e.durationMs - start);
    },
  },
});

async function loop(n: number): Promise<number> {
  let errors = 0;
  for (let i = 0; Date.now() < end && i < 100_000; i++) {
    try {
      const which = (n + i) % 3;
      if (which === 0) await client.listTargets(AbortSignal.timeout(Math.max(1, end - Date.now())));
      else if (which === 1)
        await client.listCollectors({ limit: 5, signal: AbortSignal.timeout(Math.max(1, end - Date.now())) });
      else await client.getTask(String(1_000_000 + i), AbortSignal.timeout(Math.max(1, end - Date.now())));
    } catch (err) {
      if (Date.now() < end) {
        errors++;
        process.stderr.write(`budget-worker: ${(err as Error).message}\n`);
      }
    }
  }
  return errors;
}

await client.listTargets();
const lines = createInterface({ input: process.stdin });
process.stdout.write('ready\n');
for await (const line of lines) {
  const [word, startText, durationText] = line.trim().split(' ');
  if (word !== 'go') continue;
  start = Number(startText);
  end = start + Number(durationText);
  await new Promise((r) => setTimeout(r, Math.max(0, start - Date.now())));
  const errors = (await Promise.all(Array.from({ length: loops }, (_, n) => loop(n)))).reduce(
    (a, b) => a + b,
    0,
  );
  process.stdout.write(
    `${JSON.stringify({ sentInWindow, attempts, errors, rateLimitedAtMs, budgetWaitMsAvg: budgetWaitMs / Math.max(1, attempts) })}\n`,
  );
  break;
}
lines.close();
await client.close();
await closeRedis(redis);

/**
 * The baseline: the vendor's bulk script as api-facts.md describes it, re-implemented.
 *
 * 1. Read the builds once (the latest is the target) and list the upgradable Collectors once
 *    (pages of 1,000 until a short page).
 * 2. In list order, batches of `batch` Collectors: create a task for each (a pause of 0.2 s after
 *    every call); a refused create (400, e.g. collector.not.alive) is skipped, not retried.
 * 3. Read the status of every unfinished task of the batch, a pass every 10 s (start to start;
 *    a pass longer than 10 s is followed at once by the next), 0.2 s after every call.
 * 4. The next batch starts only when every task of this one has finished (status 2 or 3).
 *
 * Every wait is in the service's (simulated) time. What the script noticed is kept: the time at
 * which a status read first showed each task finished.
 */
import type { Clock } from '../../src/lib/clock.js';
import type { VendorClient } from './vendor-client.js';

export interface VendorScriptOptions {
  client: VendorClient;
  clock: Clock;
  /** Tasks per batch (the in-flight limit). */
  batch: number;
  /** Pause after each call, ms of the clock. Default 200. */
  pauseMs?: number;
  /** Period of the status passes, ms of the clock. Default 10 000. */
  pollMs?: number;
  /** Page size of the listing. Default 1000. */
  pageSize?: number;
}

export interface VendorScriptResult {
  listed: number;
  created: number;
  refused: Record<string, number>;
  /** Task id → clock time at which the script saw it finished. */
  noticed: Map<string, number>;
  startedAt: number;
  endedAt: number;
}

interface Listed {
  id: number;
}

export async function runVendorScript(o: VendorScriptOptions): Promise<VendorScriptResult> {
  const { client, clock } = o;
  const pause = () => clock.sleep(o.pauseMs ?? 200);
  const pollMs = o.pollMs ?? 10_000;
  const pageSize = o.pageSize ?? 1000;
  const startedAt = clock.now();

  const targets = await client.call('GET', '/collectors/upgrades/targets');
  await pause();
  const list = (targets.body as { targets?: { version: string; latest: boolean }[] }).targets ?? [];
  const latest = list.find((t) => t.latest)?.version;
  if (!latest) throw new Error(`no latest build in ${JSON.stringify(targets.body)}`);

  const collectors: Listed[] = [];
  for (let offset = 0; ; offset += pageSize) {
    const page = await client.call(
      'GET',
      `/collectors/upgrades/collectors?toVersion=${encodeURIComponent(latest)}&offset=${offset}&limit=${pageSize}`,
    );
    await pause();
    const got = (page.body as { collectors?: Listed[] }).collectors ?? [];
    collectors.push(...got);
    if (got.length < pageSize) break;
  }

  const refused: Record<string, number> = {};
  const noticed = new Map<string, number>();
  let created = 0;
  for (let i = 0; i < collectors.length; i += o.batch) {
    const running: string[] = [];
    for (const c of collectors.slice(i, i + o.batch)) {
      const answer = await client.call('POST', '/collectors/upgrades', {
        collectorId: c.id,
        toVersion: latest,
      });
      await pause();
      const id = (answer.body as { id?: string | number }).id;
      if (answer.status === 202 && id !== undefined) {
        running.push(String(id));
        created++;
      } else {
        const code = (answer.body as { code?: string }).code ?? String(answer.status);
        refused[code] = (refused[code] ?? 0) + 1;
      }
    }
    // The first pass 10 s after the batch's last create; then passes start every pollMs.
    let nextPass = clock.now() + pollMs;
    while (running.length > 0) {
      const wait = nextPass - clock.now();
      if (wait > 0) await clock.sleep(wait);
      nextPass = clock.now() + pollMs;
      for (const id of [...running]) {
        const answer = await client.call('GET', `/collectors/upgrades/${encodeURIComponent(id)}`);
        const at = clock.now();
        await pause();
        const status = (answer.body as { upgrade?: { status?: number } }).upgrade?.status;
        if (status === 2 || status === 3) {
          noticed.set(id, at);
          running.splice(running.indexOf(id), 1);
        }
      }
    }
  }
  return { listed: collectors.length, created, refused, noticed, startedAt, endedAt: clock.now() };
}

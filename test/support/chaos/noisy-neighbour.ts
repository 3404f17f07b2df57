/**
 * 429 bursts as they happen in real life: another client of the same API user (a script, a
 * Terraform run) fills the user's 4 requests/s for a while. Every `everyMs` (real), for
 * `burstMs`, it sends `parallel` streams of `GET collectors/upgrades/targets` as fast as the
 * service answers; the service then answers 429 to the deployment too. Its own answers are
 * counted, so that the 429s of the deployment are the simulator's total minus these.
 */
import { sleep } from './sleep.js';

export interface NeighbourOptions {
  baseUrl: string;
  accessId: string;
  accessKey: string;
  everyMs: number;
  burstMs: number;
  /** Streams of requests at once (default 3, below the 10 concurrent requests per key). */
  parallel?: number;
}

export interface NoisyNeighbour {
  bursts: number;
  requests: number;
  /** Answers 429 that the neighbour itself got. */
  rateLimited: number;
  stop(): Promise<void>;
}

export function startNoisyNeighbour(o: NeighbourOptions): NoisyNeighbour {
  const auth = `Basic ${Buffer.from(`${o.accessId}:${o.accessKey}`).toString('base64')}`;
  let stopped = false;
  const halt = new AbortController();
  const state = { bursts: 0, requests: 0, rateLimited: 0 };
  const one = async () => {
    try {
      const res = await fetch(`${o.baseUrl}/collectors/upgrades/targets`, {
        headers: { authorization: auth, 'content-type': 'application/json' },
        signal: AbortSignal.timeout(5000),
      });
      await res.arrayBuffer();
      state.requests++;
      if (res.status === 429) state.rateLimited++;
    } catch {
      state.requests++;
    }
  };
  const burst = async () => {
    state.bursts++;
    const end = Date.now() + o.burstMs;
    await Promise.all(
      Array.from({ length: o.parallel ?? 3 }, async () => {
        for (let i = 0; i < 100_000 && Date.now() < end && !stopped; i++) await one();
      }),
    );
  };
  const loop = (async () => {
    for (let round = 0; round < 100_000 && !stopped; round++) {
      await sleep(o.everyMs, halt.signal);
      if (!stopped) await burst();
    }
  })();
  return {
    get bursts() {
      return state.bursts;
    },
    get requests() {
      return state.requests;
    },
    get rateLimited() {
      return state.rateLimited;
    },
    async stop() {
      stopped = true;
      halt.abort();
      await loop;
    },
  };
}

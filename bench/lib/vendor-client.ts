/**
 * A small, honest client of the Collector Upgrade Service for the baseline (the vendor's bulk
 * script): basic auth, JSON headers, one request at a time, and the service's limit of 4
 * requests per second kept on the client's side in the service's (simulated) time. A 429 is
 * waited out (1 s, or Retry-After) and sent again; the retry is counted. Nothing of the product's
 * own client (src/api) is used.
 */
import { request } from 'undici';
import type { Clock } from '../../src/lib/clock.js';

export interface VendorClientOptions {
  baseUrl: string;
  accessId: string;
  accessKey: string;
  /** The clock the rate limit is counted in (the simulator's). */
  clock: Clock;
  /** Requests per second of that clock. Default 4. */
  perSecond?: number;
  /** Clock ms each call takes (on a jump clock calls take none unless told). Default 0. */
  latencyMs?: number;
}

export interface VendorAnswer {
  status: number;
  body: unknown;
}

export class VendorClient {
  readonly counts = { requests: 0, rateLimited: 0 };
  private readonly sent: number[] = [];
  private readonly headers: Record<string, string>;

  constructor(private readonly o: VendorClientOptions) {
    this.headers = {
      authorization: `Basic ${Buffer.from(`${o.accessId}:${o.accessKey}`).toString('base64')}`,
      'content-type': 'application/json',
      accept: 'application/json',
    };
  }

  /** Waits until one more request keeps within perSecond in any window of one second (+5% margin). */
  private async pace(): Promise<void> {
    const limit = this.o.perSecond ?? 4;
    const window = 1050;
    for (;;) {
      const now = this.o.clock.now();
      while (this.sent.length > 0 && (this.sent[0] as number) <= now - window) this.sent.shift();
      if (this.sent.length < limit) {
        this.sent.push(now);
        return;
      }
      await this.o.clock.sleep((this.sent[0] as number) + window - now + 1);
    }
  }

  async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<VendorAnswer> {
    for (;;) {
      await this.pace();
      this.counts.requests++;
      const res = await request(`${this.o.baseUrl}${path}`, {
        method,
        headers: this.headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.body.text();
      if (this.o.latencyMs) await this.o.clock.sleep(this.o.latencyMs);
      if (res.statusCode === 429) {
        this.counts.rateLimited++;
        const after = Number(res.headers['retry-after']);
        await this.o.clock.sleep(Number.isFinite(after) && after > 0 ? after * 1000 : 1000);
        continue;
      }
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON (an HTML 401): kept as text
      }
      return { status: res.statusCode, body: parsed };
    }
  }
}

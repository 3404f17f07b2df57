/**
 * Fuzzing the simulator's HTTP server with raw requests over TCP (raw-http-fuzz.ts), half of
 * them with valid credentials so that they reach the routes: with no fault injected, every
 * request gets an HTTP answer (never a 5xx: that is a bug) or its connection closed; a request
 * whose headers or body never end is answered or closed once the server's time is up; the
 * process saw no uncaught exception or unhandled rejection, and the simulator still serves.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { fuzzServer, rawRequest, sendRaw, watchProcess } from '../../support/raw-http-fuzz.js';
import { OPS, startTestSimulator, stopTestSimulators } from '../../support/simulator.js';

afterEach(stopTestSimulators);

const BASIC = `Basic ${Buffer.from(`${OPS.accessId}:${OPS.accessKey}`).toString('base64')}`;

/** A raw request, half of the time with the operator's credentials and a JSON content type. */
const authorised = fc.tuple(rawRequest, fc.boolean()).map(([r, auth]) =>
  auth
    ? {
        ...r,
        headers: [['Authorization', BASIC], ['Content-Type', 'application/json'], ...r.headers] as [
          string,
          string,
        ][],
      }
    : r,
);

async function stillServes(t: Awaited<ReturnType<typeof startTestSimulator>>): Promise<void> {
  const res = await t.api('GET', 'collectors/upgrades/targets');
  expect(res.status, res.text).toBe(200);
}

describe("the simulator's HTTP server under random and malformed requests", () => {
  it('answers or closes every request, never with a 5xx, and lives on', async () => {
    const t = await startTestSimulator();
    const outcomes = await fuzzServer(t.sim.port, authorised);
    // Some requests got past authentication to a route (not only 400s and 401s).
    const statuses = new Set(outcomes.flatMap((o) => (o.kind === 'answered' ? [o.status] : [])));
    expect(
      [...statuses].some((s) => s !== 400 && s !== 401),
      [...statuses].join(','),
    ).toBe(true);
    await stillServes(t);
  });

  it('answers or closes a request whose body or headers never end, once its time is up', async () => {
    const watch = watchProcess();
    const t = await startTestSimulator(undefined, {
      limits: { headersTimeoutMs: 500, requestTimeoutMs: 1000 },
    });
    const endless = [
      `POST /api/v1/collectors/upgrades HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${BASIC}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"colle`,
      `POST /api/v1/collectors/upgrades HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${BASIC}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n`,
      'GET /api/v1/collectors/upgrades/targets HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ',
    ];
    try {
      const ends = await Promise.all(
        endless.map((text) => sendRaw(t.sim.port, Buffer.from(text), 8000, true)),
      );
      await stillServes(t);
      for (const end of ends) expect(end.kind, JSON.stringify(end)).toMatch(/^(answered|closed)$/);
    } finally {
      const seen = watch.stop();
      expect(seen, String(seen[0])).toEqual([]);
    }
  });
});

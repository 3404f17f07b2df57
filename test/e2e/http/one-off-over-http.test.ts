/**
 * A one-off upgrade asked over HTTP of a running daemon (`run` with its HTTP server, the real
 * simulator, the test Redis; issue #20): `POST /upgrades` checks the named Collectors through the
 * daemon's own client, the daemon starts and finishes the one-off like one written by `fleet-upgrade
 * upgrade`, and `GET /rollouts/{id}/report` gives its rows as CSV, as `report --format csv` does.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { converged, type Harness, startHarness } from '../../support/rollout-harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('POST /upgrades on a running daemon', () => {
  it('starts a one-off the daemon runs to its end; its report over HTTP', async () => {
    harness = await startHarness({
      timeScale: 300,
      fleet: {
        builds: ['19.400-5', '19.450-12', '19.470-4'],
        users: [{ accessId: 'ops', accessKey: 'ops-secret' }],
        collectors: [
          { id: 1, version: '19.400-5', outcome: 'succeed', upgradeSeconds: 30 },
          { id: 2, version: '19.400-5', outcome: 'succeed', upgradeSeconds: 30 },
          { id: 3, version: '19.400-5', type: 'Hosted' },
        ],
        behaviour: { incrementalAbove: 0 },
      },
      // A policy that selects nothing: only the one-off moves Collectors.
      policy: { name: 'none', select: { ids: [999] }, poll: { initial: '20s', max: '1m' } },
    });
    const h = harness;
    const daemon = await h.startRun();
    const url = daemon.http?.url as string;
    const res = await fetch(`${url}/upgrades`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ collectors: [1, 2, 3], to: '19.450-12' }),
    });
    const body = (await res.json()) as {
      oneOff: string;
      collectors: number[];
      named: { id: number; finding: string }[];
    };
    expect(res.status, JSON.stringify(body)).toBe(201);
    expect(body.collectors).toEqual([1, 2]);
    expect(body.named).toEqual([expect.objectContaining({ id: 3, finding: 'hosted' })]);

    const id = `${body.oneOff}@19.450-12`;
    await h.waitFor((s) => {
      const r = s.rollouts.find((x) => x.id === id);
      return r !== undefined && converged({ ...s, rollouts: [r] });
    }, 60_000);
    const csv = await fetch(`${url}/rollouts/${encodeURIComponent(id)}/report`, {
      headers: { accept: 'text/csv' },
    });
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const rows = (await csv.text()).trim().split('\n').slice(1);
    expect(rows).toHaveLength(2);
    expect(rows.map((l) => [l.split(',')[0], l.split(',')[4], l.split(',')[5]])).toEqual([
      ['1', '19.450-12', 'succeeded'],
      ['2', '19.450-12', 'succeeded'],
    ]);
    const sim = await h.simCollectors();
    expect(sim.filter((c) => c.version === '19.450-12').map((c) => c.id)).toEqual([1, 2]);
  }, 90_000);
});

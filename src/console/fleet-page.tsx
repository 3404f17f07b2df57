/**
 * The fleet (`GET /fleet`, as `fleet-upgrade fleet`): installed Collectors by build and
 * organization, each policy's share on its target per organization, the oldest builds, and
 * that share over time (`GET /fleet/history`, compliance-chart.tsx).
 */
import { useEffect, useState } from 'preact/hooks';
import { call } from './api.js';
import { ComplianceChart, type History } from './compliance-chart.js';

interface BuildCount {
  build: string;
  collectors: number;
  offline: number;
}
interface OrgView {
  org: string;
  inventoriedAt?: number;
  collectors: number;
  builds: BuildCount[];
}
interface PolicyRow {
  policy: string;
  org: string;
  target: string | null;
  targetText: string;
  counts: { selected: number; compliant: number; behind: number; unknown: number };
}
interface Fleet {
  orgs: OrgView[];
  builds: string[];
  policies: PolicyRow[];
  oldest: { build: string; collectors: number }[];
}

const time = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 16);
const pct = (n: number, of: number) => (of ? `${((100 * n) / of).toFixed(1)} %` : '—');

export function FleetPage({ tick }: { tick: number }) {
  const [fleet, setFleet] = useState<Fleet | undefined>();
  const [history, setHistory] = useState<History | undefined>();
  const [error, setError] = useState<string | undefined>();
  // The inventory changes once a pass: every tenth tick is plenty.
  const slow = Math.floor(tick / 10);
  useEffect(() => {
    call<Fleet>('GET', '/fleet').then(
      (a) => (a.ok && a.json ? setFleet(a.json) : setError(`${a.status}: ${a.text}`)),
      (e: Error) => setError(e.message),
    );
    call<History>('GET', '/fleet/history').then(
      (a) => (a.ok && a.json ? setHistory(a.json) : setError(`${a.status}: ${a.text}`)),
      (e: Error) => setError(e.message),
    );
  }, [slow]);
  if (error) return <p class="answer bad">{error}</p>;
  if (!fleet) return <p>Loading the fleet…</p>;
  const count = (o: OrgView, build: string) => o.builds.find((b) => b.build === build);
  return (
    <>
      <h1>Fleet</h1>
      {fleet.orgs.every((o) => o.inventoriedAt === undefined) ? (
        <p>
          No inventory of the fleet yet: the daemon takes one when it starts, then every inventory.interval.
        </p>
      ) : (
        <p>
          As the last inventory saw it:{' '}
          {fleet.orgs
            .map((o) => `${o.org} at ${o.inventoriedAt ? time(o.inventoriedAt) : 'never'}`)
            .join(', ')}{' '}
          (UTC).
        </p>
      )}
      <section aria-labelledby="builds">
        <h2 id="builds">Collectors by build</h2>
        <table data-table="builds">
          <thead>
            <tr>
              <th scope="col">Build</th>
              {fleet.orgs.map((o) => (
                <th scope="col" key={o.org}>
                  {o.org}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {fleet.builds.map((build) => (
              <tr key={build} data-build={build}>
                <th scope="row">{build}</th>
                {fleet.orgs.map((o) => {
                  const c = count(o, build);
                  return (
                    <td key={o.org} data-org={o.org}>
                      {c ? `${c.collectors}${c.offline ? ` (${c.offline} offline)` : ''}` : ''}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section aria-labelledby="policies">
        <h2 id="policies">Each policy's share on its target</h2>
        <table>
          <thead>
            <tr>
              <th scope="col">Policy</th>
              <th scope="col">Organization</th>
              <th scope="col">Target</th>
              <th scope="col">On target</th>
              <th scope="col">Behind</th>
              <th scope="col">Unknown</th>
            </tr>
          </thead>
          <tbody>
            {fleet.policies.map((p) => (
              <tr key={`${p.policy}/${p.org}`} data-policy={p.policy} data-org={p.org}>
                <th scope="row">{p.policy}</th>
                <td>{p.org}</td>
                <td>{p.target ?? `${p.targetText} (not resolved)`}</td>
                <td data-field="share">
                  {p.counts.compliant} of {p.counts.selected} ({pct(p.counts.compliant, p.counts.selected)})
                </td>
                <td>{p.counts.behind}</td>
                <td>{p.counts.unknown}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section aria-labelledby="over-time">
        <h2 id="over-time">Compliance over time</h2>
        {history ? <ComplianceChart history={history} /> : <p>Loading the history…</p>}
      </section>
      {fleet.oldest.length > 0 && (
        <section aria-labelledby="oldest">
          <h2 id="oldest">Oldest builds still running</h2>
          <ul>
            {fleet.oldest.map((b) => (
              <li key={b.build}>
                {b.build}: {b.collectors} Collectors
              </li>
            ))}
          </ul>
        </section>
      )}
    </>
  );
}

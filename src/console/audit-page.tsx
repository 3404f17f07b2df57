/**
 * The audit trail (`GET /audit`, docs/access.md): who did what, on which rollout, allowed or
 * refused, filtered by person, rollout and time as `fleet-upgrade audit` is.
 */
import { useEffect, useState } from 'preact/hooks';
import { call } from './api.js';

interface AuditRecord {
  at: number;
  who: string;
  via?: string;
  from?: string;
  what: string;
  rollout?: string;
  orgs?: string[];
  answer: string;
  status?: number;
  reason?: string;
}

const time = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19);

export function AuditPage({ tick }: { tick: number }) {
  const [user, setUser] = useState('');
  const [rollout, setRollout] = useState('');
  const [since, setSince] = useState('24h');
  const [records, setRecords] = useState<AuditRecord[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    const q = new URLSearchParams({ format: 'json' });
    if (user.trim()) q.set('user', user.trim());
    if (rollout.trim()) q.set('rollout', rollout.trim());
    if (since.trim()) q.set('since', since.trim());
    call('GET', `/audit?${q}`).then(
      (a) => {
        if (!a.ok)
          return setError(
            `${a.status}: ${(a.json as { error?: { message?: string } })?.error?.message ?? a.text}`,
          );
        setError(undefined);
        setRecords(
          a.text
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as AuditRecord)
            .reverse(),
        );
      },
      (e: Error) => setError(e.message),
    );
  }, [user, rollout, since, tick]);
  const field = (label: string, value: string, set: (v: string) => void) => (
    <label>
      {label} <input value={value} onChange={(e) => set((e.target as HTMLInputElement).value)} />
    </label>
  );
  return (
    <>
      <h1>Audit trail</h1>
      <form class="tools" onSubmit={(e) => e.preventDefault()}>
        {field('Who', user, setUser)} {field('Rollout', rollout, setRollout)}{' '}
        {field('Since (24h, or a time)', since, setSince)}
      </form>
      {error && <p class="answer bad">{error}</p>}
      {records && (
        <table>
          <thead>
            <tr>
              <th scope="col">Time (UTC)</th>
              <th scope="col">Who</th>
              <th scope="col">What</th>
              <th scope="col">Rollout</th>
              <th scope="col">Answer</th>
              <th scope="col">Detail</th>
            </tr>
          </thead>
          <tbody>
            {records.slice(0, 500).map((r, i) => (
              <tr key={i}>
                <td>{time(r.at)}</td>
                <td>{r.who}</td>
                <td>{r.what}</td>
                <td>{r.rollout ?? ''}</td>
                <td>
                  {r.answer}
                  {r.answer === 'refused' && r.status ? ` ${r.status}` : ''}
                </td>
                <td>
                  {r.reason ? `${r.reason} — ` : ''}
                  {r.orgs?.length ? `orgs ${r.orgs.join(' ')}, ` : ''}from {r.from ?? ''}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

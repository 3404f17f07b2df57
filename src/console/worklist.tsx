/**
 * A rollout's worklist (`report --worklist`): the Collectors that need a person, filtered by
 * text, 100 rows a page (5,000 rows stay one quick render), its CSV as the API sends it, and a
 * retry of its Collectors when the person may.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { call, download, rolloutPath } from './api.js';
import type { WorklistRow } from './types.js';

export const PAGE_ROWS = 100;

export function Worklist({ id, version }: { id: string; version: number }) {
  const [rows, setRows] = useState<WorklistRow[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [filter, setFilter] = useState('');
  const [page, setPage] = useState(0);
  const [saved, setSaved] = useState<string | undefined>();
  useEffect(() => {
    call<{ worklist: WorklistRow[] }>('GET', rolloutPath(id, 'report?worklist=true&format=json')).then(
      (a) => (a.ok ? setRows(a.json?.worklist ?? []) : setError(a.text)),
      (e: Error) => setError(e.message),
    );
  }, [id, version]);
  const shown = useMemo(() => {
    const f = filter.trim().toLowerCase();
    return f
      ? (rows ?? []).filter((r) =>
          Object.values(r).some((v) =>
            String(v ?? '')
              .toLowerCase()
              .includes(f),
          ),
        )
      : (rows ?? []);
  }, [rows, filter]);
  const pages = Math.max(1, Math.ceil(shown.length / PAGE_ROWS));
  const at = Math.min(page, pages - 1);
  const csv = async () => {
    const a = await download(rolloutPath(id, 'report?worklist=true&format=csv'), `${id}-worklist.csv`);
    setSaved(a.ok ? 'CSV saved' : `${a.status}: ${a.text}`);
  };
  if (error) return <p class="answer bad">{error}</p>;
  if (!rows) return <p>Loading the worklist…</p>;
  return (
    <div class="worklist">
      <div class="tools">
        <label>
          Filter{' '}
          <input
            type="search"
            value={filter}
            onInput={(e) => {
              setFilter((e.target as HTMLInputElement).value);
              setPage(0);
            }}
          />
        </label>{' '}
        <button type="button" onClick={csv}>
          Download CSV
        </button>{' '}
        <span role="status">{saved}</span>
      </div>
      <p data-field="worklist-count">
        {shown.length} of {rows.length} Collectors
      </p>
      {shown.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Collector</th>
              <th scope="col">Organization</th>
              <th scope="col">State</th>
              <th scope="col">From → to</th>
              <th scope="col">Why</th>
              <th scope="col">Resolve</th>
            </tr>
          </thead>
          <tbody>
            {shown.slice(at * PAGE_ROWS, (at + 1) * PAGE_ROWS).map((r) => (
              <tr key={`${r.org}/${r.id}`}>
                <td>{r.name ?? r.id}</td>
                <td>{r.org}</td>
                <td>{r.state}</td>
                <td>
                  {r.from} → {r.to}
                </td>
                <td>{r.message ?? r.failureClass ?? ''}</td>
                <td>
                  <code>{r.resolve}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {pages > 1 && (
        <nav aria-label="Worklist pages" class="pager">
          <button type="button" onClick={() => setPage(at - 1)} disabled={at === 0}>
            Previous
          </button>{' '}
          page {at + 1} of {pages}{' '}
          <button type="button" onClick={() => setPage(at + 1)} disabled={at >= pages - 1}>
            Next
          </button>
        </nav>
      )}
    </div>
  );
}

/**
 * Compliance over time (`GET /fleet/history`): each organization × policy's share on its target,
 * one line each, drawn as SVG by hand (a few polylines need no chart library: nothing to add to
 * the bundle). A point is a sample of the inventory's leader (one per bucket, 5 min by default);
 * a sample whose target had not resolved or that selected nobody has no share and is left out.
 * The legend under the chart says each line's share now, in words, for whoever does not see it.
 */

import type { CompliancePoint, FleetHistoryAnswer } from '../inventory/compliance-series.js';

/** The body of `GET /fleet/history`, as the server writes it. */
export type History = FleetHistoryAnswer;

const W = 640;
const H = 200;
const PAD = { left: 44, right: 12, top: 10, bottom: 24 };
/** Distinct colours, each at least 4.5:1 on white (legend text is drawn in them). */
const COLOURS = ['#0b57d0', '#1a7f37', '#b3261e', '#8a5a00', '#6f42c1', '#0a6c74'];

const time = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 16);
const shareOf = (p: CompliancePoint) =>
  p.target !== null && p.selected > 0 ? p.compliant / p.selected : undefined;

export function ComplianceChart({ history }: { history: History }) {
  const series = history.series.filter((s) => s.points.some((p) => shareOf(p) !== undefined));
  if (series.length === 0)
    return (
      <p data-field="history-empty">
        No samples yet: the daemon records each policy's share once every{' '}
        {Math.round(history.bucketMs / 60_000)} minutes after its first inventory.
      </p>
    );
  const ats = series.flatMap((s) => s.points.map((p) => p.at));
  const from = Math.min(...ats);
  const to = Math.max(history.now, from + history.bucketMs);
  const x = (at: number) => PAD.left + ((at - from) / (to - from)) * (W - PAD.left - PAD.right);
  const y = (share: number) => PAD.top + (1 - share) * (H - PAD.top - PAD.bottom);
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby="chart-title">
        <title id="chart-title">
          Each policy's share on its target per organization, from {time(from)} to {time(to)} (UTC)
        </title>
        {[0, 0.5, 1].map((g) => (
          <g key={g}>
            <line x1={PAD.left} x2={W - PAD.right} y1={y(g)} y2={y(g)} class="grid" />
            <text x={PAD.left - 6} y={y(g) + 4} text-anchor="end">
              {g * 100} %
            </text>
          </g>
        ))}
        <text x={PAD.left} y={H - 6}>
          {time(from)}
        </text>
        <text x={W - PAD.right} y={H - 6} text-anchor="end">
          {time(to)}
        </text>
        {series.map((s, i) => {
          const points = s.points.flatMap((p) => {
            const share = shareOf(p);
            return share === undefined ? [] : [`${x(p.at).toFixed(1)},${y(share).toFixed(1)}`];
          });
          // One point alone is a dot (a polyline of one point draws nothing).
          const only = points.length === 1 ? points[0]?.split(',').map(Number) : undefined;
          return only ? (
            <circle
              key={`${s.org}/${s.policy}`}
              data-series={`${s.org}/${s.policy}`}
              cx={only[0]}
              cy={only[1]}
              r={3}
              fill={COLOURS[i % COLOURS.length]}
            />
          ) : (
            <polyline
              key={`${s.org}/${s.policy}`}
              data-series={`${s.org}/${s.policy}`}
              points={points.join(' ')}
              fill="none"
              stroke={COLOURS[i % COLOURS.length]}
              stroke-width={2}
            />
          );
        })}
      </svg>
      <figcaption>
        <ul class="legend">
          {series.map((s, i) => {
            const known = s.points.filter((p) => shareOf(p) !== undefined);
            const last = known[known.length - 1] as CompliancePoint;
            const lowest = Math.min(...known.map((p) => shareOf(p) ?? 1));
            return (
              <li
                key={`${s.org}/${s.policy}`}
                data-series={`${s.org}/${s.policy}`}
                data-compliant={last.compliant}
                data-selected={last.selected}
                data-points={known.length}
                style={{ color: COLOURS[i % COLOURS.length] }}
              >
                {s.policy} in {s.org}: {last.compliant} of {last.selected} on {last.target} now (
                {((100 * last.compliant) / last.selected).toFixed(1)} %), lowest {(100 * lowest).toFixed(1)} %
                over {known.length} samples
              </li>
            );
          })}
        </ul>
      </figcaption>
    </figure>
  );
}

/**
 * The overview: first the problems and alerts the daemon can tell (its own problems and every
 * organization's, halted rollouts, quarantined cohorts: each the condition of one of the
 * Prometheus rules in deploy/prometheus/rules, named with it; whether Prometheus fires it the
 * daemon cannot know), then what waits for a person (approvals, paused parts, quarantines, the
 * worklist), then every rollout × organization with its phase, progress bar, in-flight count and
 * limit, the time its upgrades still need (`GET /eta`), waves and holds. Numbers are those of
 * `GET /status` (`fleet-upgrade status --json`), unchanged.
 */
import type { EtaAnswer } from '../http/rollout-eta.js';
import { ProgressBar, segments } from './progress-bar.js';
import type { FleetStatus, Problem, Rollout } from './types.js';

/** The body of `GET /eta`, as the server writes it (src/http/get-eta.ts). */
export type Eta = EtaAnswer;

/** A duration as a person reads it: `under a minute`, `12 min`, `3 h 5 min`, `2 d 4 h`. */
export function durationText(ms: number): string {
  const min = Math.round(ms / 60_000);
  if (min < 1) return 'under a minute';
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return `${h} h${min % 60 ? ` ${min % 60} min` : ''}`;
  return `${Math.floor(h / 24)} d${h % 24 ? ` ${h % 24} h` : ''}`;
}

function EtaCell({ etaMs, waitingFor }: { etaMs: number | undefined; waitingFor?: string | undefined }) {
  if (etaMs === undefined) return <td data-field="eta" />;
  return (
    <td data-field="eta" data-eta-ms={etaMs}>
      {durationText(etaMs)} of upgrades{waitingFor ? ` (then ${waitingFor})` : ''}
    </td>
  );
}

/** The problems and the conditions of alert rules the daemon knows, each named with its rule. */
function alertsOf(status: FleetStatus): { text: string; alert: string; fix?: string | undefined }[] {
  const told = (p: Problem, alert: string) => ({ text: p.text ?? p.reason ?? '', alert, fix: p.fix });
  return [
    ...status.rollouts
      .filter((r) => r.phase === 'halted')
      .map((r) => ({
        text: `${r.id} is halted${r.haltReason ? `: ${r.haltReason}` : ''}`,
        alert: 'FleetUpgradeRolloutHalted (after 1 min)',
        fix: `fleet-upgrade resume ${r.id}`,
      })),
    ...status.rollouts.flatMap((r) =>
      (r.quarantined ?? []).map((q) => ({
        text: `${r.id}: cohort ${q.cohort} quarantined (${q.held} held): ${q.reason}`,
        alert: 'FleetUpgradeCohortQuarantined (after 1 min)',
        fix: `fleet-upgrade retry ${r.id} --only quarantined`,
      })),
    ),
    ...status.daemonProblems.map((p) => told(p, 'FleetUpgradeDaemonProblem (after 5 min)')),
    ...status.orgProblems.map((p) => told(p, 'FleetUpgradeOrganizationWaiting (after 10 min)')),
  ];
}

const link = (id: string) => `#/rollout/${encodeURIComponent(id)}`;

function waitsFor(r: Rollout): string[] {
  const out: string[] = [];
  const a = r.wave?.approval;
  if (r.wave?.waitingFor === 'approval')
    out.push(
      a
        ? `${a.approvers - a.by.length} more approval${a.approvers - a.by.length === 1 ? '' : 's'} for wave ${r.wave.index + 2}${a.by.length ? ` (approved by ${a.by.map((b) => b.name).join(', ')})` : ''}`
        : `a promote for wave ${r.wave.index + 2}`,
    );
  for (const p of r.pausedOrgs ?? []) out.push(`${p.org} paused by ${p.by}`);
  for (const q of r.quarantined ?? [])
    out.push(`cohort ${q.cohort} quarantined (${q.held} held): ${q.reason}`);
  const work = segments(r.counts, r.total).worklist;
  if (work) out.push(`${work} on the worklist`);
  return out;
}

function waveText(r: Rollout): string {
  const w = r.wave;
  if (!w) return '';
  const of = w.of ? ` of ${w.of}` : '';
  const waiting = w.waitingFor ? `, ${w.waitingFor === 'bake' ? 'baking' : `awaiting ${w.waitingFor}`}` : '';
  return `wave ${w.index + 1}${of}${waiting}`;
}

export function Overview({ status, eta }: { status: FleetStatus; eta?: Eta | undefined }) {
  const alerts = alertsOf(status);
  const waiting = status.rollouts.flatMap((r) => waitsFor(r).map((text) => ({ r, text })));
  return (
    <>
      <h1>Rollouts</h1>
      {alerts.length > 0 && (
        <section aria-labelledby="problems" class="problems">
          <h2 id="problems">Problems and alerts</h2>
          <ul>
            {alerts.map((p, i) => (
              <li key={i} data-alert={p.alert.split(' ')[0]}>
                {p.text}
                {p.fix ? (
                  <>
                    {' '}
                    — <code>{p.fix}</code>
                  </>
                ) : null}{' '}
                <small>(alert rule {p.alert})</small>
              </li>
            ))}
          </ul>
        </section>
      )}
      {waiting.length > 0 && (
        <section aria-labelledby="waits">
          <h2 id="waits">Waiting for a person</h2>
          <ul>
            {waiting.map(({ r, text }, i) => (
              <li key={i}>
                <a href={link(r.id)}>{r.id}</a>: {text}
              </li>
            ))}
          </ul>
        </section>
      )}
      <section aria-labelledby="all">
        <h2 id="all">Every rollout</h2>
        {status.rollouts.length === 0 ? (
          <p>
            No rollout yet: the daemon starts one when a policy's target is a build that some selected
            Collectors are not on.
          </p>
        ) : (
          <table class="rollouts">
            <thead>
              <tr>
                <th scope="col">Rollout</th>
                <th scope="col">Organization</th>
                <th scope="col">Phase</th>
                <th scope="col">Progress</th>
                <th scope="col">Done</th>
                <th scope="col">In flight</th>
                <th scope="col">Time left</th>
                <th scope="col">Waves, holds</th>
              </tr>
            </thead>
            <tbody>
              {status.rollouts.map((r) => (
                <RolloutRows key={r.id} r={r} eta={eta?.rollouts.find((e) => e.id === r.id)} />
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}

function RolloutRows({ r, eta }: { r: Rollout; eta: Eta['rollouts'][number] | undefined }) {
  const parts = r.byOrg.length > 1 ? r.byOrg : [];
  const holds = [r.holding, r.ringPausedFor && `after ${r.ringPausedFor}`, r.haltReason]
    .filter(Boolean)
    .join('; ');
  return (
    <>
      <tr data-rollout={r.id}>
        <th scope="row">
          <a href={link(r.id)}>{r.id}</a>
        </th>
        <td>{r.byOrg.length > 1 ? 'all' : (r.byOrg[0]?.org ?? '')}</td>
        <td data-field="phase">{r.phaseText}</td>
        <td>
          <ProgressBar counts={r.counts} total={r.total} />
        </td>
        <td>
          <span data-field="done">{r.done}</span> / <span data-field="total">{r.total}</span> (
          <span data-field="succeeded">{r.counts.succeeded ?? 0}</span> ok)
        </td>
        <td>
          <span data-field="inflight">{r.inflight}</span> / {r.maxInFlight}
        </td>
        <EtaCell etaMs={eta?.etaMs} waitingFor={eta?.waitingFor} />
        <td>
          {waveText(r)}
          {holds ? `; ${holds}` : ''}
        </td>
      </tr>
      {parts.map((p) => (
        <tr key={p.org} data-rollout={r.id} data-org={p.org} class="part">
          <td />
          <td>{p.org}</td>
          <td>{r.pausedOrgs?.some((x) => x.org === p.org) ? 'paused' : (p.waiting ?? '')}</td>
          <td>
            <ProgressBar counts={p.counts} total={p.total} />
          </td>
          <td>
            <span data-field="done">{p.done}</span> / <span data-field="total">{p.total}</span> (
            <span data-field="succeeded">{p.counts.succeeded ?? 0}</span> ok)
          </td>
          <td>
            <span data-field="inflight">{p.inflight}</span>
          </td>
          <EtaCell etaMs={eta?.parts.find((x) => x.org === p.org)?.etaMs} />
          <td>{p.build !== r.build ? `to ${p.build}` : ''}</td>
        </tr>
      ))}
    </>
  );
}

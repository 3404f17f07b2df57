/**
 * One rollout: its phase and waves (bake, analysis, approvals), each organization's part, the
 * failure gate's halt and the cohorts it quarantined, the worklist, and the history with who did
 * what. The actions the person may take (may-act.ts) are buttons with a confirmation; the ones
 * they may not take are not shown.
 */
import { useEffect, useState } from 'preact/hooks';
import { confirmationOf } from '../cli/render/action-sentences.js';
import { call, rolloutPath } from './api.js';
import { ActionButton, type ActionSpec } from './confirm-action.js';
import { type ActionName, mayAct } from './may-act.js';
import { ProgressBar, segments } from './progress-bar.js';
import type { HistoryEvent, Rollout, WhoAmI } from './types.js';
import { Worklist } from './worklist.js';

const time = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19);
const FINISHED = ['converged', 'aborted', 'superseded'];
/** `retry --only`: the worklist's outcomes and the failures (src/rollout/collector/transition.ts). */
const RETRY_ONLY = [
  'failed',
  'timed_out',
  'error',
  'unhealthy',
  'rejected',
  'manual',
  'unknown',
  'quarantined',
];

function actionsFor(r: Rollout, who: WhoAmI | undefined): ActionSpec[] {
  // Every organization the rollout covers: a person of some reads only their parts (byOrg), and
  // the whole rollout's actions need all of them (docs/access.md).
  const orgs = r.orgs?.length ? r.orgs : r.byOrg.map((p) => p.org);
  const whole = (action: ActionName, label: string, body?: Record<string, unknown>): ActionSpec[] =>
    mayAct(who, action, orgs)
      ? [
          {
            action,
            label,
            confirmation: confirmationOf(action, r.id, Array.isArray(body?.only) ? { only: body.only } : {}),
            ...(body ? { body } : {}),
          },
        ]
      : [];
  const out: ActionSpec[] = [];
  const finished = FINISHED.includes(r.phase);
  if (!finished) {
    if (r.phase === 'paused' || r.phase === 'halted') out.push(...whole('resume', 'Resume'));
    else out.push(...whole('pause', 'Pause'));
    // Each organization's part, when the person may act there (an operator of one of them).
    if (orgs.length > 1)
      for (const org of orgs) {
        const paused = r.pausedOrgs?.some((p) => p.org === org);
        const action: ActionName = paused ? 'resume' : 'pause';
        if (mayAct(who, action, [org]))
          out.push({
            action,
            label: `${paused ? 'Resume' : 'Pause'} ${org}`,
            confirmation: confirmationOf(action, r.id, { org }),
            body: { org },
          });
      }
    if (r.wave?.waitingFor === 'approval' && r.wave.approval) out.push(...whole('approve', 'Approve'));
    else if (r.wave?.waitingFor) out.push(...whole('promote', 'Promote'));
    out.push(...whole('abort', 'Abort'));
  }
  const failedOrWork = segments(r.counts, r.total);
  if (failedOrWork.failed + failedOrWork.worklist > 0)
    out.push(...whole('retry', 'Retry failed and worklist', { only: RETRY_ONLY }));
  if (failedOrWork.failed > 0) out.push(...whole('rollback', 'Roll back failed'));
  if (finished) out.push(...whole('forget', 'Forget', { force: false }));
  return out;
}

export function RolloutPage({ id, who, tick }: { id: string; who: WhoAmI | undefined; tick: number }) {
  const [r, setR] = useState<Rollout | undefined>();
  const [history, setHistory] = useState<HistoryEvent[]>([]);
  const [error, setError] = useState<string | undefined>();
  const [acted, setActed] = useState(0);
  useEffect(() => {
    let live = true;
    Promise.all([
      call<Rollout>('GET', rolloutPath(id)),
      call<{ events: HistoryEvent[] }>('GET', rolloutPath(id, 'history?limit=50')),
    ]).then(
      ([a, h]) => {
        if (!live) return;
        if (a.ok && a.json) {
          setR(a.json);
          setError(undefined);
        } else
          setError(`${a.status}: ${(a.json as { error?: { message?: string } })?.error?.message ?? a.text}`);
        if (h.ok) setHistory(h.json?.events ?? []);
      },
      (e: Error) => live && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [id, tick, acted]);
  if (error && !r) return <p class="answer bad">{error}</p>;
  if (!r) return <p>Loading {id}…</p>;
  const actions = actionsFor(r, who);
  const w = r.wave;
  return (
    <>
      <h1>{r.id}</h1>
      <p>
        <a href="#/">← every rollout</a>
      </p>
      <dl class="facts">
        <dt>Phase</dt>
        <dd data-field="phase">{r.phaseText}</dd>
        <dt>Progress</dt>
        <dd>
          <ProgressBar counts={r.counts} total={r.total} /> <span data-field="done">{r.done}</span> of{' '}
          <span data-field="total">{r.total}</span> done, <span data-field="inflight">{r.inflight}</span> in
          flight of {r.maxInFlight}
        </dd>
        <dt>Wave</dt>
        <dd>
          {w ? `${w.index + 1}${w.of ? ` of ${w.of}` : ''}` : ''}
          {w?.waitingFor === 'bake' && w.bakeUntil ? `, baking until ${time(w.bakeUntil)}` : ''}
          {w?.waitingFor === 'analysis' ? ', its analysis runs' : ''}
          {w?.waitingFor === 'approval'
            ? w.approval
              ? `, awaiting ${w.approval.approvers} approvals (${w.approval.by.length ? `approved by ${w.approval.by.map((b) => b.name).join(', ')}` : 'none yet'})`
              : ', awaiting a promote'
            : ''}
        </dd>
        {r.haltReason && (
          <>
            <dt>Failure gate</dt>
            <dd>{r.haltReason}</dd>
          </>
        )}
        {r.holding && (
          <>
            <dt>Holding</dt>
            <dd>{r.holding}</dd>
          </>
        )}
      </dl>
      {actions.length > 0 && (
        <section aria-labelledby="actions">
          <h2 id="actions">Actions</h2>
          <div class="actions">
            {actions.map((spec) => (
              <ActionButton
                key={`${spec.action}${spec.label}`}
                id={r.id}
                spec={spec}
                onDone={() => setActed((n) => n + 1)}
              />
            ))}
          </div>
        </section>
      )}
      <section aria-labelledby="orgs">
        <h2 id="orgs">Organizations</h2>
        <table>
          <thead>
            <tr>
              <th scope="col">Organization</th>
              <th scope="col">Build</th>
              <th scope="col">Progress</th>
              <th scope="col">Done</th>
              <th scope="col">In flight</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {r.byOrg.map((p) => {
              const pause = r.pausedOrgs?.find((x) => x.org === p.org);
              return (
                <tr key={p.org} data-org={p.org}>
                  <th scope="row">{p.org}</th>
                  <td>{p.build}</td>
                  <td>
                    <ProgressBar counts={p.counts} total={p.total} />
                  </td>
                  <td>
                    {p.done} / {p.total}
                  </td>
                  <td>{p.inflight}</td>
                  <td data-field="org-state">
                    {pause ? `paused by ${pause.by} at ${time(pause.at)}` : (p.waiting ?? 'going')}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </section>
      {(r.quarantined?.length ?? 0) > 0 && (
        <section aria-labelledby="quarantines">
          <h2 id="quarantines">Quarantined cohorts</h2>
          <ul>
            {r.quarantined?.map((q) => (
              <li key={q.cohort}>
                {q.cohort}: {q.held} held since {time(q.at)}: {q.reason}
              </li>
            ))}
          </ul>
        </section>
      )}
      <section aria-labelledby="worklist">
        <h2 id="worklist">Worklist</h2>
        <Worklist id={r.id} version={acted} />
      </section>
      <section aria-labelledby="history">
        <h2 id="history">History</h2>
        <ol class="history">
          {history.map((e, i) => (
            <li key={i}>
              <time>{time(e.at)}</time> {e.actor ? <strong>{e.actor}</strong> : null} {e.message ?? e.type}
            </li>
          ))}
        </ol>
      </section>
    </>
  );
}

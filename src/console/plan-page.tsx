/**
 * Plan (`POST /plan`): a policy pasted, what `fleet-upgrade plan` would do with it: which
 * Collectors would move from which build to which, those a known issue holds back, and what the
 * policy's `minAge` and `after` decide (the command's notes, word for word). Nothing is created; the daemon's answer (a policy's error names its line and field) is shown as it is.
 */
import { useState } from 'preact/hooks';
import { type Answer, call } from './api.js';

interface PlanRow {
  org: string;
  id: number;
  name: string;
  from: string;
  to: string;
  move: string;
  alive: boolean;
}
interface Plan {
  policy: string;
  build: string;
  builds: Record<string, string>;
  listed: number;
  collectors: PlanRow[];
  held: { org: string; id: number; name: string; action: string; note: string }[];
  notes: string[];
  failed: string[];
}

const SHOWN = 200;

export function PlanPage() {
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [answer, setAnswer] = useState<Answer<Plan> | undefined>();
  const plan = answer?.ok ? answer.json : undefined;
  const run = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      setAnswer(await call<Plan>('POST', '/plan', { policy: text }));
    } catch (err) {
      setAnswer({ status: 0, ok: false, text: (err as Error).message });
    } finally {
      setBusy(false);
    }
  };
  const error =
    answer && !answer.ok
      ? ((answer.json as { error?: { message?: string } } | undefined)?.error?.message ?? answer.text)
      : undefined;
  return (
    <>
      <h1>Plan</h1>
      <form class="plan" onSubmit={run}>
        <label for="policy-text">A policy file (YAML), as in config/policies/</label>
        <textarea
          id="policy-text"
          name="policy"
          rows={12}
          value={text}
          onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
        />
        <p>
          <button type="submit" disabled={busy || !text.trim()}>
            Plan
          </button>{' '}
          Nothing is created; <code>minAge</code> and <code>after</code> are weighed as{' '}
          <code>fleet-upgrade plan</code> weighs them.
        </p>
      </form>
      {error && (
        <p class="answer bad" role="alert" data-answer={answer?.status}>
          {answer?.status}: {error}
        </p>
      )}
      {plan && (
        <section aria-labelledby="planned" data-answer={answer?.status}>
          <h2 id="planned">What it would do</h2>
          <p data-field="plan-summary">
            policy {plan.policy}: {plan.collectors.length} of {plan.listed} offered Collectors would move to{' '}
            {plan.build || '(none)'}; nothing was created.
          </p>
          {plan.notes.map((n) => (
            <p data-field="plan-note" key={n}>
              {n}
            </p>
          ))}
          {plan.held.length > 0 && <p>{plan.held.length} held back by a known issue of the build.</p>}
          {plan.failed.map((f) => (
            <p class="answer bad" key={f}>
              {f}
            </p>
          ))}
          {plan.collectors.length > 0 && (
            <table data-table="plan">
              <thead>
                <tr>
                  <th scope="col">Organization</th>
                  <th scope="col">Collector</th>
                  <th scope="col">From → to</th>
                  <th scope="col">Move</th>
                  <th scope="col">Alive</th>
                </tr>
              </thead>
              <tbody>
                {plan.collectors.slice(0, SHOWN).map((r) => (
                  <tr key={`${r.org}/${r.id}`} data-collector={`${r.org}/${r.id}`}>
                    <td>{r.org}</td>
                    <td>{r.name}</td>
                    <td>
                      {r.from} → {r.to}
                    </td>
                    <td>{r.move}</td>
                    <td>{r.alive ? 'yes' : 'no'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {plan.collectors.length > SHOWN && (
            <p>
              The first {SHOWN} of {plan.collectors.length}: the CLI lists them all.
            </p>
          )}
        </section>
      )}
    </>
  );
}

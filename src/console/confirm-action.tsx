/**
 * One action on a rollout: a button that opens a confirmation saying what it will do, then the
 * server's answer shown as it is (its `message`, or its error), in a live region.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { type Answer, call, rolloutPath } from './api.js';
import type { ActionName } from './may-act.js';

export interface ActionSpec {
  action: ActionName;
  /** The button's words, e.g. `Pause emea`. */
  label: string;
  /** What it will do, in one sentence. */
  sentence: string;
  body?: Record<string, unknown>;
}

/** The sentence that says what an action will do (as the CLI's help says it). */
export function sentenceOf(action: ActionName, id: string, org?: string): string {
  const where = org ? ` in ${org}` : '';
  switch (action) {
    case 'pause':
      return `Pause ${id}${where}: no new Collector${where} starts its upgrade until someone resumes; those under way finish.`;
    case 'resume':
      return `Resume ${id}${where}: its Collectors${where} start their upgrades again.`;
    case 'abort':
      return `Abort ${id}: no Collector starts any more, those waiting are marked aborted; this cannot be resumed.`;
    case 'promote':
      return `Promote ${id}: end the wait of this wave (bake or manual approval) and start the next wave now.`;
    case 'approve':
      return `Approve the next wave of ${id} as yourself: it starts once enough people have approved.`;
    case 'retry':
      return `Retry the Collectors of ${id}${where} on the worklist (manual, unknown): they are queued again.`;
    case 'rollback':
      return `Roll back the failed Collectors of ${id}${where} to the build they were on.`;
    case 'forget':
      return `Forget ${id}: delete its state from Redis; the daemon may start it again from the policy.`;
  }
}

export function ActionButton({ id, spec, onDone }: { id: string; spec: ActionSpec; onDone: () => void }) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [answer, setAnswer] = useState<Answer | undefined>();
  // Keyboard: the confirmation takes the focus when it opens (Escape or Cancel closes it).
  const confirmButton = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) confirmButton.current?.focus();
  }, [asking]);
  const run = async () => {
    setBusy(true);
    try {
      setAnswer(await call('POST', rolloutPath(id, spec.action), spec.body ?? {}));
    } catch (err) {
      setAnswer({ status: 0, ok: false, text: (err as Error).message });
    } finally {
      setBusy(false);
      setAsking(false);
      onDone();
    }
  };
  const said = answer?.json as { message?: string; error?: { message?: string } } | undefined;
  return (
    <div class="action" data-action={spec.action}>
      <button type="button" onClick={() => setAsking(true)} disabled={busy} aria-expanded={asking}>
        {spec.label}
      </button>
      {asking && (
        <fieldset
          class="confirm"
          onKeyDown={(e) => {
            if (e.key === 'Escape') setAsking(false);
          }}
        >
          <legend>Confirm: {spec.label}</legend>
          <p>{spec.sentence}</p>
          <button
            type="button"
            class="primary"
            data-confirm
            onClick={run}
            disabled={busy}
            ref={confirmButton}
          >
            {spec.label}
          </button>{' '}
          <button type="button" onClick={() => setAsking(false)}>
            Cancel
          </button>
        </fieldset>
      )}
      {answer && (
        <p class={answer.ok ? 'answer ok' : 'answer bad'} role="status" data-answer={answer.status}>
          {answer.status ? `${answer.status}: ` : ''}
          {said?.message ?? said?.error?.message ?? answer.text}
        </p>
      )}
    </div>
  );
}

/**
 * One action on a rollout: a button that opens a confirmation saying what it will do, in the words
 * of the command's help (src/cli/render/action-sentences.ts, shared with the CLI) and the command
 * that does the same, then the server's answer shown as it is (its `message`, or its error), in a
 * live region.
 */
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Confirmation } from '../cli/render/action-sentences.js';
import { type Answer, call, rolloutPath } from './api.js';
import type { ActionName } from './may-act.js';

export interface ActionSpec {
  action: ActionName;
  /** The button's words, e.g. `Pause emea`. */
  label: string;
  /** What it will do: the command that does the same and its help's words (action-sentences.ts). */
  confirmation: Confirmation;
  body?: Record<string, unknown>;
}

export function ActionButton({ id, spec, onDone }: { id: string; spec: ActionSpec; onDone: () => void }) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [answer, setAnswer] = useState<Answer | undefined>();
  // Keyboard: the confirmation takes the focus as it opens, in the same commit as its rendering (a
  // layout effect: an ordinary effect waits for a frame, and a key pressed before it went to the
  // opener). Escape anywhere in the action, the opener included, or Cancel closes it and gives the
  // focus back to the opener.
  const opener = useRef<HTMLButtonElement>(null);
  const confirmButton = useRef<HTMLButtonElement>(null);
  useLayoutEffect(() => {
    if (asking) confirmButton.current?.focus();
  }, [asking]);
  const close = () => {
    setAsking(false);
    opener.current?.focus();
  };
  const escapeCloses = (e: KeyboardEvent) => {
    if (asking && e.key === 'Escape') close();
  };
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
      <button
        type="button"
        ref={opener}
        onClick={() => setAsking(true)}
        onKeyDown={escapeCloses}
        disabled={busy}
        aria-expanded={asking}
      >
        {spec.label}
      </button>
      {asking && (
        <fieldset class="confirm" onKeyDown={escapeCloses}>
          <legend>Confirm: {spec.label}</legend>
          {spec.confirmation.sentences.map((sentence) => (
            <p key={sentence} data-field="sentence">
              {sentence}
            </p>
          ))}
          <p>
            As <code data-field="command">{spec.confirmation.command}</code>
          </p>
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
          <button type="button" onClick={close}>
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

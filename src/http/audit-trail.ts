/**
 * The HTTP API's side of the audit trail (rollout/life/audit-log.ts): the record of a control
 * request made from who called and what they asked, appended in the action's own step when the
 * action writes a rollout (`note`), alone otherwise, and told once more as one JSON line on the
 * daemon's log (`"audit": true`) for a SIEM. A request refused for its rate (429) is logged but
 * not recorded: a flood of them would push the real records out of the stream's cap.
 */
import type { IncomingMessage } from 'node:http';
import type { Logger } from '../lib/logger.js';
import { type AuditLog, type AuditNote, type AuditRecord, ControlError } from '../rollout/index.js';
import type { Identity } from './access-control.js';
import { HttpError } from './http-error.js';

export interface AuditAsk {
  what: string;
  rollout?: string;
  orgs?: readonly string[];
}

/** The record of `who` (undefined: not known, refused before) asking `ask`, from `address`. */
export function auditRecord(
  who: Identity | undefined,
  address: string | undefined,
  ask: AuditAsk,
  answer: Pick<AuditRecord, 'answer' | 'status' | 'reason'>,
): AuditRecord {
  return {
    who: who?.name ?? 'unknown',
    via: who?.via ?? 'token',
    from: who?.from ?? address ?? 'unknown',
    ...(who?.proxy ? { proxy: who.proxy } : {}),
    what: ask.what,
    ...(ask.rollout === undefined ? {} : { rollout: ask.rollout }),
    ...(ask.orgs?.length ? { orgs: [...ask.orgs] } : {}),
    ...answer,
  };
}

export class AuditTrail {
  constructor(
    readonly log: AuditLog,
    private readonly logger: Logger,
  ) {}

  /** A note that the action's own step carries (rollout-store.ts `audited`). */
  note(record: AuditRecord): AuditNote {
    return this.log.note(record);
  }

  /** After the action: its record appended alone when no step carried it, and logged. */
  async done(note: AuditNote): Promise<void> {
    if (!note.written) {
      await this.log.append(note.record);
      note.written = true;
    }
    this.tell(note.record);
  }

  /** A refusal: recorded (but a 429) and logged. */
  async refused(
    who: Identity | undefined,
    address: string | undefined,
    ask: AuditAsk,
    error: HttpError,
  ): Promise<void> {
    const record = auditRecord(who, address, ask, {
      answer: 'refused',
      status: error.status,
      reason: error.message,
    });
    if (error.code !== 'rate_limited') await this.log.append(record);
    this.tell(record);
  }

  tell(record: AuditRecord): void {
    this.logger.info({ audit: true, ...record }, 'audit');
  }
}

/**
 * A control request's work: it tells who called once known (`admitted`) and the organizations
 * its action touches (`scoped`), and answers the note its action's step carried (or none) and how
 * to answer the caller once the record is written.
 */
export type AuditedWork = (
  admitted: (who: Identity) => void,
  scoped: (orgs: readonly string[] | undefined) => void,
) => Promise<{ note?: AuditNote; answer: () => void }>;

/**
 * Runs a control request's `work` with its audit: the record of what was done goes into the
 * action's own step (`note`) or alone after it; a refusal (an HttpError, or a ControlError turned
 * into one) is recorded as refused, when it refused someone known or refused for who they are.
 */
export async function runAudited(
  deps: { trail: () => AuditTrail; logger: Logger },
  req: IncomingMessage,
  ask: AuditAsk,
  work: AuditedWork,
): Promise<void> {
  let who: Identity | undefined;
  let done: Awaited<ReturnType<AuditedWork>>;
  try {
    done = await work(
      (w) => {
        who = w;
      },
      (orgs) => {
        if (orgs) ask.orgs = orgs;
      },
    );
  } catch (err) {
    const error =
      err instanceof ControlError
        ? new HttpError(err.kind, err.message)
        : err instanceof HttpError
          ? err
          : undefined;
    if (!error) throw err;
    if (error.code === 'unauthorized' || error.code === 'forbidden' || who !== undefined)
      try {
        await deps.trail().refused(who, req.socket.remoteAddress, ask, error);
      } catch (e) {
        deps.logger.warn({ err: (e as Error).message }, 'audit record not written');
      }
    throw error;
  }
  if (done.note) await deps.trail().done(done.note);
  deps.logger.info(
    { actor: (who as Identity | undefined)?.name, rollout: ask.rollout, action: ask.what },
    'control action',
  );
  done.answer();
}

/**
 * `approve`: one person's approval of the wave a rollout waits for (`approval: { approvers: N,
 * from }` of the policy's wave; wave-progress.ts puts it in the rollout's waves). Each approval is
 * one compare-and-set on the waves' progress with its `rollout.approved` event (history, outbox,
 * and the caller's audit record, in the same step): the Nth distinct person opens the next wave.
 * Refused with the reason: nothing awaits approval (conflict), the same person a second time
 * (conflict), a person who is not in `from` (forbidden). A wave with `approval: manual` takes
 * one approval (as `promote`).
 */
import type { RolloutRecord } from '../life/index.js';
import { type ControlDeps, ControlError, type ControlResult } from './control.js';

/** Who approves: a name, and the proxy's groups when the person came through one. */
export interface Approver {
  name: string;
  groups?: readonly string[];
}

/** What a rollout's wave still needs (for `status`): who approved, how many more, who may. */
export function approvalsOf(
  rollout: Pick<RolloutRecord, 'wave'>,
): { approvedBy: string[]; needed: number; from?: string[] } | undefined {
  const p = rollout.wave;
  if (p?.waitingFor !== 'approval') return undefined;
  const by = p.approval?.by.map((b) => b.name) ?? [];
  const needed = Math.max(0, (p.approval?.approvers ?? 1) - by.length);
  return { approvedBy: by, needed, ...(p.approval?.from ? { from: p.approval.from } : {}) };
}

export async function approve(deps: ControlDeps, id: string, who: Approver): Promise<ControlResult> {
  const rollout = await deps.rollouts.get(id);
  if (!rollout) throw new ControlError('not_found', `no rollout '${id}' (see \`fleet-upgrade status\`)`);
  const p = rollout.wave;
  if (rollout.phase !== 'running' || p?.waitingFor !== 'approval')
    throw new ControlError(
      'conflict',
      `rollout ${id} is ${rollout.phase}: nothing awaits approval${p?.waitingFor ? ` (it waits for its ${p.waitingFor})` : ''}`,
    );
  const of = p.of ?? p.index + 2;
  const wants = p.approval ?? { approvers: 1, by: [] };
  const from = wants.from;
  if (from && !from.includes(who.name) && !(who.groups ?? []).some((g) => from.includes(g)))
    throw new ControlError(
      'forbidden',
      `${who.name} may not approve wave ${p.index + 2} of ${id}: its approvers are ${from.join(', ')}`,
    );
  const earlier = wants.by.find((b) => b.name === who.name);
  if (earlier)
    throw new ControlError(
      'conflict',
      `${who.name} approved wave ${p.index + 2} of ${id} already (at ${new Date(earlier.at).toISOString()}): a second approval must come from another person`,
    );
  const now = deps.clock.now();
  const by = [...wants.by, { name: who.name, at: now }];
  const needed = Math.max(0, wants.approvers - by.length);
  const next = Math.min(p.index + 1, of - 1);
  const written = await deps.rollouts.write(
    rollout,
    {
      waveSeq: p.seq,
      wave:
        needed > 0
          ? { index: p.index, waitingFor: 'approval', of, approval: { ...wants, by } }
          : { index: next, of },
      news: [
        {
          type: 'rollout.approved',
          source: 'operator',
          actor: who.name,
          wave: next + 1,
          of,
          approvers: by.map((b) => b.name),
          needed,
        },
      ],
    },
    now,
  );
  if (!written)
    throw new ControlError(
      'conflict',
      `rollout ${id}: its waves moved meanwhile; look again (\`fleet-upgrade status\`)`,
    );
  const event = written.events[0];
  return { rollout: id, message: event?.message ?? '', ...(event ? { event } : {}) };
}

/**
 * What the person signed in may do, as the daemon decides it (src/http/access-control.ts): a
 * role at least the action's over every organization it touches. The console shows an action
 * only when this says yes; the daemon still decides (a forged request is refused there).
 */
import type { Role, WhoAmI } from './types.js';

const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

export type ActionName =
  | 'pause'
  | 'resume'
  | 'abort'
  | 'promote'
  | 'approve'
  | 'retry'
  | 'rollback'
  | 'forget';

/** The role each action needs (src/http/control-actions.ts). */
export const ACTION_ROLE: Record<ActionName, Role> = {
  pause: 'operator',
  resume: 'operator',
  abort: 'operator',
  promote: 'operator',
  approve: 'operator',
  retry: 'operator',
  rollback: 'operator',
  forget: 'admin',
};

/** Whether `who` may run `action` over `orgs` (all of them must be covered by one grant). */
export function mayAct(who: WhoAmI | undefined, action: ActionName, orgs: readonly string[]): boolean {
  if (!who?.name) return false;
  const need = RANK[ACTION_ROLE[action]];
  return orgs.every((org) =>
    who.grants.some((g) => RANK[g.role] >= need && (g.orgs === undefined || g.orgs.includes(org))),
  );
}

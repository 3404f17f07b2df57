/**
 * The tally of a rollout's outcomes, kept in Redis by the step that writes a move
 * (lua/apply-moves-15.lua, keys.outcomes): how many times its Collectors of each organization
 * reached each settled state, what the health events decided of them, and how many moves left a
 * settled state (a not_alive Collector alive again, an operator's retry). Never decreased: it is
 * what fleet_upgrade_results_total and fleet_upgrade_health_verdicts_total export, whichever
 * process wrote the move and whether or not that process lives on. For each settled state,
 * reached − reopened is the number of Collectors in it now.
 */
import { isSettled } from './collector-state.js';
import { healthVerdictOf } from './health-verdict.js';
import type { Move } from './transition.js';

/** One organization's figures in the tally: by outcome, by verdict, and moves out of each settled state. */
export interface OutcomeTally {
  org: string;
  outcomes: Record<string, number>;
  verdicts: Record<string, number>;
  reopened: Record<string, number>;
}

/**
 * What a move adds to the tally (three of apply-moves-15.lua's values per move): the outcome it
 * reaches (a settled state entered from another state), the health events' verdict of it, and
 * the settled state it leaves ('' for none).
 */
export function tallyOf(m: Move): [outcome: string, verdict: string, reopened: string] {
  const changes = m.from !== m.next.state;
  const outcome = changes && isSettled(m.next.state) ? m.next.state : '';
  const verdict = outcome ? (healthVerdictOf(m.next) ?? '') : '';
  const reopened = changes && m.from !== undefined && isSettled(m.from) ? m.from : '';
  return [outcome, verdict, reopened];
}

/** The tally's hash (`<org>|<outcome>`, `<org>|verdict:<v>`, `<org>|reopened:<state>` → n), per organization. */
export function parseOutcomeTally(raw: Readonly<Record<string, string>>): OutcomeTally[] {
  const byOrg = new Map<string, OutcomeTally>();
  for (const [field, value] of Object.entries(raw)) {
    const bar = field.lastIndexOf('|');
    const n = Number(value);
    if (bar <= 0 || !Number.isFinite(n) || n <= 0) continue;
    const org = field.slice(0, bar);
    const name = field.slice(bar + 1);
    let t = byOrg.get(org);
    if (!t) {
      t = { org, outcomes: {}, verdicts: {}, reopened: {} };
      byOrg.set(org, t);
    }
    if (name.startsWith('verdict:')) t.verdicts[name.slice(8)] = n;
    else if (name.startsWith('reopened:')) t.reopened[name.slice(9)] = n;
    else t.outcomes[name] = n;
  }
  return [...byOrg.values()].sort((a, b) => a.org.localeCompare(b.org));
}

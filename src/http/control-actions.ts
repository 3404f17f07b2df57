/**
 * The operator actions of the control API, `POST /rollouts/{id}/{action}`: each its body's
 * schema (schema.ts), the role it needs (access-settings.ts: `forget` is an admin's, the others
 * an operator's), and the operator verb of src/rollout/operator/ it runs as the caller.
 */
import type { z } from 'zod';
import {
  abort,
  approve,
  type CollectorState,
  type ControlDeps,
  type ControlResult,
  forget,
  pause,
  promote,
  requestRollback,
  resume,
  retry,
  rollbackStates,
} from '../rollout/index.js';
import type { Identity } from './access-control.js';
import type { Role } from './access-settings.js';
import {
  AbortBody,
  EmptyBody,
  ForgetBody,
  PromoteBody,
  RetryBody,
  RollbackBody,
  ScopeBody,
} from './schema.js';

export interface Action<S extends z.ZodType> {
  body: S;
  /** The role it needs (access-settings.ts). */
  role: Role;
  run(deps: ControlDeps, id: string, who: Identity, body: z.infer<S>): Promise<ControlResult>;
}
const action = <S extends z.ZodType>(body: S, run: Action<S>['run'], role: Role = 'operator'): Action<S> => ({
  body,
  role,
  run,
});

/** The organization a body scopes its action to, when it names one. */
const scopeOf = (body: { org?: string | undefined }): { org?: string } =>
  body.org === undefined ? {} : { org: body.org };

export const ACTIONS: Record<string, Action<z.ZodType>> = {
  pause: action(ScopeBody, (deps, id, who, body: ScopeBody) => pause(deps, id, who.name, scopeOf(body))),
  resume: action(ScopeBody, (deps, id, who, body: ScopeBody) => resume(deps, id, who.name, scopeOf(body))),
  // Who, then why, as `fleet-upgrade abort --reason` records it: status and history name the actor.
  abort: action(AbortBody, (deps, id, who, body: AbortBody) =>
    abort(deps, id, who.name, body.reason === undefined ? undefined : `by ${who.name}: ${body.reason}`),
  ),
  promote: action(PromoteBody, (deps, id, who, body: PromoteBody) =>
    promote(deps, id, who.name, body.full ?? false),
  ),
  approve: action(EmptyBody, (deps, id, who) =>
    approve(deps, id, { name: who.name, ...(who.groups ? { groups: who.groups } : {}) }),
  ),
  retry: action(RetryBody, (deps, id, who, body: RetryBody) =>
    retry(deps, id, who.name, body.only as CollectorState[], scopeOf(body)),
  ),
  rollback: action(RollbackBody, (deps, id, who, body: RollbackBody) =>
    requestRollback(deps, id, who.name, rollbackStates(body), scopeOf(body)),
  ),
  forget: action(
    ForgetBody,
    (deps, id, _who, body: ForgetBody) => forget(deps, id, { force: body.force ?? false }),
    'admin',
  ),
};

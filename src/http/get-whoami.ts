/**
 * `GET /whoami`: who the caller is to the daemon and what they may do, for the console (and a
 * script that wants to know before it acts). The same decision as every other request
 * (control-gate.ts `identifyCaller`): with `access:`, a person or a 401; without it, the control
 * token's holder or a loopback caller (an admin), or, when reads are open, a reader with no name
 * who may act on nothing. Nothing of a token is in the answer.
 */
import type { ServerResponse } from 'node:http';
import type { Grant, Identity } from './access-control.js';
import type { HttpError } from './http-error.js';
import { sendJson } from './http-error.js';

export interface WhoAmI {
  /** Null: reads are open to this caller, but it may act on nothing. */
  name: string | null;
  role: Identity['role'] | null;
  /** Each role and the organizations it covers (absent: all of them). */
  grants: readonly Grant[];
  via: Identity['via'] | null;
  /** Whether `access:` is configured (people with roles) or the one-token rule holds. */
  access: boolean;
  /** Why the caller may not act, when it may not. */
  reason?: string;
}

export function sendWhoAmI(
  res: ServerResponse,
  decision: { ok: true; who: Identity } | { ok: false; error: HttpError },
  o: { access: boolean; readsOpen: boolean },
): void {
  if (decision.ok) {
    const { name, role, grants, via } = decision.who;
    const body: WhoAmI = { name, role, grants, via, access: o.access };
    sendJson(res, 200, body);
    return;
  }
  if (!o.readsOpen) throw decision.error;
  const body: WhoAmI = {
    name: null,
    role: null,
    grants: [],
    via: null,
    access: o.access,
    reason: decision.error.message,
  };
  sendJson(res, 200, body);
}

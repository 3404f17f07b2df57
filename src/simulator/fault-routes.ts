/**
 * /_sim/faults?org=NAME: the faults of one organization, switched at run time. GET lists those
 * in force (and the scheduled windows still to come); POST `{kind, forSeconds?, ...}` switches
 * one on from now (it replaces one of its kind switched on before); DELETE ends those in force
 * (`&kind=` only those of that kind). Kinds and parameters: fault-schema.ts.
 */
import { FaultKind, FaultSwitch } from './fault-schema.js';
import { type Answer, json, simError } from './http-util.js';
import { faultRecord } from './org-faults.js';
import type { Organization } from './organization.js';

function listing(org: Organization, now: number) {
  return {
    org: org.name,
    now,
    faults: org.faults.list(now).map(faultRecord),
    upcoming: org.faults.upcoming(now).map(faultRecord),
  };
}

export function faultRoutes(
  org: Organization,
  method: string,
  query: URLSearchParams,
  bodyText: string,
  now: number,
): Answer {
  if (method === 'GET') return json(200, listing(org, now));
  if (method === 'POST') {
    let body: unknown;
    try {
      body = JSON.parse(bodyText);
    } catch {
      return simError(400, 'body must be JSON: {"kind": "outage"|"unauthorized"|..., "forSeconds"?: N}');
    }
    const parsed = FaultSwitch.safeParse(body);
    if (!parsed.success)
      return simError(
        400,
        parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '),
      );
    const on = org.faults.switchOn(parsed.data, now);
    return json(201, { ...listing(org, now), switchedOn: faultRecord(on) });
  }
  if (method === 'DELETE') {
    const raw = query.get('kind');
    const kind = raw === null ? undefined : FaultKind.safeParse(raw);
    if (kind && !kind.success)
      return simError(400, `kind must be one of ${FaultKind.options.join(', ')}, got '${raw}'`);
    const ended = org.faults.end(now, kind?.data);
    return json(200, { ...listing(org, now), ended: ended.map(faultRecord) });
  }
  return simError(405, 'use GET, POST or DELETE');
}

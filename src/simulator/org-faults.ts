/**
 * The faults an organization suffers, in simulated time: the windows of its fleet file's
 * `faults.schedule` and those switched on at run time (POST /_sim/faults). A fault is in force
 * from `since` until `until` (null: to the end of the run). Of several in force of one kind, the
 * one switched on at run time wins, then the one that began last. Ending faults (DELETE
 * /_sim/faults) ends those in force now; scheduled windows still to come keep their turn.
 */
import {
  FAULT_KINDS,
  type FaultKind,
  type FaultSpec,
  type FaultSwitch,
  type ScheduledFault,
} from './fault-schema.js';

export interface FaultInForce {
  spec: FaultSpec;
  source: 'schedule' | 'runtime';
  /** Simulated epoch ms. */
  since: number;
  until: number | null;
}

type SpecOf<K extends FaultKind> = Extract<FaultSpec, { kind: K }>;

const inForce = (f: FaultInForce, now: number) => f.since <= now && (f.until === null || now < f.until);

/** The fault's own parameters, without its window. */
function specOf(fault: ScheduledFault | FaultSwitch): FaultSpec {
  const { from: _from, for: _for, forSeconds: _forSeconds, ...spec } = fault as ScheduledFault & FaultSwitch;
  return spec as FaultSpec;
}

/** The record of a fault as /_sim/faults shows it: its parameters, where it comes from, its window. */
export function faultRecord(f: FaultInForce) {
  return { ...f.spec, source: f.source, since: f.since, until: f.until };
}

export class OrgFaults {
  private readonly scheduled: FaultInForce[];
  private runtime: FaultInForce[] = [];

  constructor(schedule: readonly ScheduledFault[] | undefined, start: number) {
    this.scheduled = (schedule ?? []).map((w) => {
      const since = start + w.from * 1000;
      return {
        spec: specOf(w),
        source: 'schedule',
        since,
        until: w.for === undefined ? null : since + w.for * 1000,
      };
    });
  }

  /** The fault of `kind` in force at `now`, if any. */
  active<K extends FaultKind>(kind: K, now: number): SpecOf<K> | undefined {
    if (this.scheduled.length === 0 && this.runtime.length === 0) return undefined;
    const pick = (list: readonly FaultInForce[]) => {
      let best: FaultInForce | undefined;
      for (const f of list)
        if (f.spec.kind === kind && inForce(f, now) && (!best || f.since >= best.since)) best = f;
      return best;
    };
    return (pick(this.runtime) ?? pick(this.scheduled))?.spec as SpecOf<K> | undefined;
  }

  /** Every fault in force at `now`, runtime ones first. */
  list(now: number): FaultInForce[] {
    return [...this.runtime, ...this.scheduled].filter((f) => inForce(f, now));
  }

  /** Scheduled windows that have not begun at `now`. */
  upcoming(now: number): FaultInForce[] {
    return this.scheduled.filter((f) => f.since > now);
  }

  /** Switches a fault on from `now` (for `forSeconds`, or until ended); it replaces one of its kind switched on before. */
  switchOn(fault: FaultSwitch, now: number): FaultInForce {
    const on: FaultInForce = {
      spec: specOf(fault),
      source: 'runtime',
      since: now,
      until: fault.forSeconds === undefined ? null : now + fault.forSeconds * 1000,
    };
    this.runtime = [...this.runtime.filter((f) => f.spec.kind !== fault.kind && inForce(f, now)), on];
    return on;
  }

  /** Ends the faults in force at `now` (of `kind`, or all); returns them as they were. */
  end(now: number, kind?: FaultKind): FaultInForce[] {
    const ended: FaultInForce[] = [];
    const matches = (f: FaultInForce) => (kind === undefined || f.spec.kind === kind) && inForce(f, now);
    this.runtime = this.runtime.filter((f) => {
      if (!matches(f)) return inForce(f, now) || f.since > now;
      ended.push({ ...f });
      return false;
    });
    for (const f of this.scheduled) {
      if (!matches(f)) continue;
      ended.push({ ...f });
      f.until = now;
    }
    return ended;
  }
}

/** Requests refused or altered by each kind of fault: a counter per kind, all present. */
export function faultCounters(): Record<FaultKind, number> {
  return Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;
}

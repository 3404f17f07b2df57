/**
 * The shapes the console reads, as the API sends them (src/rollout/life/read-fleet-status.ts,
 * src/http/get-whoami.ts): only the fields it shows, all read defensively (an older daemon may
 * lack some).
 */
export type Role = 'viewer' | 'operator' | 'admin';
export interface Grant {
  role: Role;
  orgs?: string[];
}
export interface WhoAmI {
  name: string | null;
  role: Role | null;
  grants: Grant[];
  via: string | null;
  access: boolean;
  reason?: string;
}
export type Counts = Record<string, number | undefined>;
export interface OrgPart {
  org: string;
  build: string;
  counts: Counts;
  inflight: number;
  total: number;
  done: number;
  waiting?: string;
}
export interface Rollout {
  id: string;
  policy: string;
  build: string;
  orgs?: string[];
  phase: string;
  phaseText: string;
  maxInFlight: number;
  counts: Counts;
  inflight: number;
  total: number;
  done: number;
  byOrg: OrgPart[];
  startedAt: number;
  updatedAt: number;
  expectedMs?: number;
  pausedBy?: string;
  pauseReason?: string;
  haltReason?: string;
  abortReason?: string;
  holding?: string;
  ringPausedFor?: string;
  pausedOrgs?: { org: string; by: string; at: number }[];
  quarantined?: { cohort: string; reason: string; at: number; held: number }[];
  wave: {
    index: number;
    of?: number;
    waitingFor?: 'bake' | 'analysis' | 'approval';
    bakeUntil?: number;
    approval?: { approvers: number; from?: string[]; by: { name: string; at: number }[] };
  };
}
export interface Problem {
  text?: string;
  reason?: string;
  fix?: string;
  org?: string;
}
export interface FleetStatus {
  rollouts: Rollout[];
  orgProblems: Problem[];
  daemonProblems: Problem[];
  targetWaits?: { policy: string; reason?: string }[];
}
export interface HistoryEvent {
  type: string;
  at: number;
  actor?: string;
  message?: string;
  [k: string]: unknown;
}
export interface WorklistRow {
  id: string | number;
  name?: string;
  hostName?: string;
  from?: string;
  to?: string;
  state: string;
  failureClass?: string;
  message?: string;
  org: string;
  resolve: string;
}

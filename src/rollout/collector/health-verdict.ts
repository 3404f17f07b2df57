/**
 * What the service's health events decided of a Collector that reached an outcome, read from its
 * record: the verdict the outcome tally counts (collector-store.ts, fleet_upgrade_health_verdicts_total).
 * The verification that writes such records is listings/health-verdicts.ts's.
 */
import type { CollectorRecord } from './collector-record.js';

/** The health-event verdicts the metrics count (fleet_upgrade_health_verdicts_total). */
const HEALTH_VERDICTS = ['new_event', 'heartbeat_only'] as const;
export type HealthVerdict = (typeof HEALTH_VERDICTS)[number];

/**
 * What the health events decided of a Collector that reached an outcome: `new_event` (unhealthy
 * by one), `heartbeat_only` (verified without them: an old build, an account without them, no
 * read in time), or undefined (they had no say, or found nothing).
 */
export function healthVerdictOf(
  r: Pick<CollectorRecord, 'state' | 'failureClass' | 'message'>,
): HealthVerdict | undefined {
  if (r.state === 'unhealthy' && r.failureClass?.startsWith('health:')) return 'new_event';
  if (r.state === 'succeeded' && r.message?.startsWith('verified by heartbeat only')) return 'heartbeat_only';
  return undefined;
}

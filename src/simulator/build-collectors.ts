/**
 * The simulator's Collectors at start: the fleet file's explicit ones and the generated ones,
 * with the defaults of a record filled in, in ascending id order (the listing's stable order).
 */
import type { Random } from '../lib/random.js';
import { generateFleet } from './generate-fleet.js';
import type { FleetFile } from './schema.js';
import { drawsStop } from './stop-after-upgrade.js';
import type { SimCollector } from './types.js';

/** The fields of a Collector that has none, shared (a large fleet holds one object, not 10,000). */
const NO_FIELDS: Readonly<Record<string, string>> = Object.freeze({});

export function buildCollectors(fleet: FleetFile, start: number, rng: Random): SimCollector[] {
  const explicit = fleet.collectors;
  const taken = new Set(explicit.map((c) => c.id));
  const generated = fleet.generate
    ? generateFleet({ ...fleet.generate, builds: fleet.builds, takenIds: taken })
    : [];
  const latest = fleet.builds[fleet.builds.length - 1] as string;
  const heartbeatMs = fleet.behaviour.heartbeatSeconds * 1000;
  const stop = fleet.behaviour.stopAfterUpgrade;
  return [...explicit, ...generated]
    .map((c): SimCollector => {
      const hosted = c.type === 'Hosted';
      const host = c.hostName ?? (hosted ? '' : `host-${c.id}`);
      const osName = c.osName ?? (hosted ? '' : 'Linux');
      return {
        id: c.id,
        name: c.name ?? (host || `collector-${c.id}`),
        hostName: host,
        timeZone: c.timeZone ?? 'Etc/UTC',
        ephemeral: c.ephemeral,
        sourceSyncMode: c.sourceSyncMode,
        type: c.type,
        version: c.version ?? latest,
        osVersion: c.osVersion ?? (hosted ? '' : '5.15.0-105-generic'),
        osName,
        osArch: c.osArch ?? (hosted ? '' : 'amd64'),
        alive: c.alive,
        // Offline before we started: gone for between 31 minutes and three days.
        offlineSince: start - 31 * 60_000 - rng.int(0, 3 * 86_400_000),
        heartbeatPhase: rng.int(0, heartbeatMs - 1),
        outcome: c.outcome,
        upgradeSeconds: c.upgradeSeconds,
        failureMessage: c.failureMessage,
        failureCause: c.failureCause,
        // Drawn from the seed and the id only: the main stream (and so today's fleets) is untouched.
        stopsAfterUpgrade: !hosted && (c.stopsAfterUpgrade ?? drawsStop(stop, fleet.seed, c.id, osName)),
        stops: [],
        flap: c.flap,
        category: c.category ?? '',
        description: c.description ?? '',
        fields: c.fields ?? NO_FIELDS,
        tasks: [],
      };
    })
    .sort((a, b) => a.id - b.id);
}

/**
 * A gauge filled at each scrape from a snapshot read from Redis (fleet-gauges.ts,
 * inventory-gauges.ts): reset first, so that a series whose subject is gone disappears; the
 * snapshot is read through `read`, which those callers share across a scrape's gauges.
 */
import { Gauge, type Registry } from 'prom-client';

export type SnapshotGauge<S> = <L extends string>(
  config: { name: string; help: string; labelNames: readonly L[] },
  fill: (snapshot: S, gauge: Gauge<L>) => void,
) => Gauge<L>;

/** A maker of such gauges in `registry`, each filled from what `read` answers. */
export function snapshotGauges<S>(registry: Registry, read: () => Promise<S>): SnapshotGauge<S> {
  return (config, fill) =>
    new Gauge({
      ...config,
      registers: [registry],
      async collect() {
        const s = await read();
        this.reset();
        fill(s, this);
      },
    });
}

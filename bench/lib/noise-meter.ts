/**
 * Event-loop delay, load and this process's CPU while a run goes on: how noisy its real-time
 * figures may be. At a time scale of 60, every real millisecond a step waits for the event loop
 * is 60 simulated ones: a saturated process shows up here before it shows up as idle slots.
 */
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface Noise {
  eventLoopDelayMs: { p50: number; p99: number; max: number };
  loadAverage1m: { start: number; end: number };
  /** CPU seconds of this process per real second (1 = one core busy the whole time). */
  processCpuShare: number;
}

export function noiseMeter(): () => Noise {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  const load = loadavg()[0] as number;
  const cpu = process.cpuUsage();
  const t0 = Date.now();
  return () => {
    h.disable();
    const used = process.cpuUsage(cpu);
    return {
      eventLoopDelayMs: {
        p50: Number((h.percentile(50) / 1e6).toFixed(1)),
        p99: Number((h.percentile(99) / 1e6).toFixed(1)),
        max: Number((h.max / 1e6).toFixed(1)),
      },
      loadAverage1m: { start: Number(load.toFixed(2)), end: Number((loadavg()[0] as number).toFixed(2)) },
      processCpuShare: Number(((used.user + used.system) / 1000 / Math.max(1, Date.now() - t0)).toFixed(2)),
    };
  };
}

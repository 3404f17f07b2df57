/**
 * A rehearsal's two clocks must agree: the simulator runs K times faster than the wall clock, and
 * the orchestrator judges every duration (polling, time-outs, bakes, the API budget) on its own
 * time scale. With the scale forgotten (`run` at 1 against a simulator at 60), nothing looks
 * wrong, only slow: `done: 0` for minutes. The simulator tells its scale on every answer
 * (X-Simulator-Time-Scale); this transport looks at each answer's header, at no extra request,
 * and warns once, naming both scales and what to set; `onChange` makes it one of the daemon's
 * problems (`status` shows it until the process stops). A new key prefix too: the deployment's
 * Redis keeps the scale its first process started with (lib/shared-clock.ts) and refuses another.
 * The real service sends no such header: nothing is said. The simulator also tells its simulated
 * now (X-Simulator-Now): `onNow` hears it with the wall-clock time of the answer, so that a
 * rehearsal's clock can be set by the simulator's (lib/shared-clock.ts).
 */
import type { HttpTransport } from '../../api/index.js';
import type { Logger } from '../../lib/logger.js';
import { SIM_NOW_HEADER, TIME_SCALE_HEADER } from '../../lib/time-scale-header.js';
import type { DaemonProblem } from '../../rollout/index.js';

/** The scale an answer's headers tell, or undefined (no header, or not a positive number). */
export function toldTimeScale(headers: Record<string, string | string[] | undefined>): number | undefined {
  const raw = headers[TIME_SCALE_HEADER];
  const text = Array.isArray(raw) ? raw[0] : raw;
  if (text === undefined || text.trim() === '') return undefined;
  const scale = Number(text);
  return Number.isFinite(scale) && scale > 0 ? scale : undefined;
}

/** The simulated now an answer's headers tell (epoch ms), or undefined. */
export function toldNow(headers: Record<string, string | string[] | undefined>): number | undefined {
  const raw = headers[SIM_NOW_HEADER];
  const text = Array.isArray(raw) ? raw[0] : raw;
  if (text === undefined || !/^\d{1,16}$/.test(text.trim())) return undefined;
  const now = Number(text);
  return Number.isSafeInteger(now) ? now : undefined;
}

/** Whether two scales differ beyond the rounding of their text. */
export function scalesDiffer(own: number, told: number): boolean {
  return Math.abs(own - told) > 1e-9 * Math.max(own, told);
}

export function watchTimeScale(
  transport: HttpTransport,
  options: {
    timeScale: number;
    logger: Logger;
    /** Told when the simulator's scale starts to differ (its scale), and when it agrees again (undefined). */
    onChange?: (simulatorTimeScale: number | undefined) => void;
    /** Told the simulator's now on each answer that tells it, with the wall-clock ms it arrived at. */
    onNow?: (simulatorNow: number, wallAt: number) => void;
  },
): HttpTransport {
  let warned = false;
  let differs: number | undefined;
  return {
    async send(req) {
      const answer = await transport.send(req);
      const told = toldTimeScale(answer.headers);
      if (told === undefined) return answer;
      const simNow = toldNow(answer.headers);
      if (simNow !== undefined) options.onNow?.(simNow, Date.now());
      const now = scalesDiffer(options.timeScale, told) ? told : undefined;
      if (now !== differs) {
        differs = now;
        options.onChange?.(now);
      }
      if (now !== undefined && !warned) {
        warned = true;
        options.logger.warn(
          {
            timeScale: options.timeScale,
            simulatorTimeScale: told,
            set: `FLEET_UPGRADE_TIME_SCALE=${told}`,
          },
          "time scale differs from the simulator's: every duration and the API budget are off; stop, then start again with FLEET_UPGRADE_TIME_SCALE (or --time-scale) set to the simulator's, under a new FLEET_UPGRADE_KEY_PREFIX (this Redis keeps the scale it started with)",
        );
      }
      return answer;
    },
    close: () => transport.close(),
  };
}

/** The daemon's problem while its time scale is not the simulator's (rollout/problems/). */
export function timeScaleProblem(timeScale: number, simulatorTimeScale: number, now: number): DaemonProblem {
  return {
    kind: 'time_scale',
    subject: 'time scale',
    reason: `runs at time scale ${timeScale}, the simulator at ${simulatorTimeScale}: every duration and the API budget are off`,
    fix: `stop it, then start it again with FLEET_UPGRADE_TIME_SCALE=${simulatorTimeScale} (or --time-scale ${simulatorTimeScale}) under a new FLEET_UPGRADE_KEY_PREFIX (this Redis keeps the time scale it started with)`,
    timeScale,
    simulatorTimeScale,
    since: now,
  };
}

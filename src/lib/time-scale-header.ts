/**
 * The simulator's time scale, told on every answer it gives (the real service sends no such
 * header). Read by the orchestrator's client to warn when its own time scale differs
 * (cli/boot/watch-time-scale.ts): both sides import the name from here, neither from the other.
 */
export const TIME_SCALE_HEADER = 'x-simulator-time-scale';

/**
 * The simulator's clock when it answered (epoch ms of its simulated time), told beside its time
 * scale: a rehearsal's daemon sets the deployment's clock by it (lib/shared-clock.ts
 * `alignSharedClock`), so that one rehearsal has one simulated clock, the simulator's.
 */
export const SIM_NOW_HEADER = 'x-simulator-now';

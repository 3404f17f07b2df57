/**
 * The simulator's time scale, told on every answer it gives (the real service sends no such
 * header). Read by the orchestrator's client to warn when its own time scale differs
 * (cli/boot/watch-time-scale.ts): both sides import the name from here, neither from the other.
 */
export const TIME_SCALE_HEADER = 'x-simulator-time-scale';

/**
 * The door of problems/: the daemon's own problems (daemon-problems.ts: an invalid policy file,
 * a target the service does not offer, a time scale that is not the simulator's), each process's
 * in memory (problem-book.ts) and all of them in Redis with an expiry, so that `status` shows
 * them while the daemon runs and a killed daemon's go by themselves.
 */
export * from './daemon-problems.js';
export * from './problem-book.js';

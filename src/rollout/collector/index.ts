/**
 * The door of collector/: a Collector's life in a rollout. The one state table with every list
 * of states as a column (collector-state.ts), the events and the table of moves
 * (transition-table.ts), the moves made (transition.ts, with attempt-log.ts), what is recorded of
 * a Collector (collector-record.ts), its cohort's key, the one known-issue matcher
 * (known-issue-holds.ts), and the store that writes moves atomically (collector-store.ts with
 * lua/apply-moves-15.lua) and what it reads (collector-reads.ts).
 */
export * from './cohort-key.js';
export * from './collector-key.js';
export * from './collector-reads.js';
export * from './collector-record.js';
export * from './collector-state.js';
export * from './collector-store.js';
export * from './health-verdict.js';
export * from './known-issue-holds.js';
export * from './outcome-tally.js';
export * from './transition.js';
export * from './transition-table.js';

/**
 * The door of gates/: what stops a rollout, or part of it, when outcomes go wrong: the failure
 * gate (failure-gate.ts: judged per outcome type, per wave and overall; a trip halts, aborts or
 * rolls a wave back), the cohort gate (cohort-gate.ts with its statistics in judge-cohorts.ts:
 * a cohort failing significantly above its limit is quarantined), and a wave's analysis gate
 * (wave-analysis.ts, over src/analysis).
 */
export * from './cohort-gate.js';
export * from './failure-gate.js';
export * from './judge-cohorts.js';
export * from './wave-analysis.js';

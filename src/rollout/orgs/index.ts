/**
 * The door of orgs/: the health of each organization this deployment drives (org-health.ts): a
 * problem of one organization makes its part of each rollout wait, never the others'.
 */
export * from './org-health.js';

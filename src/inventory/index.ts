/**
 * The door of src/inventory: the daemon's inventory of the whole fleet per organization
 * (`GET collectors`, paced, leader-only), kept in Redis as counts, and each policy's compliance
 * judged from it. The metrics, `fleet` and the daemon import from here and nowhere else.
 */
export {
  COMPLIANCE_KINDS,
  type ComplianceCounts,
  type ComplianceKind,
  complianceOf,
  complianceRatios,
} from './compliance.js';
export {
  ComplianceHistory,
  DEFAULT_HISTORY_LIMITS,
  type HistoryLimits,
} from './compliance-history.js';
export type { CompliancePoint, ComplianceSeries, FleetHistoryAnswer } from './compliance-series.js';
export {
  type InventoryCompliance,
  type InventoryPass,
  type InventorySchedule,
  InventoryStore,
  type OrgInventory,
  type PolicyCompliance,
} from './inventory-store.js';
export { complianceTarget, judgeCompliance } from './judge-compliance.js';
export { runInventoryPass } from './run-inventory-pass.js';
export {
  DEFAULT_INVENTORY_INTERVAL_MS,
  DEFAULT_INVENTORY_PAGE_EVERY_MS,
  type InventoryDeps,
  type InventoryLoop,
  nextPassAt,
  startInventory,
} from './start-inventory.js';
export {
  buildOfRecord,
  createTally,
  type FleetGroup,
  type InventoryTally,
  OTHER,
  type PolicyTally,
  UNKNOWN_BUILD,
  UNKNOWN_OS,
} from './tally-inventory.js';

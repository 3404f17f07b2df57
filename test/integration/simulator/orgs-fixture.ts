/**
 * Two organizations in one simulator, for the tests of `orgs:`: `acme` (the test fleet with its
 * users OPS and INTERN) and `globex` (the same Collectors, ids included, with a user of its own).
 * Task ids repeat across them, as across two real deployments.
 */
import type { MultiOrgFleetFileInput } from '../../../src/simulator/fleet-source.js';
import type { FleetFileInput, OrgFleetInput } from '../../../src/simulator/schema.js';
import type { SimulatorOptions } from '../../../src/simulator/start-simulator.js';
import {
  type ApiResponse,
  type Credentials,
  type FleetPatch,
  startTestSimulator,
  type TestSimulator,
  testFleet,
} from '../../support/simulator.js';

export const GLOBEX: Credentials = { accessId: 'globex-ops', accessKey: 'globex-secret' };

/** One organization: the test fleet named `name`, with `patch` applied. */
export function orgFleet(name: string, patch: FleetPatch = {}): OrgFleetInput {
  return { name, ...testFleet(patch) };
}

/** acme (OPS, INTERN) and globex (GLOBEX), each the test fleet with its patch. */
export function twoOrgs(acme: FleetPatch = {}, globex: FleetPatch = {}): MultiOrgFleetFileInput {
  return {
    orgs: [
      orgFleet('acme', acme),
      orgFleet('globex', { users: [{ accessId: GLOBEX.accessId, accessKey: GLOBEX.accessKey }], ...globex }),
    ],
  };
}

/**
 * A test simulator of several organizations. test/support's helper is typed for the fleet file of
 * one organization; the simulator takes either form, so the fleet is passed through as is.
 */
export function startOrgsSimulator(
  fleet: MultiOrgFleetFileInput = twoOrgs(),
  options: Partial<Omit<SimulatorOptions, 'fleet'>> = {},
): Promise<TestSimulator> {
  return startTestSimulator(fleet as unknown as FleetFileInput, options);
}

/** A /_sim request with JSON headers (no auth), answered as parsed JSON. */
export function sim(t: TestSimulator, method: string, path: string, body?: unknown): Promise<ApiResponse> {
  return t.raw(method, path, {
    ...(body === undefined ? {} : { body }),
    headers: { 'content-type': 'application/json', accept: 'application/json' },
  });
}

/**
 * A scan pages through the service's upgradable Collectors for a rollout's build and keeps those
 * the policy selects and would move (planMove: downgrades only when allowed). Being listed means:
 * not on the build, and no unfinished task. So, per Collector listed:
 * - not known yet: recorded `queued` (discovery order is the admission order; canaries, the
 *   Collectors a first wave's `select` picks, come before every other, and those below the
 *   policy's `minimumBuild` before them: a wave of their own); one that a known issue of the
 *   build matches (`knownIssues`) goes on at once to `skipped` or `manual`, with the note;
 * - known `not_alive`, listed alive, while the rollout admits and before `retry.notAlive.until`:
 *   back to `queued` (catch-up of a Collector that came back);
 * - known `reconciling`, on a page read after it went there: evidence that its task of unknown
 *   id ended without reaching the build (reconcile-unknown-tasks.ts records that);
 * - anything else known is left alone: a final Collector gets no second task in one rollout.
 */
import type { BuildTarget, Collector, CollectorUpgradeClient } from '../../api/index.js';
import type { LeftBounds } from '../../api/walk-collector-pages.js';
import type { Clock } from '../../lib/clock.js';
import { compareBuildVersions, isBuildVersion } from '../../lib/version.js';
import type { Policy } from '../../policy/schema.js';
import { knownIssueFor } from '../../policy/select/known-issue-match.js';
import { planMove } from '../../policy/select/plan-move.js';
import { compileClaim, compileSelection } from '../../policy/select/select-collectors.js';
import { followsLatest } from '../../policy/target.js';
import { admissionBase, buildDistance, durationKind, type LengthModel } from '../admit/index.js';
import {
  type CollectorKey,
  type CollectorRecord,
  type CollectorStore,
  cohortKey,
  collectorKey,
  DEFAULT_ORG,
  keyOf,
  knownIssueHold,
  type Move,
  newRecord,
  OFF_LISTING_STATES,
  parseCollectorKey,
  transition,
  writeKnownIssueHolds,
} from '../collector/index.js';
import { admits, buildOf, type RolloutRecord } from '../life/index.js';

export interface ScanResult {
  /** Selected Collectors the listing offered (by key), with the clock time their page was requested. */
  listed: Map<CollectorKey, number>;
  added: CollectorKey[];
  /** not_alive Collectors seen alive and queued again. */
  caughtUp: CollectorKey[];
  /** Collectors not sent yet moved to the organization's build, which moved on (`retarget`). */
  retargeted: number;
  /** Of the added, those the first wave's `select` picks (canaries, admitted first). */
  canaries: number;
}

export interface ScanDeps {
  api: Pick<CollectorUpgradeClient, 'collectorPages'>;
  store: CollectorStore;
  clock: Clock;
}

/** Pages of a listing, each with the clock time at which it was requested. */
export async function* timedPages(
  api: ScanDeps['api'],
  clock: Clock,
  toVersion: string,
  pageSize: number,
  left?: () => Promise<LeftBounds>,
): AsyncGenerator<{ page: Collector[]; requestedAt: number }> {
  const pages = api
    .collectorPages({ toVersion, limit: pageSize, ...(left ? { left } : {}) })
    [Symbol.asyncIterator]();
  for (;;) {
    const requestedAt = clock.now();
    const next = await pages.next();
    if (next.done) return;
    yield { page: next.value, requestedAt };
  }
}

export async function scanUpgradable(
  deps: ScanDeps,
  rollout: RolloutRecord,
  policy: Policy,
  /**
   * Policies that come first: a Collector they claim (its organization covered by their `orgs`,
   * their selection taking it) is theirs, not this policy's.
   */
  earlier: readonly Policy[] = [],
  /**
   * `onPage`: called after each page that added Collectors (a first scan admits as it goes); it
   * answers the Collectors it admitted, whose tasks take them off the listing: the walk steps
   * back for them (bounds from their records: `leftBounds`).
   */
  options: {
    onPage?: () => Promise<readonly CollectorKey[]>;
    org?: string;
    /** The organization's builds (each Collector's distance to the target is counted in them). */
    targets?: readonly BuildTarget[];
    /** What the rollout has learned of upgrades' lengths: the longest expected are admitted first. */
    lengths?: LengthModel;
    /** False: the discovery order (the waves before the last, a cohort gate: learn-lengths.ts). */
    longest?: boolean;
  } = {},
): Promise<ScanResult> {
  const org = options.org ?? DEFAULT_ORG;
  const build = buildOf(rollout, org);
  const own = compileSelection(policy);
  const taken = earlier.map((p) => compileClaim(p));
  const matches = (c: Collector) => {
    const s = { ...c, org };
    return own(s) && !taken.some((t) => t(s));
  };
  const result: ScanResult = { listed: new Map(), added: [], caughtUp: [], retargeted: 0, canaries: 0 };
  // `latest` (and `latest-N`) resolve in each organization's build list, which may offer a newer
  // build later than another's: its Collectors not sent yet then go to it.
  const retargets = followsLatest(policy.target);
  const canarySelect = policy.waves[0]?.select;
  const isCanary = canarySelect ? compileSelection({ select: [canarySelect], exclude: [] }) : undefined;
  const until = rollout.settings.notAliveUntilMs;
  const by = policy.cohorts?.by;
  const cohortOf = (c: Collector) =>
    by ? cohortKey({ osName: c.osName, osArch: c.osArch, from: c.collectorVersion }, by) : undefined;
  const minimum = policy.minimumBuild;
  const below = (v: string) =>
    minimum !== undefined && isBuildVersion(v) && compareBuildVersions(v, minimum) < 0;
  const admitted: CollectorKey[] = [];
  for await (const { page, requestedAt } of timedPages(
    deps.api,
    deps.clock,
    build,
    policy.pageSize,
    options.onPage ? () => leftBounds(deps.store, rollout.id, admitted) : undefined,
  )) {
    const selected = page.filter(
      (c) =>
        c.collectorType === 'Installable' &&
        matches(c) &&
        planMove(policy, c.collectorVersion, build).kind !== 'skip',
    );
    if (selected.length === 0) continue;
    const key = (c: Collector) => collectorKey(org, c.id);
    for (const c of selected) result.listed.set(key(c), requestedAt);
    const known = await deps.store.getMany(rollout.id, selected.map(key));
    const now = deps.clock.now();
    const fresh: CollectorRecord[] = [];
    const moves: Move[] = [];
    const retargeted: Move[] = [];
    for (const c of selected) {
      const r = known.get(key(c));
      if (!r)
        fresh.push({
          ...newRecord(c, build, now, cohortOf(c), org),
          kind: durationKind(c.osName, buildDistance(c.collectorVersion, build, options.targets ?? [])),
          ...(below(c.collectorVersion) ? { belowMinimum: true } : {}),
        });
      else if (retargets && r.to !== build) {
        // Its organization's build moved on while it waited: the new one, if no create went out.
        const kind = durationKind(c.osName, buildDistance(c.collectorVersion, build, options.targets ?? []));
        const t = transition(r, { type: 'retarget', to: build, kind }, { now, settings: rollout.settings });
        if (t.ok) retargeted.push(t.move);
      } else if (
        r.state === 'not_alive' &&
        c.alive &&
        admits(rollout.phase) &&
        (until === undefined || now < rollout.startedAt + until)
      ) {
        const t = transition(r, { type: 'seen_alive' }, { now, settings: rollout.settings });
        if (t.ok) moves.push(t.move);
      }
    }
    // A canary held by a known issue, or below the minimum (a wave of its own), is not the first wave's.
    const canaries = new Set(
      isCanary
        ? selected
            .filter(
              (c) =>
                isCanary({ ...c, org }) &&
                !below(c.collectorVersion) &&
                !knownIssueFor(policy, { ...c, org }, build),
            )
            .map(key)
        : [],
    );
    const lengths = options.lengths;
    // Longest expected first, or the discovery order where the order draws a gate's sample.
    const added = await deps.store.discover(
      rollout.id,
      fresh,
      canaries,
      lengths && options.longest !== false ? (r) => admissionBase(lengths, r) : () => 0,
    );
    result.added.push(...added);
    result.canaries += added.filter((id) => canaries.has(id)).length;
    await holdKnownIssues(deps.store, rollout, policy, org, selected, fresh, added);
    const outcomes = await deps.store.apply(rollout.id, moves);
    moves.forEach((m, i) => {
      if (outcomes[i] === 'written') result.caughtUp.push(keyOf(m.next));
    });
    if (retargeted.length)
      result.retargeted += (await deps.store.apply(rollout.id, retargeted)).filter(
        (o) => o === 'written',
      ).length;
    // Only this organization's admissions take Collectors off this listing.
    if (added.length && options.onPage)
      admitted.push(...(await options.onPage()).filter((k) => parseCollectorKey(k).org === org));
  }
  return result;
}

/**
 * Collectors just found that a known issue of the build matches never wait in the queue: they go
 * on to `skipped` or `manual` with the issue's note (counted outside the waves: admit/outside-waves.ts).
 */
async function holdKnownIssues(
  store: CollectorStore,
  rollout: RolloutRecord,
  policy: Policy,
  org: string,
  selected: readonly Collector[],
  fresh: readonly CollectorRecord[],
  added: readonly CollectorKey[],
): Promise<void> {
  if (!policy.knownIssues?.length || added.length === 0) return;
  const isNew = new Set(added);
  const byId = new Map(selected.map((c) => [c.id, c]));
  const moves = { skip: [] as Move[], manual: [] as Move[] };
  for (const r of fresh) {
    const c = byId.get(r.id);
    if (!c || !isNew.has(keyOf(r))) continue;
    const held = knownIssueHold(
      policy,
      r,
      { ...c, org },
      { now: r.discoveredAt, settings: rollout.settings },
    );
    if (held?.move) moves[held.action].push(held.move);
  }
  await writeKnownIssueHolds(store, rollout.id, moves);
}

/**
 * How many of the Collectors admitted during this walk have left its listing: at most all of
 * them (a task may have been created for each), at least those whose records say a task runs or
 * the build was reached. (A task that failed before its record says so has put its Collector
 * back: the walk may then skip one Collector, which the next scan finds.)
 */
async function leftBounds(
  store: CollectorStore,
  rolloutId: string,
  admitted: readonly CollectorKey[],
): Promise<LeftBounds> {
  if (admitted.length === 0) return { atMost: 0, atLeast: 0 };
  const records = await store.getMany(rolloutId, admitted);
  let atLeast = 0;
  for (const r of records.values()) if (OFF_LISTING_STATES.includes(r.state)) atLeast++;
  return { atMost: admitted.length, atLeast };
}

/**
 * Current builds of Collectors without an unfinished task, read from the listing for another
 * build (a Collector on build B is offered for any other build). Used to learn whether a
 * Collector whose task id we lost reached the rollout's build.
 */
export async function observeVersions(
  api: ScanDeps['api'],
  otherBuild: string,
  wanted: ReadonlySet<number>,
  pageSize: number,
): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for await (const page of api.collectorPages({ toVersion: otherBuild, limit: pageSize })) {
    for (const c of page) if (wanted.has(c.id)) out.set(c.id, c.collectorVersion);
    if (out.size === wanted.size) break;
  }
  return out;
}

/**
 * Step 1 of a round: the scan of the rollout's listings, when due (one per organization whose part
 * goes on): at the start, every scan interval, sooner while tasks of unknown id wait for evidence,
 * and once more after every Collector settled (which decides convergence). Tasks of unknown id
 * are resolved from what it saw. The counts and slots are read again after it.
 */
import pLimit from 'p-limit';
import type { CollectorKey } from '../../collector/index.js';
import { buildOf } from '../../life/index.js';
import { reconcileUnknownTasks, scanUpgradable } from '../../listings/index.js';
import { eachOrgAtOnce } from '../each-org-at-once.js';
import { type RolloutRound, rereadRound, type ScanOutcome } from '../rollout-round.js';
import { dueAt, type OrgPart, type TickContext } from '../tick-context.js';
import { decideWatch } from '../watch-step.js';
import { admitBetweenPages, type BetweenPagesDeps } from './admit-between-pages.js';

type ScanStepDeps = BetweenPagesDeps &
  Pick<TickContext, 'memory' | 'scanEveryMs' | 'reconcileEveryMs' | 'orgFailed'>;

export async function scanStep(ctx: ScanStepDeps, round: RolloutRound): Promise<void> {
  const { memory } = ctx;
  const { draft, now } = round;
  const rollout = draft.view;
  const reconciling = round.counts.reconciling ?? 0;
  const sinceScan = now - (memory.lastScan.get(rollout.id) ?? 0);
  dueAt(
    memory,
    (memory.lastScan.get(rollout.id) ?? now) + (reconciling > 0 ? ctx.reconcileEveryMs : ctx.scanEveryMs),
  );
  const { idle } = round.scan;
  const due =
    rollout.scans === 0 ||
    sinceScan >= ctx.scanEveryMs ||
    (reconciling > 0 && sinceScan >= ctx.reconcileEveryMs) ||
    (idle && !memory.idleScanned.has(rollout.id));
  if (!due || round.orgs.length === 0) return;
  const found: ScanOutcome = { ran: true, added: 0, idle };
  let canaries = 0;
  // Each organization's listing goes through its own API budget: they are walked at once, not one
  // after the other (during a first scan each one's pages queue behind its own creates, and one
  // after the other the tenth organization would start minutes after the first). Admissions
  // between pages, which write the rollout, take turns.
  const admitting = pLimit(1);
  const onPage = () =>
    admitting(async () => {
      // Whether the rollout watches is decided before its first tasks start, not after the whole
      // first scan: a job reads it at its first step, and until then every task's job reads its
      // status. At 10 × 10,000 the first scan took 70–170 s, and those reads (500 tasks an
      // organization) kept the workers from the creates of the rest (docs/benchmarks.md, #31).
      if (rollout.scans === 0)
        await decideWatch(
          ctx,
          draft,
          await ctx.store.counts(rollout.id),
          round.policy.pageSize,
          ctx.clock.now(),
        );
      return admitBetweenPages(ctx, round);
    });
  await eachOrgAtOnce(round.orgs, async (part) => {
    const scanned = await scanOrg(ctx, round, part, reconciling, onPage);
    if (scanned === undefined) {
      found.ran = false;
      return;
    }
    found.added += scanned.added;
    canaries += scanned.canaries;
  });
  memory.lastScan.set(rollout.id, now);
  draft.add('scans', 1);
  draft.set({ lastScanAt: now });
  // The store counted the canaries it found (the waves' plan reads them).
  if (canaries > 0) {
    const stored = await ctx.rollouts.get(rollout.id);
    if (stored) draft.took(stored);
  }
  if (idle && found.ran) memory.idleScanned.add(rollout.id);
  round.scan = found;
  if (found.ran) await rereadRound(ctx, round);
}

/**
 * One organization's scan (and the reconcile of its tasks of unknown id); undefined when the
 * organization's service failed (its problem is recorded, its part waits, the others' go on).
 */
async function scanOrg(
  ctx: ScanStepDeps,
  round: RolloutRound,
  part: OrgPart,
  reconciling: number,
  onPage: () => Promise<readonly CollectorKey[]>,
): Promise<{ added: number; canaries: number } | undefined> {
  const { policy, draft } = round;
  const rollout = draft.view;
  const deps = { ...ctx, api: part.api };
  let scan: Awaited<ReturnType<typeof scanUpgradable>>;
  try {
    scan = await scanUpgradable(deps, rollout, policy, round.earlier, {
      org: part.org,
      targets: part.targets,
      lengths: round.lengths,
      longest: round.longest,
      // The first wave's canaries must go first, and only the whole listing says which they are.
      ...(rollout.scans === 0 && !policy.waves[0]?.select ? { onPage } : {}),
    });
  } catch (err) {
    if (!(await ctx.orgFailed(part.org, err))) throw err;
    return undefined;
  }
  if (reconciling > 0)
    await reconcileUnknownTasks(deps, rollout, {
      listed: scan.listed,
      pageSize: policy.pageSize,
      targets: part.targets,
      org: part.org,
    });
  const added = scan.added.length + scan.caughtUp.length;
  if (added + scan.retargeted)
    ctx.logger.info(
      {
        rollout: rollout.id,
        org: part.org,
        added: scan.added.length,
        caughtUp: scan.caughtUp.length,
        ...(scan.retargeted ? { retargeted: scan.retargeted, build: buildOf(rollout, part.org) } : {}),
        listed: scan.listed.size,
      },
      'scan found Collectors',
    );
  return { added, canaries: scan.canaries };
}

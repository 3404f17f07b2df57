/**
 * One wave of a rollout: its cumulative size (a count of Collectors, `10`, or a share of the
 * selected ones, `"5%"`), and what happens after its last outcome before the next wave starts:
 * `bake` (wait that long; a trip of the failure gate meanwhile halts the rollout), `analysis`
 * (Prometheus queries that must hold, src/analysis) and `approval: manual` (wait for
 * `fleet-upgrade promote`). The first wave may name its members with
 * `select` (canaries chosen by host name, say) instead of the lowest ids; its size then defaults
 * to every Collector that selection matches.
 */
import { z } from 'zod';
import { unknownFieldReason } from '../lib/source/yaml-source.js';
import { AnalysisGate } from './analysis.js';
import { durationField } from './duration-field.js';
import { isEmptySelection, Selection } from './select/selection.js';

/** A wave's cumulative size: a count of Collectors or a share of the selected ones. */
export type WaveSize = { kind: 'count'; count: number } | { kind: 'percent'; percent: number };

export interface Wave {
  /** Cumulative size; undefined only for a first wave sized by its `select`. */
  size?: WaveSize;
  /** Clock ms to wait after the wave's last outcome before the next wave. */
  bakeMs?: number;
  /** Wait for an operator's `promote` before the next wave. */
  approval?: WaveApproval;
  /** First wave only: its members (the canaries). */
  select?: Selection;
  /** Prometheus queries that must hold after the bake before the next wave (src/analysis). */
  analysis?: AnalysisGate;
}

const SIZE_HINT = 'expected a number of Collectors (e.g. 10) or a percentage (e.g. "5%")';

const Size = z.union([z.number(), z.string()], { error: SIZE_HINT }).transform((value, ctx): WaveSize => {
  if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= 1 && value <= 10_000_000) return { kind: 'count', count: value };
  } else {
    const m = /^(\d+(?:\.\d+)?)\s*%$/.exec(value.trim());
    const percent = m ? Number(m[1]) : Number.NaN;
    if (percent > 0 && percent <= 100) return { kind: 'percent', percent };
  }
  ctx.addIssue({
    code: 'custom',
    message: `${SIZE_HINT}, above 0 and at most 100% (or 10,000,000 Collectors); got ${JSON.stringify(value)}`,
  });
  return z.NEVER;
});

/** What the next wave waits for: one `promote`, or approvals by several people. */
export type WaveApproval = 'manual' | { approvers: number; from?: string[] };

const WaveApprovalField = z.union(
  [
    z.literal('manual'),
    z.strictObject({
      /** Distinct people who must approve, 1 to 10. */
      approvers: z.number().int().min(1).max(10),
      /** Who may approve: names of people, or groups of the proxy. Default: any operator in scope. */
      from: z.array(z.string().min(1).max(128)).min(1).max(100).optional(),
    }),
  ],
  { error: 'expected "manual" or { approvers: N, from: [names or groups] } (or leave approval out)' },
);

const WaveObject = z
  .strictObject({
    /** Cumulative size of the rollout after this wave. Required, except on a first wave with `select`. */
    size: Size.optional(),
    /** Wait after the wave's last outcome before the next wave starts (e.g. `30m`). Default none. */
    bake: durationField({ max: 30 * 24 * 3_600_000 }).optional(),
    /** Prometheus queries that must hold, after the bake, before the next wave starts. Default: the policy's `analysis`. */
    analysis: AnalysisGate.optional(),
    /**
     * `manual`: the next wave waits for `fleet-upgrade promote ROLLOUT`; `{ approvers: N, from }`:
     * for N distinct people (of `from`, names or proxy groups, when given) to `fleet-upgrade
     * approve ROLLOUT` (docs/access.md). Default none.
     */
    approval: WaveApprovalField.optional(),
    /** The wave's members (first wave only): canaries chosen by name, host, OS... Default: the lowest ids. */
    select: Selection.refine((s) => !isEmptySelection(s), {
      message: 'a canary selection needs at least one criterion',
    }).optional(),
  })
  .refine((w) => w.size !== undefined || w.select !== undefined, {
    path: ['size'],
    message: 'a wave needs a size (only a first wave with select may leave it out)',
  });

const fromObject = WaveObject.transform((value): Wave => {
  const { size, bake, approval, select, analysis } = value;
  return {
    ...(size ? { size } : {}),
    ...(bake === undefined ? {} : { bakeMs: bake }),
    ...(analysis ? { analysis } : {}),
    ...(approval ? { approval } : {}),
    ...(select ? { select } : {}),
  };
});
const fromSize = Size.transform((size): Wave => ({ size }));

/**
 * A wave as written: a size, or an object with a size and what follows it. The form is chosen by
 * the value's type, so that an error in an object names its field with its own message.
 */
export const WaveEntry = z.unknown().transform((value, ctx): Wave => {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const parsed = fromObject.safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) {
      if (issue.code !== 'unrecognized_keys') {
        ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
        continue;
      }
      for (const key of issue.keys) {
        const message = unknownFieldReason(key, Object.keys(WaveObject.shape));
        ctx.addIssue({ code: 'custom', path: [key], message });
      }
    }
    return z.NEVER;
  }
  if (typeof value !== 'number' && typeof value !== 'string') {
    ctx.addIssue({ code: 'custom', message: `${SIZE_HINT}, or {size, bake, analysis, approval}` });
    return z.NEVER;
  }
  const parsed = fromSize.safeParse(value);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues)
    ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  return z.NEVER;
});

/** Only the first wave may carry `select`. */
export function checkWaveSelects(waves: readonly Wave[], ctx: z.RefinementCtx): void {
  waves.forEach((w, i) => {
    if (i > 0 && w.select)
      ctx.addIssue({
        code: 'custom',
        path: [i, 'select'],
        message: 'only the first wave may select its members',
      });
  });
}

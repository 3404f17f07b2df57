/**
 * `status` across organizations: under a rollout's row, one line per organization whose part is
 * not done (name, build, bar, in flight, why it waits), above the table one line per organization
 * whose service has a problem with what ends it, `--org` (focusOrg) and `--wide`. A rollout of
 * the one `default` organization prints exactly as before. Rows are built as `status` builds them
 * (rolloutStatus with the counts per organization and the organizations' problems).
 */
import { describe, expect, it } from 'vitest';
import { focusOrg, scopeToOrgs } from '../../../src/cli/render/focus-org.js';
import { formatStatus } from '../../../src/cli/render/format-status.js';
import {
  breakAfter,
  type OrgProblemView,
  orgProblemLines,
  orgProblemRemedy,
} from '../../../src/cli/render/org-part-lines.js';
import type { OrgProblem, RolloutRecord, StateCounts } from '../../../src/rollout/index.js';
import { rollbackAccounts, rolloutStatus } from '../../../src/rollout/life/index.js';

const NOW = Date.UTC(2026, 10, 25, 12, 0);

function record(fields: Partial<RolloutRecord> & Pick<RolloutRecord, 'id'>): RolloutRecord {
  return {
    policy: fields.id.split('@')[0] as string,
    target: 'latest',
    build: fields.id.split('@')[1] as string,
    phase: 'running',
    startedAt: 0,
    updatedAt: 0,
    maxInFlight: 50,
    settings: {} as RolloutRecord['settings'],
    statusReads: 0,
    createRequests: 0,
    scans: 1,
    wave: { index: 0, seq: 0 },
    canaries: 0,
    ...fields,
  };
}

const sum = (parts: StateCounts[]): StateCounts => {
  const out: Record<string, number> = {};
  for (const p of parts) for (const [k, v] of Object.entries(p)) out[k] = (out[k] ?? 0) + (v ?? 0);
  return out as StateCounts;
};

function problem(org: string, fields: Partial<OrgProblem> = {}): OrgProblemView {
  const p: OrgProblem = {
    kind: 'credentials',
    reason: 'credentials refused (401)',
    since: NOW - 2 * 3600_000,
    lastAt: NOW,
    probes: 2,
    nextProbeAt: NOW + 20_000,
    probe: 'list',
    ...fields,
  };
  return { org, ...p, text: `org ${org}: ...` };
}

/** A rollout over `parts` (organization → counts), with `problems` as the snapshot reads them. */
function spanning(
  fields: Partial<RolloutRecord> & Pick<RolloutRecord, 'id'>,
  parts: Record<string, StateCounts>,
  problems: OrgProblemView[] = [],
) {
  return rolloutStatus(
    record({ orgs: Object.keys(parts), ...fields }),
    sum(Object.values(parts)),
    new Map(Object.entries(parts)),
    new Map(problems.map((p) => [p.org, p])),
  );
}

const fits = (text: string, width = 80) =>
  text.split('\n').filter((line) => line.length > width || line !== line.trimEnd());

describe('one organization named default: exactly as before', () => {
  it('prints no organization line, whether or not the counts per organization are read', () => {
    const counts: StateCounts = { succeeded: 3, queued: 4, progressing: 1 };
    const before = rolloutStatus(record({ id: 'web@19.470-4' }), counts);
    const now = rolloutStatus(record({ id: 'web@19.470-4' }), counts, new Map([['default', counts]]));
    expect(now.byOrg.map((p) => p.org)).toEqual(['default']);
    const text = formatStatus({ rollouts: [now], now: NOW, orgProblems: [] });
    expect(text).toBe(formatStatus({ rollouts: [before], now: NOW }));
    expect(text).not.toMatch(/\borg\b/);
    expect(formatStatus({ rollouts: [now], now: NOW }, { wide: true })).toBe(
      formatStatus({ rollouts: [before], now: NOW }, { wide: true }),
    );
  });
});

describe('several organizations', () => {
  const problems = [problem('emea')];
  const r = spanning(
    {
      id: 'web-fleet@19.470-4',
      builds: { apac: '19.460-2' },
      pausedOrgs: [{ org: 'apac', by: 'ops@host', at: NOW - 3600_000 }],
    },
    {
      staging: { succeeded: 20 },
      us: { succeeded: 50, progressing: 4, queued: 6 },
      emea: { queued: 40 },
      apac: { succeeded: 12, queued: 8 },
    },
    problems,
  );

  it('a line per organization not done, under the combined row: build, bar, in flight, why it waits', () => {
    const text = formatStatus({ rollouts: [r], now: NOW, orgProblems: problems });
    const lines = text.split('\n');
    const row = lines.findIndex((l) => l.startsWith('web-fleet@19.470-4'));
    expect(lines[row]).toMatch(/running\s+\[#####\.\.\.\] 82\/140\s+4\/50\s+82 ok 54 queued/);
    const below = lines.slice(row + 1);
    // staging is done: no line of its own.
    expect(text).not.toMatch(/org staging/);
    expect(below[0]).toBe('  org us    19.470-4  [#######.] 50/60  4 in flight');
    expect(below[1]).toBe('  org emea  19.470-4  [........] 0/40');
    expect(below[2]).toBe('    credentials refused (401) since 10:00 UTC');
    expect(below[3]).toBe('  org apac  19.460-2  [#####...] 12/20');
    expect(below.slice(4, 6).join(' ')).toMatch(
      /^ {4}paused by ops@host at 11:00 UTC — +`fleet-upgrade resume web-fleet@19\.470-4 --org apac` lets it go on$/,
    );
    expect(fits(text)).toEqual([]);
  });

  it('says why it waits on the line itself when that fits', () => {
    const eu = [
      problem('eu', { kind: 'unavailable', reason: 'service unavailable (503)', since: NOW - 60_000 }),
    ];
    const short = spanning({ id: 'w@19.470-4' }, { us: { succeeded: 1 }, eu: { queued: 2 } }, eu);
    const text = formatStatus({ rollouts: [short], now: NOW, orgProblems: eu });
    expect(text.split('\n')).toContain(
      '  org eu  19.470-4  [........] 0/2  service unavailable (503) since 11:59 UTC',
    );
  });

  it('a line per organization with a problem above the table, saying what ends it', () => {
    const both = [
      problem('emea'),
      problem('au', { kind: 'unavailable', reason: 'service unavailable (503)', since: NOW - 60_000 }),
    ];
    const text = formatStatus({ rollouts: [r], now: NOW, orgProblems: both });
    const head = text.slice(0, text.indexOf('ROLLOUT'));
    expect(head.replace(/\s+/g, ' ')).toMatch(
      /^org emea: credentials refused \(401\) since 10:00 UTC; its part of every rollout waits, the other organizations go on — fix its access key .*restart `run` and the workers.* goes on by itself/,
    );
    expect(head.replace(/\s+/g, ' ')).toMatch(
      /org au: service unavailable \(503\) since 11:59 UTC; .* goes on by itself when its service recovers/,
    );
    expect(head.split('\n').filter((l) => l.startsWith('org '))).toHaveLength(2);
    expect(fits(text)).toEqual([]);
    // --wide: the same sentences, one line each.
    const wide = formatStatus({ rollouts: [r], now: NOW, orgProblems: both }, { wide: true });
    expect(
      wide
        .split('\n')
        .slice(0, 2)
        .map((l) => l.slice(0, 9)),
    ).toEqual(['org emea:', 'org au: s']);
  });

  it('each kind of problem names what ends it', () => {
    expect(orgProblemRemedy({ kind: 'credentials', reason: 'credentials refused (401)' })).toMatch(
      /fix its access key/,
    );
    expect(
      orgProblemRemedy({ kind: 'credentials', reason: 'credentials may not manage Collectors (403)' }),
    ).toMatch(/right to manage Collectors/);
    for (const kind of ['unavailable', 'rate_limited', 'malformed', 'unreachable'] as const)
      expect(orgProblemRemedy({ kind, reason: '' })).toMatch(/by itself when its service recovers/);
    expect(orgProblemLines([problem('x', { since: Date.UTC(2026, 10, 24, 9, 5) })], NOW)[0]).toMatch(
      /^org x: credentials refused \(401\) since 2026-11-24 09:05 UTC;/,
    );
  });

  it('--wide: a row per organization not done under the rollout, with a column per state', () => {
    const text = formatStatus({ rollouts: [r], now: NOW, orgProblems: problems }, { wide: true });
    const lines = text.split('\n');
    const us = lines.find((l) => l.startsWith('  org us (19.470-4)')) as string;
    // Phase (none: it does not wait), bar, in flight, queued, waiting_retry, pending, progressing.
    expect(us.trim().split(/\s{2,}/)).toEqual(
      expect.arrayContaining(['org us (19.470-4)', '[#################...]', '83% 50/60', '4', '6']),
    );
    expect(us.slice(0, us.indexOf('[')).trim()).toBe('org us (19.470-4)');
    expect(lines.find((l) => l.startsWith('  org emea'))).toMatch(/^ {2}org emea \(19\.470-4\)\s+waiting\s/);
    expect(lines.find((l) => l.startsWith('  org apac'))).toMatch(/^ {2}org apac \(19\.460-2\)\s+paused\s/);
    expect(text).not.toMatch(/org staging/);
    expect(lines).toContain('web-fleet@19.470-4 org emea: credentials refused (401) since 10:00 UTC');
  });

  it('a converged rollout has no organization line; one not done still does', () => {
    const done = spanning(
      { id: 'x@19.470-4', phase: 'converged' },
      { a: { succeeded: 2 }, b: { failed: 1 } },
    );
    expect(formatStatus({ rollouts: [done], now: NOW })).not.toMatch(/org /);
  });

  it('an organization that waits before any of its Collectors was found shows an empty bar', () => {
    const p = [problem('eu')];
    const r = spanning({ id: 'x@19.470-4' }, { us: { queued: 2 }, eu: {} }, p);
    expect(formatStatus({ rollouts: [r], now: NOW, orgProblems: p }).split('\n')).toContain(
      '  org eu  19.470-4  [........] 0/0  credentials refused (401) since 10:00 UTC',
    );
  });

  it('one organization not named default gets its line', () => {
    const one = spanning({ id: 'x@19.470-4' }, { emea: { succeeded: 1, queued: 1 } });
    expect(formatStatus({ rollouts: [one], now: NOW }).split('\n')).toContain(
      '  org emea  19.470-4  [####....] 1/2',
    );
  });
});

describe('status --org', () => {
  const a = spanning({ id: 'a@19.470-4' }, { us: { succeeded: 5 }, eu: { queued: 3 } });
  const b = spanning({ id: 'b@19.470-4' }, { us: { queued: 2 } });
  // Covers both, but its Collectors are all in us (a canary of us): not eu's (issue #26).
  const c = spanning({ id: 'c@19.470-4' }, { us: { succeeded: 1, queued: 1 }, eu: {} });
  const status = { rollouts: [a, b, c], orgProblems: [problem('eu'), problem('us')] };

  it('keeps the rollouts that cover the organization, and of each only its part', () => {
    const eu = focusOrg(status, 'eu', ['us', 'eu']);
    expect(eu.rollouts.map((r) => r.id)).toEqual(['a@19.470-4']);
    expect(eu.rollouts[0]?.byOrg.map((p) => p.org)).toEqual(['eu']);
    // Its part's counts stand for the rollout's (issue #26: not the whole rollout's 8).
    expect(eu.rollouts[0]).toMatchObject({ total: 3, done: 0, counts: { queued: 3 } });
    expect(eu.orgProblems.map((p) => p.org)).toEqual(['eu']);
    const us = focusOrg(status, 'us', ['us', 'eu']);
    expect(us.rollouts.map((r) => r.id)).toEqual(['a@19.470-4', 'b@19.470-4', 'c@19.470-4']);
    expect(us.rollouts[0]).toMatchObject({ total: 5, done: 5 });
  });

  it('shows the organization’s line even when its part is done', () => {
    const us = focusOrg(status, 'us', []);
    const text = formatStatus({ rollouts: us.rollouts, now: NOW, focusOrg: 'us' });
    expect(text.split('\n')).toContain('  org us  19.470-4  [########] 5/5');
    expect(text).not.toMatch(/org eu/);
  });

  it('refuses an organization nobody names, naming the known ones', () => {
    expect(() => focusOrg(status, 'apac', ['us', 'eu', 'au'])).toThrow(
      /--org: no organization 'apac' \(known: us, eu, au\)/,
    );
  });
});

describe('breakAfter', () => {
  it('puts words after the head while they fit, then on lines of their own; never breaks a command', () => {
    expect(breakAfter('  head', 'one two three', 20)).toEqual(['  head one two three']);
    expect(breakAfter('  head', 'one two three `a b c`', 20, '    ')).toEqual([
      '  head one two three',
      '    `a b c`',
    ]);
    expect(breakAfter('', 'aaa bbb', 4, '  ')).toEqual(['aaa', '  bbb']);
  });
});

describe('scopeToOrgs: what a person of some organizations reads (issue #28)', () => {
  it('sums the parts in scope, withholds the others and their pauses, leaves out rollouts of none', () => {
    const wide = spanning(
      {
        id: 'w@19.470-4',
        pausedOrgs: [
          { org: 'eu', by: 'ada', at: NOW },
          { org: 'au', by: 'ada', at: NOW },
        ],
      },
      { us: { succeeded: 2, progressing: 1 }, eu: { queued: 3, succeeded: 1 }, au: { queued: 9 } },
    );
    const auOnly = spanning({ id: 'au@19.470-4' }, { au: { queued: 2 } });
    const status = { rollouts: [wide, auOnly], orgProblems: [problem('eu'), problem('au')] };
    const seen = scopeToOrgs(status, ['us', 'eu']);
    expect(seen.rollouts.map((r) => r.id)).toEqual(['w@19.470-4']);
    const [r] = seen.rollouts;
    expect(r?.byOrg.map((p) => p.org)).toEqual(['us', 'eu']);
    expect(r).toMatchObject({
      total: 7,
      done: 3,
      inflight: 1,
      counts: { succeeded: 3, progressing: 1, queued: 3 },
    });
    expect(r?.pausedOrgs).toEqual([{ org: 'eu', by: 'ada', at: NOW }]);
    expect(seen.orgProblems.map((p) => p.org)).toEqual(['eu']);
    // Every part in scope: the rollout as it is.
    expect(scopeToOrgs(status, ['us', 'eu', 'au']).rollouts[0]).toBe(wide);
  });

  it('shows only their organizations’ rollbacks, each request’s account recounted over those alone', () => {
    const entry = (org: string, collectors: number) => ({
      request: 'rb-1',
      org,
      policy: `rollback-w-${org}`,
      build: '19.450-12',
      collectors,
      state: 'started' as const,
      at: NOW,
      by: 'ada',
      reason: 'bad build',
    });
    const wide = spanning(
      { id: 'w@19.470-4', rollbacks: [entry('us', 4), entry('eu', 6)] },
      { us: { succeeded: 4 }, eu: { succeeded: 6 } },
    );
    // One rollback rollout per organization: us's all back, eu's two back and four under way.
    const back = (org: string, counts: StateCounts) =>
      spanning({ id: `rollback-w-${org}@19.450-12`, policy: `rollback-w-${org}` }, { [org]: counts });
    const rollouts = [wide, back('us', { succeeded: 4 }), back('eu', { succeeded: 2, progressing: 4 })];
    const byId = new Map(rollouts.map((r) => [r.id, r]));
    const accounts = rollbackAccounts(
      wide.rollbacks ?? [],
      (id) => byId.get(id),
      () => false,
    );
    const whole = { ...wide, rollbackAccounts: accounts };
    expect(accounts[0]).toMatchObject({ requested: 10, back: 6, underWay: 4 });
    const status = { rollouts: [whole, ...rollouts.slice(1)], orgProblems: [] };
    const seen = scopeToOrgs(status, ['eu']).rollouts.find((r) => r.id === 'w@19.470-4');
    expect(seen?.rollbacks?.map((e) => e.org)).toEqual(['eu']);
    expect(seen?.rollbackAccounts).toEqual([
      expect.objectContaining({
        requested: 6,
        back: 2,
        underWay: 4,
        rollouts: [expect.objectContaining({ org: 'eu' })],
      }),
    ]);
    // A rollout whose rollbacks are all another organization's shows none.
    const usOnly = { ...whole, rollbacks: [entry('us', 4)] };
    const none = scopeToOrgs({ rollouts: [usOnly], orgProblems: [] }, ['eu']).rollouts[0];
    expect(none?.rollbacks).toBeUndefined();
    expect(none?.rollbackAccounts).toBeUndefined();
  });
});

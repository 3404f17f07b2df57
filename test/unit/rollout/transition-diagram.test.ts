/**
 * The diagram in src/rollout/collector/transition.ts's header is its transition table, written
 * out: the block between `Every move, by event` and its closing blank line is generated from
 * `TRANSITIONS` (this file's `diagram`; on a failure the expected block is printed to be pasted),
 * and every arrow `a ─event─► b` drawn elsewhere in the header is a row of the table.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COLLECTOR_STATES, type CollectorState, TRANSITIONS } from '../../../src/rollout/collector/index.js';

const FILE = resolve(import.meta.dirname, '../../../src/rollout/collector/transition.ts');
const OPENING =
  ' * Every move, by event (generated from TRANSITIONS: test/unit/rollout/transition-diagram.test.ts):';

const order = (s: CollectorState) => COLLECTOR_STATES.indexOf(s);

/** One line per event and set of targets: `event  from, from ─► to | to`. */
function diagram(): string[] {
  const events = [...new Set(TRANSITIONS.map(([, e]) => e))];
  const width = Math.max(...events.map((e) => e.length)) + 2;
  const lines: string[] = [];
  for (const event of events) {
    const targets = new Map<string, CollectorState[]>(); // from → its targets
    for (const [from, e, to] of TRANSITIONS) {
      if (e !== event) continue;
      const key = from ?? '(new)';
      targets.set(key, [...(targets.get(key) ?? []), to]);
    }
    const byTargets = new Map<string, string[]>(); // targets → the froms that have them
    for (const [from, tos] of targets) {
      const key = [...new Set(tos)].sort((a, b) => order(a) - order(b)).join(' | ');
      byTargets.set(key, [...(byTargets.get(key) ?? []), from]);
    }
    let first = true;
    for (const [tos, froms] of byTargets) {
      lines.push(` *   ${(first ? event : '').padEnd(width)}${froms.join(', ')} ─► ${tos}`);
      first = false;
    }
  }
  return lines;
}

function header(): string {
  const text = readFileSync(FILE, 'utf8');
  return text.slice(0, text.indexOf(' */') + 3);
}

describe('the transition diagram of transition.ts', () => {
  it('is the table, every move, by event', () => {
    const lines = header().split('\n');
    const start = lines.indexOf(OPENING);
    expect(start, `transition.ts's header opens its diagram with:\n${OPENING}`).toBeGreaterThan(0);
    const end = lines.indexOf(' *', start + 2);
    const drawn = lines.slice(start + 2, end);
    const expected = diagram();
    expect(drawn.join('\n'), `the diagram to paste:\n${expected.join('\n')}`).toBe(expected.join('\n'));
  });

  it('names every state', () => {
    const text = header();
    for (const s of COLLECTOR_STATES) expect(text, s).toMatch(new RegExp(`\\b${s}\\b`));
  });

  it('draws only moves of the table elsewhere in the header', () => {
    const rows = new Set(TRANSITIONS.map(([from, e, to]) => `${from ?? ''}|${e}|${to}`));
    const arrows = [...header().matchAll(/([a-z_]+) ─([a-z_]+)─► (?=([a-z_]+))/g)];
    expect(arrows.length).toBeGreaterThan(0);
    for (const [arrow, from, event, to] of arrows) {
      expect(rows.has(`${from}|${event}|${to}`), `${arrow}${to}`).toBe(true);
    }
  });
});

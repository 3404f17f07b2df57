import { describe, expect, it } from 'vitest';
import { renderQuery } from '../../../src/analysis/render-query.js';
import { resolveHeaders } from '../../../src/analysis/resolve-headers.js';

// biome-ignore lint/suspicious/noTemplateCurlyInString: the placeholders of an analysis query, as written in YAML
const [ROLLOUT, POLICY] = ['${rollout}', '${policy}'];

describe('renderQuery', () => {
  it('replaces the placeholders, escaped as PromQL string content', () => {
    expect(
      renderQuery(`x{rollout="${ROLLOUT}", policy="${POLICY}"} / y{rollout="${ROLLOUT}"}`, {
        rollout: 'linux@19.470-4',
        policy: 'linux',
      }),
    ).toEqual({
      ok: true,
      query: 'x{rollout="linux@19.470-4", policy="linux"} / y{rollout="linux@19.470-4"}',
    });
    expect(renderQuery(`x{a="${ROLLOUT}"}`, { rollout: 'a"b\\c' })).toEqual({
      ok: true,
      query: 'x{a="a\\"b\\\\c"}',
    });
    expect(renderQuery('up')).toEqual({ ok: true, query: 'up' });
  });

  it('reports a placeholder without a value instead of sending it', () => {
    expect(renderQuery(`x{a="${ROLLOUT}"}`, {})).toEqual({
      ok: false,
      problem: `the query uses ${ROLLOUT}, which has no value here`,
    });
  });
});

describe('resolveHeaders', () => {
  const files: Record<string, string> = { '/run/token': '  Bearer from-file\n', '/run/empty': '\n' };
  const readFile = (path: string) => {
    const text = files[path];
    if (text === undefined) throw Object.assign(new Error('nope'), { code: 'ENOENT' });
    return text;
  };

  it('reads values from the environment and from files, trimmed', () => {
    expect(
      resolveHeaders(
        [
          { name: 'Authorization', valueFile: '/run/token' },
          { name: 'X-Scope-OrgID', valueEnv: 'TENANT' },
        ],
        { env: { TENANT: ' team-a ' }, readFile },
      ),
    ).toEqual({ ok: true, headers: { Authorization: 'Bearer from-file', 'X-Scope-OrgID': 'team-a' } });
  });

  it('names the header and the source of a missing, empty, unreadable or unfit value, never the value', () => {
    const problem = (header: Parameters<typeof resolveHeaders>[0][number], env = {}) => {
      const r = resolveHeaders([header], { env, readFile });
      return r.ok ? 'ok' : r.problem;
    };
    expect(problem({ name: 'Authorization', valueEnv: 'PROM_AUTH' })).toBe(
      'header Authorization: the environment variable PROM_AUTH is not set or empty',
    );
    expect(problem({ name: 'Authorization', valueFile: '/run/empty' })).toBe(
      'header Authorization: the file /run/empty is empty',
    );
    expect(problem({ name: 'Authorization', valueFile: '/run/missing' })).toBe(
      'header Authorization: cannot read /run/missing (ENOENT)',
    );
    const split = problem({ name: 'Authorization', valueEnv: 'T' }, { T: 'Bearer a\r\nX-Evil: 1' });
    expect(split).toBe(
      'header Authorization: the environment variable T holds characters a header cannot carry',
    );
    expect(split).not.toContain('Evil');
    expect(problem({ name: 'A', valueEnv: 'T' }, { T: 'x'.repeat(9000) })).toMatch(
      /more than 8192 characters/,
    );
  });
});

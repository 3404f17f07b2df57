import { describe, expect, it } from 'vitest';
import { AnalysisGate, type AnalysisGateInput, AnalysisQuery } from '../../../src/policy/analysis.js';

// biome-ignore lint/suspicious/noTemplateCurlyInString: the placeholders of an analysis query, as written in YAML
const [ROLLOUT, POLICY, JOB] = ['${rollout}', '${policy}', '${job}'];
const base = { prometheus: 'http://prometheus:9090', query: 'up', condition: { below: 0.05 } };

/** The issues of an invalid gate as `path: message` lines. */
function issuesOf(input: unknown): string[] {
  const parsed = AnalysisGate.safeParse(input);
  if (parsed.success) throw new Error('expected the gate to be invalid');
  return parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
}

describe('AnalysisGate', () => {
  it('fills the defaults: every minute, 5 measurements, no failure, one inconclusive, 10 s', () => {
    expect(AnalysisGate.parse([base])).toEqual([
      {
        prometheus: 'http://prometheus:9090',
        query: 'up',
        condition: { below: 0.05 },
        interval: 60_000,
        count: 5,
        failureLimit: 0,
        inconclusiveLimit: 1,
        timeout: 10_000,
        headers: [],
      },
    ]);
  });

  it('takes every field, durations in ms, the URL without its trailing slash', () => {
    const input: AnalysisGateInput = [
      {
        name: 'error-share',
        prometheus: 'https://prom.example.com/prometheus/',
        query: `sum(rate(x{rollout="${ROLLOUT}", policy="${POLICY}"}[5m]))`,
        condition: { atLeast: 1, below: 5 },
        interval: '30s',
        count: 10,
        failureLimit: 2,
        inconclusiveLimit: 3,
        timeout: '5s',
        headers: [
          { name: 'Authorization', valueEnv: 'PROM_AUTH' },
          { name: 'X-Scope-OrgID', valueFile: '/run/secrets/tenant' },
        ],
      },
    ];
    const [q] = AnalysisGate.parse(input);
    expect(q).toMatchObject({
      prometheus: 'https://prom.example.com/prometheus',
      interval: 30_000,
      timeout: 5_000,
      count: 10,
      condition: { atLeast: 1, below: 5 },
    });
  });

  it.each([
    ['prometheus: expected an http:// or https:// URL', { ...base, prometheus: 'ftp://x' }],
    ['prometheus: expected an http:// or https:// URL', { ...base, prometheus: 'not a url' }],
    ['prometheus: credentials in the URL are refused', { ...base, prometheus: 'http://u:p@prom:9090' }],
    ['prometheus: expected the base URL of Prometheus', { ...base, prometheus: 'http://prom:9090/?x=1' }],
    ['query: must not be empty', { ...base, query: '  ' }],
    ['query: must be at most 4000 characters', { ...base, query: 'x'.repeat(4001) }],
    [`query: unknown placeholder ${JOB}`, { ...base, query: `up{job="${JOB}"}` }],
    ['condition: give a bound', { ...base, condition: {} }],
    ['condition.atMost: give only one of below and atMost', { ...base, condition: { below: 1, atMost: 2 } }],
    ['condition: no value can meet this condition', { ...base, condition: { above: 5, below: 5 } }],
    ['condition.below: expected a number', { ...base, condition: { below: '5%' } }],
    ['condition: Unrecognized key', { ...base, condition: { under: 1 } }],
    ['interval: expected a duration like 90s, 10m, 2h (a bare number', { ...base, interval: 60 }],
    ['interval: must be at least 1s', { ...base, interval: '500ms' }],
    ['count: must be at least 1', { ...base, count: 0 }],
    ['count: must be a whole number', { ...base, count: 1.5 }],
    ['count: must be above failureLimit + inconclusiveLimit (0 + 1)', { ...base, count: 1 }],
    ['count: must be above', { ...base, count: 3, failureLimit: 2, inconclusiveLimit: 1 }],
    ['timeout: must not be longer than interval', { ...base, timeout: '2m', interval: '1m' }],
    [
      'headers.0.value: an inline header value is refused',
      { ...base, headers: [{ name: 'Authorization', value: 'Bearer x' }] },
    ],
    [
      'headers.0: set exactly one of valueEnv and valueFile',
      { ...base, headers: [{ name: 'Authorization' }] },
    ],
    ['headers.0.name: this header is set by HTTP', { ...base, headers: [{ name: 'Host', valueEnv: 'H' }] }],
    ['headers.0.name: expected a header name', { ...base, headers: [{ name: 'a b', valueEnv: 'H' }] }],
    [
      'headers.1.name: header a is given twice',
      {
        ...base,
        headers: [
          { name: 'A', valueEnv: 'X' },
          { name: 'a', valueEnv: 'Y' },
        ],
      },
    ],
    ['prometheus: required field is missing', { query: 'up', condition: { below: 1 } }],
  ])('refuses with %s', (message, query) => {
    expect(issuesOf([query]).join('\n')).toContain(`0.${message}`);
  });

  it('never repeats an inline header value in its message', () => {
    const issues = issuesOf([{ ...base, headers: [{ name: 'Authorization', value: 'Bearer s3cr3t' }] }]);
    expect(issues.join('\n')).not.toContain('s3cr3t');
  });

  it('refuses an empty list, more than 10 queries and two queries of one name', () => {
    expect(issuesOf([])).toEqual([': list at least one query (or leave analysis out)']);
    expect(issuesOf(Array.from({ length: 11 }, () => base)).join()).toContain('at most 10 queries');
    expect(
      issuesOf([
        { ...base, name: 'a' },
        { ...base, name: 'a' },
      ]),
    ).toEqual(["1.name: another query is named 'a'"]);
  });

  it('allows count 1 when no inconclusive measurement is allowed', () => {
    expect(AnalysisQuery.parse({ ...base, count: 1, inconclusiveLimit: 0 }).count).toBe(1);
  });
});

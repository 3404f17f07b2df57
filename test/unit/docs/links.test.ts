/**
 * The README and docs/*.md: every relative link resolves inside the repository, to a file or a
 * folder, and a `#anchor` to a heading of the file it names (GitHub's heading ids); nothing links
 * out of the repository but http(s) URLs (a `../shared/...` link is dead in a clone); the README
 * stays short (issue 13: about 250 lines, at most 260). Links inside code blocks and code spans
 * are text, not links. The checker itself is shown to catch a dead file, a dead anchor and a
 * link out of the repository, so that a test that passes is not one that looked at nothing.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const README_MAX_LINES = 260;

interface Link {
  target: string;
  line: number;
}

/** The lines of `text` outside fenced code blocks, with code spans blanked; numbered from 1. */
function proseLines(text: string): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [];
  let fence: string | undefined;
  text.split('\n').forEach((raw, i) => {
    const opener = /^\s{0,3}(`{3,}|~{3,})/.exec(raw);
    if (fence) {
      if (opener && opener[1]?.[0] === fence[0] && (opener[1]?.length ?? 0) >= fence.length)
        fence = undefined;
      return;
    }
    if (opener) {
      fence = opener[1];
      return;
    }
    out.push({ text: raw.replace(/(`+)[^`]*?\1/g, ''), line: i + 1 });
  });
  return out;
}

/** Inline links and images `[text](target "title")`, and reference definitions `[x]: target`. */
function markdownLinks(text: string): Link[] {
  const links: Link[] = [];
  for (const { text: line, line: n } of proseLines(text)) {
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+["'(][^)]*)?\)/g))
      links.push({ target: m[1] ?? '', line: n });
    const def = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(line);
    if (def) links.push({ target: def[1] ?? '', line: n });
  }
  return links;
}

/** GitHub's id of a heading: its text lower-cased, punctuation dropped, spaces made dashes. */
function headingSlug(heading: string): string {
  const plain = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/[`*]/g, '') // code and emphasis marks
    .trim()
    .toLowerCase();
  return plain.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** The ids a Markdown file offers: its headings (repeats get -1, -2, ...) and `<a id|name>` anchors. */
function anchorsOf(text: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const raw of text.split('\n')) {
    const opener = /^\s{0,3}(`{3,}|~{3,})/.exec(raw);
    if (fence) {
      if (opener && opener[1]?.[0] === fence[0] && (opener[1]?.length ?? 0) >= fence.length)
        fence = undefined;
      continue;
    }
    if (opener) {
      fence = opener[1];
      continue;
    }
    const heading = /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+\s*)?$/.exec(raw);
    if (heading) {
      const slug = headingSlug(heading[1] ?? '');
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      ids.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const m of raw.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) ids.add(m[1] ?? '');
  }
  return ids;
}

/** What is wrong with each link of `file` (a path inside `root`), as `file:line: target: reason`. */
function deadLinks(root: string, file: string, text: string): string[] {
  const problems: string[] = [];
  const here = dirname(join(root, file));
  for (const { target, line } of markdownLinks(text)) {
    const at = `${file}:${line}: ${target || '(empty)'}`;
    if (/^https?:\/\//i.test(target)) continue;
    if (target === '') {
      problems.push(`${at}: an empty link`);
      continue;
    }
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
      problems.push(`${at}: links out of the repository (only http(s) URLs may)`);
      continue;
    }
    if (target.startsWith('/') || isAbsolute(target)) {
      problems.push(`${at}: an absolute path (write it relative to ${file})`);
      continue;
    }
    const hash = target.indexOf('#');
    const pathPart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
    const anchor = hash < 0 ? undefined : target.slice(hash + 1);
    const resolved = pathPart === '' ? join(root, file) : resolve(here, pathPart);
    const inside = relative(root, resolved);
    if (inside.startsWith('..') || isAbsolute(inside)) {
      problems.push(`${at}: points outside the repository (dead in a clone)`);
      continue;
    }
    if (!existsSync(resolved)) {
      problems.push(`${at}: no such file or folder (${inside})`);
      continue;
    }
    if (anchor === undefined) continue;
    if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) {
      problems.push(`${at}: an anchor into a file that is not Markdown`);
      continue;
    }
    const ids = anchorsOf(pathPart === '' ? text : readFileSync(resolved, 'utf8'));
    if (!ids.has(anchor)) problems.push(`${at}: ${inside} has no heading with the id '${anchor}'`);
  }
  return problems;
}

const docs = readdirSync(join(ROOT, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .sort()
  .map((name) => `docs/${name}`);
const files = ['README.md', ...docs];

describe('links of README.md and docs/', () => {
  it('finds the docs and their links (the check is not looking at nothing)', () => {
    expect(docs.length).toBeGreaterThan(3);
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(markdownLinks(readme).filter((l) => l.target.startsWith('docs/')).length).toBeGreaterThan(5);
  });

  it.each(files)(
    '%s: every relative link resolves, anchors included; nothing else leaves the repository',
    (file) => {
      expect(deadLinks(ROOT, file, readFileSync(join(ROOT, file), 'utf8'))).toEqual([]);
    },
  );

  it(`README.md is at most ${README_MAX_LINES} lines`, () => {
    const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').replace(/\n$/, '').split('\n').length;
    expect(lines).toBeLessThanOrEqual(README_MAX_LINES);
  });
});

describe('the link checker', () => {
  const page = [
    '# Quick start',
    '## What `status` shows',
    '## Redis for `run`, the tests',
    '## Quick start',
    'See [the policy](docs/policy.md), [gone](docs/gone.md), [here](#what-status-shows),',
    '[nowhere](#no-such-heading), [again](#quick-start-1), [redis](#redis-for-run-the-tests),',
    '[shared](../shared/ARCHITECTURE.md), [file](file:///etc/passwd), [web](https://example.com/x),',
    '[abs](/etc/hosts), [ts](src/cli/main.ts#L3), `[code](not-a-link.md)`',
    '```',
    '[in a block](not-a-link-either.md)',
    '```',
    '[ref]: docs/missing.md',
  ].join('\n');

  it('reports dead files and anchors, links out of the repository, and nothing else', () => {
    const problems = deadLinks(ROOT, 'README.md', page);
    expect(problems.map((p) => p.replace(/: [^:]*$/, ''))).toEqual([
      'README.md:5: docs/gone.md',
      'README.md:6: #no-such-heading',
      'README.md:7: ../shared/ARCHITECTURE.md',
      'README.md:7: file:///etc/passwd',
      'README.md:8: /etc/hosts',
      'README.md:8: src/cli/main.ts#L3',
      'README.md:12: docs/missing.md',
    ]);
  });

  it("makes GitHub's heading ids", () => {
    expect(headingSlug("A Collector's states")).toBe('a-collectors-states');
    expect(headingSlug('The client of the Collector Upgrade Service (`src/api`)')).toBe(
      'the-client-of-the-collector-upgrade-service-srcapi',
    );
    expect(headingSlug('Introspection (`/_sim`, no auth, loopback callers only)')).toBe(
      'introspection-_sim-no-auth-loopback-callers-only',
    );
    expect(headingSlug('With Docker Compose: a rehearsal')).toBe('with-docker-compose-a-rehearsal');
  });
});

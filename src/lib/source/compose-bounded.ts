/**
 * yaml's parseDocument with the nesting bounded: the parser and the composer both recurse once
 * per level, so a document nested 100,000 deep would exhaust the stack (or worse) before any
 * error could name its line. Here the depth is checked as the tokens come and again, without
 * recursion, before composing; past MAX_NESTING the file is refused at the offending line.
 */
import { Composer, type CST, type Document, Lexer, type LineCounter, Parser, YAMLParseError } from 'yaml';
import { issueAt, issuesError } from './issues-error.js';
import { MAX_NESTING } from './source-limits.js';

/**
 * The offset of a collection nested deeper than MAX_NESTING in the parser's tokens, found without
 * recursion: composing the document recurses once per level.
 */
function tooDeep(tokens: readonly CST.Token[]): number | undefined {
  const stack: [CST.Token, number][] = tokens.map((token) => [token, 0]);
  for (let next = stack.pop(); next; next = stack.pop()) {
    const [token, depth] = next;
    if (token.type === 'document') {
      if (token.value) stack.push([token.value, depth]);
    } else if (token.type === 'block-map' || token.type === 'block-seq' || token.type === 'flow-collection') {
      if (depth >= MAX_NESTING) return token.offset;
      for (const item of token.items) {
        if (item.key) stack.push([item.key, depth + 1]);
        if (item.value) stack.push([item.value, depth + 1]);
      }
    }
  }
  return undefined;
}

/**
 * The parser's tokens, the nesting bounded as they come: the parser keeps its open collections
 * on `stack` and, when a line closes many at once, recurses once per level (100,000 levels
 * exhaust the stack; a regular expression compiled that deep can even abort the process). So it
 * is fed one lexeme at a time and stopped as soon as it holds more than MAX_NESTING collections
 * (the stack also holds the document and at most one scalar).
 */
function parseTokens(file: string, text: string, counter: LineCounter): CST.Token[] {
  const parser = new Parser(counter.addNewLine);
  counter.addNewLine(0);
  const tokens: CST.Token[] = [];
  for (const lexeme of new Lexer().lex(text)) {
    for (const token of parser.next(lexeme)) tokens.push(token);
    if (parser.stack.length > MAX_NESTING + 2)
      throw issuesError([
        issueAt(file, counter, parser.offset, '', `nested deeper than ${MAX_NESTING} levels`),
      ]);
  }
  for (const token of parser.end()) tokens.push(token);
  return tokens;
}

/** parseDocument, with the nesting bounded before composing and duplicate keys left to the caller. */
export function composeBounded(file: string, text: string, counter: LineCounter): Document.Parsed {
  const tokens = parseTokens(file, text, counter);
  const deep = tooDeep(tokens);
  if (deep !== undefined)
    throw issuesError([issueAt(file, counter, deep, '', `nested deeper than ${MAX_NESTING} levels`)]);
  // uniqueKeys compares each key with every other key of its map: quadratic. The caller's walk uses a set.
  const composer = new Composer({ prettyErrors: false, uniqueKeys: false });
  let doc: Document.Parsed | undefined;
  for (const next of composer.compose(tokens, true, text.length)) {
    if (!doc) doc = next;
    else {
      const range: [number, number] = [next.range[0], next.range[1]];
      doc.errors.push(new YAMLParseError(range, 'MULTIPLE_DOCS', 'Source contains multiple documents'));
      break;
    }
  }
  return doc as Document.Parsed;
}

/**
 * Text from outside on a terminal: `sanitize` leaves no control character (C0 but tab and line
 * feed, DEL, C1, bidi and zero-width formatting) and keeps everything else; `sanitizeLine` makes
 * it one line; `safeJson` escapes them, and parses back to the same value.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { safeJson, sanitize, sanitizeLine } from '../../../src/cli/render/sanitize.js';

const CONTROL =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;

/** Strings rich in the characters that matter: controls, bidi, escapes, plain text. */
const hostile = fc
  .array(
    fc.oneof(
      fc.string(),
      fc.integer({ min: 0, max: 0x9f }).map((c) => String.fromCharCode(c)),
      fc.constantFrom(
        '\u001b[31m',
        '\u001b]8;;https://x/\u0007',
        '\u009b2J',
        '\u202e',
        '\u2066',
        '\u2069',
        '\u200f',
        '\ufeff',
        '\u0085',
        '\t',
        '\n',
      ),
      fc.string({ unit: 'grapheme' }),
    ),
    { maxLength: 20 },
  )
  .map((parts) => parts.join(''));

describe('sanitize', () => {
  it('shows escape sequences, bell, backspace, C1 and bidi controls as ?', () => {
    expect(sanitize('a\u001b[31mb\u0007c\bd\u009be\u202ef\u2066g\u2069h')).toBe('a?[31mb?c?d?e?f?g?h');
    expect(sanitize('web-1.prod\tok\n')).toBe('web-1.prod\tok\n');
    expect(sanitize('Zürich 東京 🚀')).toBe('Zürich 東京 🚀');
  });

  it('never lets a control character through, and changes nothing else', () => {
    fc.assert(
      fc.property(hostile, (text) => {
        const out = sanitize(text);
        expect(out).not.toMatch(CONTROL);
        expect(out.length).toBe(text.length);
        for (let i = 0; i < text.length; i++)
          if (!CONTROL.test(text[i] as string)) expect(out[i]).toBe(text[i]);
      }),
    );
  });
});

describe('sanitizeLine', () => {
  it('gives one line without controls', () => {
    fc.assert(
      fc.property(hostile, (text) => {
        const out = sanitizeLine(text);
        expect(out).not.toMatch(/[\n\r\t\u0085\u2028\u2029]/);
        expect(out).not.toMatch(CONTROL);
      }),
    );
  });
});

describe('safeJson', () => {
  it('escapes what a terminal acts on, and parses back to the same value', () => {
    expect(safeJson({ name: 'x\u009by\u202ez' })).toBe('{"name":"x\\u009by\\u202ez"}');
    fc.assert(
      fc.property(fc.dictionary(hostile, fc.oneof(hostile, fc.integer(), fc.array(hostile))), (value) => {
        const text = safeJson(value, 2);
        expect(text).not.toMatch(
          // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
          /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/,
        );
        expect(JSON.parse(text)).toEqual(value);
      }),
    );
  });
});

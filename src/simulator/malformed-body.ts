/**
 * A 200 answer whose body does not match the interface, as a faulty proxy or a half-deployed
 * service sends them (the `malformed` fault): the JSON cut short, an HTML page in its place, or
 * the same fields with the wrong types (numbers and booleans as strings, an empty list as a
 * string). The status stays 200: a client must judge the body, not only the status.
 */

import type { MalformedShape } from './fault-schema.js';
import type { Answer } from './http-util.js';

const MAINTENANCE_HTML =
  '<!DOCTYPE html><html><head><title>Sumo Logic</title></head><body><h1>We will be right back</h1>' +
  '<p>The service is undergoing maintenance. Please try again in a few minutes.</p></body></html>';

/** The value with each number and boolean written as a string, and each empty list as "[]". */
function mistyped(value: unknown): unknown {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.length === 0 ? '[]' : value.map(mistyped);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mistyped(v)]));
  return value;
}

export function malformedAnswer(answer: Answer, shape: MalformedShape): Answer {
  const { status, headers } = answer;
  switch (shape) {
    case 'truncated': {
      const text = JSON.stringify(answer.body);
      return {
        status,
        headers,
        body: text.slice(0, Math.max(1, Math.floor(text.length / 2))),
        contentType: 'application/json; charset=utf-8',
      };
    }
    case 'html':
      return { status, headers, body: MAINTENANCE_HTML };
    case 'types':
      return { status, headers, body: mistyped(answer.body) };
  }
}

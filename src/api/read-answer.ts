/**
 * Reading a final answer for an operation: a success body through its zod schema (a protocol
 * error naming the field when it does not match), or any other answer as the ApiError its
 * status means, with the vendor's code and request id from either error body shape. A body
 * larger than the transport reads (MAX_ANSWER_BYTES, 8 MiB) is a protocol error, never parsed.
 */
import type { z } from 'zod';
import type { CallSpec } from './api-caller.js';
import { ApiError } from './api-error.js';
import { describeAnswer, errorInfoOf, kindForStatus, nonJsonInfo } from './classify-response.js';
import { type HttpAnswer, MAX_ANSWER_BYTES } from './http-transport.js';
import { describeIssues } from './schema.js';
import { clipText, formatBytes, TEXT_LIMITS } from './untrusted-text.js';

/** A 2xx body parsed with `schema`, or a protocol error naming the field. */
export function parseAnswerBody<S extends z.ZodType>(
  spec: CallSpec,
  answer: HttpAnswer,
  schema: S,
): z.output<S> {
  // A transport of the caller's may not enforce the cap: the text's length stands in for bytes.
  const limit =
    answer.bodyTooLarge?.limitBytes ?? (answer.text.length > MAX_ANSWER_BYTES ? MAX_ANSWER_BYTES : undefined);
  if (limit !== undefined) {
    const why =
      spec.endpoint === 'list' || spec.endpoint === 'inventory'
        ? ' (a listing page this large means the service ignored limit)'
        : '';
    throw new ApiError(
      'protocol',
      `${spec.method} ${spec.path} answered ${answer.status} with a body larger than ${formatBytes(limit)}, more than the client reads${why}`,
      { endpoint: spec.endpoint, status: answer.status },
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(answer.text);
  } catch {
    const info = nonJsonInfo(answer.contentType);
    throw new ApiError('protocol', `${spec.method} ${spec.path} ${describeAnswer(answer.status, info)}`, {
      endpoint: spec.endpoint,
      status: answer.status,
    });
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success)
    throw new ApiError(
      'protocol',
      `${spec.method} ${spec.path} answered ${answer.status} with a body that does not match the interface: ${clipText(describeIssues(parsed.error), TEXT_LIMITS.message)}`,
      { endpoint: spec.endpoint, status: answer.status },
    );
  return parsed.data;
}

/** A final answer that is not the operation's success, as an ApiError of the kind its status says. */
export function answerError(spec: CallSpec, answer: HttpAnswer, attempts: number): ApiError {
  const info = errorInfoOf(answer);
  const kind = kindForStatus(answer.status);
  return new ApiError(
    kind === 'moved' ? 'protocol' : kind,
    `${spec.method} ${spec.path} ${describeAnswer(answer.status, info)}`,
    {
      endpoint: spec.endpoint,
      status: answer.status,
      attempts,
      ...(info.vendorCode ? { vendorCode: info.vendorCode } : {}),
      ...(info.requestId ? { requestId: info.requestId } : {}),
    },
  );
}

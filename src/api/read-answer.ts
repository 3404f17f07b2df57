/**
 * Reading a final answer for an operation: a success body through its zod schema (a protocol
 * error naming the field when it does not match), or any other answer as the ApiError its
 * status means, with the vendor's code and request id from either error body shape.
 */
import type { z } from 'zod';
import type { CallSpec } from './api-caller.js';
import { ApiError } from './api-error.js';
import { describeAnswer, kindForStatus, parseErrorBody } from './classify-response.js';
import type { HttpAnswer } from './http-transport.js';
import { describeIssues } from './schema.js';

/** A 2xx body parsed with `schema`, or a protocol error naming the field. */
export function parseAnswerBody<S extends z.ZodType>(
  spec: CallSpec,
  answer: HttpAnswer,
  schema: S,
): z.output<S> {
  let json: unknown;
  try {
    json = JSON.parse(answer.text);
  } catch {
    const info = parseErrorBody(answer.contentType, answer.text);
    throw new ApiError('protocol', `${spec.method} ${spec.path} ${describeAnswer(answer.status, info)}`, {
      endpoint: spec.endpoint,
      status: answer.status,
    });
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success)
    throw new ApiError(
      'protocol',
      `${spec.method} ${spec.path} answered ${answer.status} with a body that does not match the interface: ${describeIssues(parsed.error)}`,
      { endpoint: spec.endpoint, status: answer.status },
    );
  return parsed.data;
}

/** A final answer that is not the operation's success, as an ApiError of the kind its status says. */
export function answerError(spec: CallSpec, answer: HttpAnswer, attempts: number): ApiError {
  const info = parseErrorBody(answer.contentType, answer.text);
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

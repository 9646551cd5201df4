import { STATUS_CODES } from 'node:http';
import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import type { JsonSchema } from '@app/domain';
import { PROBLEM_CODES } from './problem-codes';

/** RFC 9457 problem details, as apps/api/src/http/problem.ts writes them. */
export const PROBLEM_SCHEMA: JsonSchema = {
  type: 'object',
  description:
    'RFC 9457 problem details. `code` is the stable, machine-readable part of the contract; other members ' +
    '(`fields`, `path`, `line`, `headSeq`, …) are extensions that depend on the code.',
  required: ['type', 'title', 'status', 'code', 'detail'],
  properties: {
    type: { type: 'string', format: 'uri', description: 'https://session-store.dev/problems/{code}', example: 'https://session-store.dev/problems/version_conflict' },
    title: { type: 'string', description: "The status's reason phrase", example: 'Conflict' },
    status: { type: 'integer', minimum: 400, maximum: 599, example: 409 },
    code: { type: 'string', enum: [...PROBLEM_CODES], example: 'version_conflict' },
    detail: { type: 'string', description: 'What went wrong, for a person', example: 'expectedSeq 3 does not match the head 5' },
    instance: { type: 'string', format: 'uri-reference' },
    requestId: { type: 'string', description: 'The X-Request-Id of the request: quote it in a report' },
    retryAfter: { type: 'number', minimum: 0, description: 'Seconds to wait before retrying (also sent as Retry-After) on 429 and 503' },
  },
  additionalProperties: true,
};

/**
 * What any tenant operation may answer: a malformed path, query or header
 * (400), the key (401), a suspended tenant (403), its rate limits (429),
 * and an outage (503) or a bug (500).
 */
export const TENANT_PROBLEMS = [400, 401, 403, 429, 500, 503];
/** The same for the admin API: its token (401), failed-auth throttling (429). */
export const ADMIN_PROBLEMS = [400, 401, 429, 500, 503];

export const PROBLEM_REF = '#/components/schemas/Problem';

const RETRY_AFTER = {
  'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer', minimum: 1 } },
} as const;

/**
 * The problem answers an operation (or every operation of a controller)
 * may give, each as application/problem+json with the shared Problem schema.
 */
export function ProblemResponses(...statuses: number[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: STATUS_CODES[status] ?? 'Error',
        content: { 'application/problem+json': { schema: { $ref: PROBLEM_REF } } },
        ...(status === 429 || status === 503 ? { headers: RETRY_AFTER } : {}),
      }),
    ),
  );
}

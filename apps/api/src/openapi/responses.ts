import { ApiResponse } from '@nestjs/swagger';

export const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

export const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  required: false,
  description: 'A retry with the same key and body answers as the first request did (for IDEMPOTENCY_TTL_HOURS, 24 by default); with another body, 422 idempotency_key_reused',
  schema: { type: 'string', maxLength: 255 },
} as const;

interface JsonResponseOptions {
  description: string;
  /** What the Location header points at (201 and 202 send one). */
  location?: string;
  examples?: Record<string, { summary?: string; value: unknown }>;
}

/** A JSON success answer whose body is the named component schema. */
export function JsonResponse(status: number, schema: string, { description, location, examples }: JsonResponseOptions): MethodDecorator {
  return ApiResponse({
    status,
    description,
    content: { 'application/json': { schema: schemaRef(schema), ...(examples ? { examples } : {}) } },
    ...(location ? { headers: { Location: { description: location, required: true, schema: { type: 'string', format: 'uri-reference' } } } } : {}),
  });
}

/** A success answer that is not JSON (a stream, text, bytes): the contract test checks its status and media type only. */
export function BodyResponse(status: number, mediaType: string, description: string): MethodDecorator {
  return ApiResponse({ status, description, content: { [mediaType]: { schema: { type: 'string' } } } });
}


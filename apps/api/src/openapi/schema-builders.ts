import type { JsonSchema } from '@app/domain';

/** The few JSON Schema builders every part of the OpenAPI document uses. */
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** Every property required except `optional`. */
export const object = (properties: Record<string, JsonSchema>, optional: readonly string[] = [], extra: JsonSchema = {}): JsonSchema => ({
  type: 'object',
  required: Object.keys(properties).filter((key) => !optional.includes(key)),
  properties,
  ...extra,
});

export const openObject: JsonSchema = { type: 'object', additionalProperties: true };

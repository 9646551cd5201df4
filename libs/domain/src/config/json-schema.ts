/**
 * SESSION_CONFIG_SCHEMA as JSON Schema (2020-12, OpenAPI 3.1): the OpenAPI
 * document's config schema comes from the same description that validates
 * configs (collectIssues), so the two cannot drift.
 */
import { FieldSchema, SESSION_CONFIG_SCHEMA } from './schema';

export type JsonSchema = Record<string, unknown>;

/** The JSON Schema of a config patch as collectIssues accepts it: every key optional, unknown keys refused. */
export function fieldToJsonSchema(field: FieldSchema): JsonSchema {
  const object = (fields: Readonly<Record<string, FieldSchema>>, child = fieldToJsonSchema): JsonSchema => ({
    type: 'object',
    properties: Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, child(value)])),
    additionalProperties: false,
  });
  switch (field.kind) {
    case 'boolean':
      return { type: 'boolean' };
    case 'number':
      return { type: field.integer ? 'integer' : 'number', minimum: field.min, maximum: field.max };
    case 'string':
      return { type: 'string', minLength: field.minLength, maxLength: field.maxLength };
    case 'enum':
      return { type: 'string', enum: [...field.values] };
    case 'strings':
      return { type: 'array', maxItems: field.maxItems, items: { type: 'string', maxLength: field.maxLength } };
    case 'object':
      return object(field.fields);
    case 'overrides':
      // `null` drops an override: the model's own limit applies again.
      return object(field.fields, (child) => ({ anyOf: [fieldToJsonSchema(child), { type: 'null' }] }));
    case 'nullable':
      return { anyOf: [fieldToJsonSchema(field.of), { type: 'null' }] };
    case 'tagged':
      // A patch names its type; another type starts from that variant's defaults.
      return {
        type: 'object',
        oneOf: Object.entries(field.variants).map(([type, variant]) => {
          const body = object(variant.fields);
          return { ...body, properties: { type: { const: type }, ...(body.properties as JsonSchema) }, required: ['type'] };
        }),
      };
    case 'oneKey':
      return { oneOf: Object.entries(field.keys).map(([key, child]) => ({ ...object({ [key]: child }), required: [key] })) };
  }
}

/** The session config (POST /v1/sessions `config`, PATCH .../config, tenant defaults): any subset of the settings. */
export const SESSION_CONFIG_JSON_SCHEMA: JsonSchema = {
  ...fieldToJsonSchema(SESSION_CONFIG_SCHEMA),
  description: 'Session settings, any subset: unset keys come from the tenant defaults, then the preset',
};

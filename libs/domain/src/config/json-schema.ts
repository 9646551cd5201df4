/**
 * SESSION_CONFIG_SCHEMA as the OpenAPI document publishes it (JSON Schema
 * 2020-12, OpenAPI 3.1): the same description that validates and merges
 * configs, so the two cannot drift.
 */
import { ANNOTATIONS, SESSION_CONFIG_SCHEMA } from './schema';

export type JsonSchema = Record<string, unknown>;

/** The merge's annotations and ajv's discriminator only serve this service; a client needs neither. */
const UNPUBLISHED = new Set<string>([...ANNOTATIONS, 'discriminator']);

export const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A schema node without what is unpublished; TypeBox writes its options first, the document reads `type` and `properties` first. */
function published(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(published);
  if (!isPlainObject(node)) return node;
  const { type, properties, ...rest } = node;
  const entries = Object.entries({ type, properties, ...rest }).filter(([key, value]) => value !== undefined && !UNPUBLISHED.has(key));
  return Object.fromEntries(
    entries.map(([key, value]) => [
      key,
      key === 'properties' ? Object.fromEntries(Object.entries(value as JsonSchema).map(([name, field]) => [name, published(field)])) : published(value),
    ]),
  );
}

/** The session config (POST /v1/sessions `config`, PATCH .../config, tenant defaults): any subset of the settings. */
export const SESSION_CONFIG_JSON_SCHEMA = published(SESSION_CONFIG_SCHEMA) as JsonSchema;

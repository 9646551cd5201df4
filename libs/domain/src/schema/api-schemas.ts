import { JsonSchema, SESSION_CONFIG_JSON_SCHEMA } from '../config/json-schema';
import { EVENT_SCHEMAS } from './events.schema';

/**
 * Component schemas of the OpenAPI document (`#/components/schemas/<name>`),
 * also what request validation runs on: one description, no parallel copies.
 */
export const API_SCHEMAS: Record<string, JsonSchema> = { ...EVENT_SCHEMAS, SessionConfig: SESSION_CONFIG_JSON_SCHEMA };

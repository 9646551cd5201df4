export type { JsonSchema } from '../config/json-schema';
export { API_SCHEMAS } from './api-schemas';
export { createApiValidator } from './validator';

import Ajv2020, { ValidateFunction } from 'ajv/dist/2020';
import { API_SCHEMAS } from './api-schemas';

const ROOT_ID = 'urn:session-store:api';

/** ajv refuses the discriminator `mapping` the OpenAPI document carries; the oneOf it maps is all ajv needs. */
function withoutMappings(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutMappings);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, child]) => {
      if (key !== 'discriminator') return [key, withoutMappings(child)];
      const { mapping: _mapping, ...rest } = child as { mapping?: unknown };
      return [key, rest];
    }),
  );
}

/** RFC 3339 date-time, as `Date.prototype.toISOString` writes it and clients send it. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/i;

/**
 * An ajv (2020-12, discriminator on) holding every API component: `get(name)`
 * gives the compiled validator of `#/components/schemas/<name>`, compiled on
 * first use and cached by ajv. Errors are verbose (they carry their schema),
 * which costs nothing on valid data.
 */
export function createApiValidator() {
  // Patterns run as plain RegExps, as ID_PATTERN does elsewhere (no `u` flag).
  const ajv = new Ajv2020({ discriminator: true, verbose: true, unicodeRegExp: false, formats: { 'date-time': DATE_TIME } });
  // The components live under `components.schemas`, where the `$ref`s of the OpenAPI document point.
  ajv.addKeyword({ keyword: 'components' });
  ajv.addSchema({ $id: ROOT_ID, components: { schemas: withoutMappings(API_SCHEMAS) } });
  return {
    get(name: string): ValidateFunction {
      const validate = ajv.getSchema(`${ROOT_ID}#/components/schemas/${name}`);
      if (!validate) throw new Error(`no API schema named ${name}`);
      return validate;
    },
  };
}

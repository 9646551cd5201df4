import { API_SCHEMAS, type JsonSchema } from '@app/domain';
import { CONTEXT_MESSAGE_SCHEMAS } from './context-schemas';
import { RESPONSE_SCHEMAS } from './schemas';

/** The providers' own shapes, which keep the providers' names (docs/decisions.md, "Field names"). */
const PROVIDER_SHAPES = new Set([...Object.keys(CONTEXT_MESSAGE_SCHEMAS), 'OpenAIChatUsage', 'OpenAIResponsesUsage', 'AnthropicUsage', 'AiSdkUsage']);

function propertyNames(schema: unknown, into: Set<string>): Set<string> {
  if (Array.isArray(schema)) schema.forEach((item) => propertyNames(item, into));
  else if (schema !== null && typeof schema === 'object') {
    const { properties } = schema as JsonSchema & { properties?: Record<string, unknown> };
    if (properties && typeof properties === 'object') Object.keys(properties).forEach((name) => into.add(name));
    Object.values(schema).forEach((child) => propertyNames(child, into));
  }
  return into;
}

describe('field names of the component schemas', () => {
  it('are camelCase outside the provider shapes, but for the listed exceptions', () => {
    // given every component the service defines itself
    const own = Object.entries({ ...API_SCHEMAS, ...RESPONSE_SCHEMAS }).filter(([name]) => !PROVIDER_SHAPES.has(name));
    // when their property names are collected
    const names = new Set<string>();
    for (const [, schema] of own) propertyNames(schema, names);
    // then the only names that are not camelCase are the documented exceptions
    const notCamel = [...names].filter((name) => !/^[a-z][a-zA-Z0-9]*$/.test(name) && name !== '$ref').sort();
    expect(notCamel).toEqual(['byte_size', 'cache_creation_tokens', 'cache_read_tokens', 'input_tokens', 'line_count', 'output_tokens']);
  });
});

import Ajv2020 from 'ajv/dist/2020';
import fc from 'fast-check';
import { API_SCHEMAS, CONTEXT_FORMATS, type ContextFormat, renderContext, viewAt } from '@app/domain';
import { sessionEventsArbitrary } from '@app/domain/view/testing/arbitraries';
import { TEST_MODEL } from '@app/domain/view/testing/events';
import { CONTEXT_VARIANTS } from './context-schemas';
import { RESPONSE_SCHEMAS } from './schemas';

/** The document's component schemas as one resource, as the e2e contract test loads the served document. */
function validatorFor(format: ContextFormat, property: 'messages' | 'system') {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat('date-time', true).addFormat('uuid', true).addFormat('uri', true).addFormat('uri-reference', true);
  ajv.addSchema({ components: { schemas: { ...API_SCHEMAS, ...RESPONSE_SCHEMAS } } }, 'doc');
  return ajv.compile({ $ref: `doc#/components/schemas/${CONTEXT_VARIANTS[format].name}/properties/${property}` });
}

const errorsOf = (validate: ReturnType<typeof validatorFor>, value: unknown) => (validate(value) ? [] : validate.errors);

describe("the context's component schemas", () => {
  it('have one variant per format, `Context` a oneOf of them by format', () => {
    const context = RESPONSE_SCHEMAS.Context as { oneOf: Array<{ $ref: string }>; discriminator: { propertyName: string; mapping: Record<string, string> } };
    expect(Object.keys(CONTEXT_VARIANTS).sort()).toEqual([...CONTEXT_FORMATS].sort());
    expect(context.discriminator.propertyName).toBe('format');
    for (const format of CONTEXT_FORMATS) {
      const schema = RESPONSE_SCHEMAS[CONTEXT_VARIANTS[format].name] as { properties: { format: { const: string } } };
      expect(schema.properties.format.const).toBe(format);
      expect(context.oneOf).toContainEqual({ $ref: context.discriminator.mapping[format] });
    }
  });

  // Random logs (files, attachments, errors, aborted turns, pruned and archived results, pivots),
  // rendered in every format, with and without Anthropic cache breakpoints.
  it.each([...CONTEXT_FORMATS])('describe every %s render of a random session log', (format) => {
    const messages = validatorFor(format, 'messages');
    const system = CONTEXT_VARIANTS[format].system ? validatorFor(format, 'system') : undefined;
    fc.assert(
      fc.property(
        sessionEventsArbitrary(),
        fc.constantFrom(undefined, '', 'be brief'),
        fc.constantFrom(undefined, '5m' as const, '1h' as const),
        (events, prompt, cacheTtl) => {
          const view = viewAt(events, events.length, { system: prompt, model: TEST_MODEL, options: { pending: 'abort', contextBudgetTokens: 60_000 } });
          const rendered = renderContext(view, format, { cacheTtl });
          expect(errorsOf(messages, 'input' in rendered ? rendered.input : rendered.messages)).toEqual([]);
          if ('system' in rendered && rendered.system !== undefined) expect(errorsOf(system!, rendered.system)).toEqual([]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('tell the formats apart: an item of one format is not a message of another', () => {
    // given an OpenAI Chat tool message and a Responses function_call item
    const chatTool = { role: 'tool', tool_call_id: 'c1', content: 'ok' };
    const responsesCall = { type: 'function_call', call_id: 'c1', name: 'bash', arguments: '{}' };
    // then each passes its own format's schema only
    expect(errorsOf(validatorFor('openai', 'messages'), [chatTool])).toEqual([]);
    expect(errorsOf(validatorFor('openai-responses', 'messages'), [chatTool])).not.toEqual([]);
    expect(errorsOf(validatorFor('openai-responses', 'messages'), [responsesCall])).toEqual([]);
    expect(errorsOf(validatorFor('anthropic', 'messages'), [responsesCall])).not.toEqual([]);
    // and an assistant Responses message with output_text parts (which would need the API's item id) is not one the service sends
    const outputMessage = { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hi', annotations: [] }] };
    expect(errorsOf(validatorFor('openai-responses', 'messages'), [outputMessage])).not.toEqual([]);
  });
});

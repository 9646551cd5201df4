/**
 * An agent loop on Anthropic's Messages API: the context as
 * `format=anthropic` gives `system` and `messages`, unchanged, and the
 * Message goes back to the store whole. Run: see examples/README.md.
 */
import Anthropic from '@anthropic-ai/sdk';
import { runAgent } from './agent';
import { TOOLS } from './tools';

const anthropic = new Anthropic(); // ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
const tools: Anthropic.Tool[] = TOOLS.map(({ name, description, parameters }) => ({ name, description, input_schema: parameters }));

runAgent('anthropic', process.env.ANTHROPIC_MODEL ?? 'claude-sonnet-5-5', {
  format: 'anthropic',
  async call(context) {
    const response = await anthropic.messages.create({ model: context.model, max_tokens: 4096, system: context.system, messages: context.messages, tools });
    return {
      answer: { format: 'anthropic', response },
      text: response.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join(''),
      calls: response.content.flatMap((block) => (block.type === 'tool_use' ? [{ callId: block.id, name: block.name, input: block.input }] : [])),
    };
  },
  results: (results) => ({
    format: 'anthropic',
    messages: [{ role: 'user', content: results.map(({ callId, output, isError }) => ({ type: 'tool_result', tool_use_id: callId, content: output, is_error: isError })) }],
  }),
});

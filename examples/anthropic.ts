/**
 * An agent loop on the Anthropic Messages API: the context as
 * `format=anthropic` gives `system` and `messages`, passed unchanged. Run: see
 * examples/README.md.
 */
import Anthropic from '@anthropic-ai/sdk';
import { runAgent } from './agent';
import { TOOLS } from './tools';

const anthropic = new Anthropic(); // ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
const tools: Anthropic.Tool[] = TOOLS.map(({ name, description, parameters }) => ({ name, description, input_schema: parameters }));

runAgent('anthropic', process.env.ANTHROPIC_MODEL ?? 'claude-sonnet-5-5', async (store, sessionId) => {
  const context = await store.context(sessionId, { format: 'anthropic' });
  const message = await anthropic.messages.create({
    model: context.model,
    max_tokens: 4096,
    system: context.system,
    messages: context.messages,
    tools,
  });
  return {
    contextSeq: context.headSeq,
    text: message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join(''),
    calls: message.content.flatMap((block) => (block.type === 'tool_use' ? [{ callId: block.id, name: block.name, input: block.input }] : [])),
    usage: message.usage,
    finishReason: message.stop_reason ?? undefined,
  };
});

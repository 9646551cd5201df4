/**
 * An agent loop on OpenAI Chat Completions: the context as `format=openai`
 * is the `messages` parameter, unchanged. Run: see examples/README.md.
 */
import OpenAI from 'openai';
import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import { runAgent } from './agent';
import { parseArguments, TOOLS } from './tools';

const openai = new OpenAI(); // OPENAI_API_KEY, OPENAI_BASE_URL
const tools: ChatCompletionFunctionTool[] = TOOLS.map(({ name, description, parameters }) => ({
  type: 'function',
  function: { name, description, parameters, strict: true },
}));

runAgent('openai-chat', process.env.OPENAI_MODEL ?? 'gpt-4.1', async (store, sessionId) => {
  const context = await store.context(sessionId, { format: 'openai' });
  const completion = await openai.chat.completions.create({ model: context.model, messages: context.messages, tools });
  const { message, finish_reason } = completion.choices[0];
  return {
    contextSeq: context.headSeq,
    text: message.content ?? '',
    calls: (message.tool_calls ?? []).flatMap((call) =>
      call.type === 'function' ? [{ callId: call.id, name: call.function.name, input: parseArguments(call.function.arguments) }] : [],
    ),
    usage: completion.usage,
    finishReason: finish_reason,
  };
});

/**
 * An agent loop on OpenAI Chat Completions: the context as `format=openai`
 * is the `messages` parameter, unchanged, and the ChatCompletion goes back to
 * the store whole. Run: see examples/README.md.
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

runAgent('openai-chat', process.env.OPENAI_MODEL ?? 'gpt-4.1', {
  format: 'openai',
  async call(context) {
    const response = await openai.chat.completions.create({ model: context.model, messages: context.messages, tools });
    const { message } = response.choices[0];
    const calls = (message.tool_calls ?? []).flatMap((call) =>
      call.type === 'function' ? [{ callId: call.id, name: call.function.name, input: parseArguments(call.function.arguments) }] : [],
    );
    return { answer: { format: 'openai', response }, text: message.content ?? '', calls };
  },
  results: (results) => ({ format: 'openai', messages: results.map(({ callId, output }) => ({ role: 'tool', tool_call_id: callId, content: output })) }),
});

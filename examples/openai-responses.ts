/**
 * An agent loop on the OpenAI Responses API: the context as
 * `format=openai-responses` is the `input` parameter, unchanged. Stateless:
 * the store, not `previous_response_id`, holds the conversation. Run: see
 * examples/README.md.
 */
import OpenAI from 'openai';
import type { FunctionTool } from 'openai/resources/responses/responses';
import { runAgent } from './agent';
import { parseArguments, TOOLS } from './tools';

const openai = new OpenAI(); // OPENAI_API_KEY, OPENAI_BASE_URL
const tools: FunctionTool[] = TOOLS.map(({ name, description, parameters }) => ({ type: 'function', name, description, parameters, strict: true }));

runAgent('openai-responses', process.env.OPENAI_MODEL ?? 'gpt-4.1', async (store, sessionId) => {
  const context = await store.context(sessionId, { format: 'openai-responses' });
  const response = await openai.responses.create({ model: context.model, input: context.messages, tools, store: false });
  return {
    contextSeq: context.headSeq,
    text: response.output_text,
    calls: response.output.flatMap((item) =>
      item.type === 'function_call' ? [{ callId: item.call_id, name: item.name, input: parseArguments(item.arguments) }] : [],
    ),
    usage: response.usage,
    // The service reads `length` as a reply cut at its limit (a reason to compact).
    finishReason: response.incomplete_details?.reason === 'max_output_tokens' ? 'length' : response.status,
  };
});

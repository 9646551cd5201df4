/**
 * An agent loop on the OpenAI Responses API: the context as
 * `format=openai-responses` is the `input` parameter, unchanged, and the
 * Response goes back to the store whole. Stateless: the store, not
 * `previous_response_id`, holds the conversation. Run: see examples/README.md.
 */
import OpenAI from 'openai';
import type { FunctionTool } from 'openai/resources/responses/responses';
import { runAgent } from './agent';
import { parseArguments, TOOLS } from './tools';

const openai = new OpenAI(); // OPENAI_API_KEY, OPENAI_BASE_URL
const tools: FunctionTool[] = TOOLS.map(({ name, description, parameters }) => ({ type: 'function', name, description, parameters, strict: true }));

runAgent('openai-responses', process.env.OPENAI_MODEL ?? 'gpt-4.1', {
  format: 'openai-responses',
  async call(context) {
    const response = await openai.responses.create({ model: context.model, input: context.messages, tools, store: false });
    const calls = response.output.flatMap((item) =>
      item.type === 'function_call' ? [{ callId: item.call_id, name: item.name, input: parseArguments(item.arguments) }] : [],
    );
    return { answer: { format: 'openai-responses', response }, text: response.output_text, calls };
  },
  results: (results) => ({ format: 'openai-responses', messages: results.map(({ callId, output }) => ({ type: 'function_call_output', call_id: callId, output })) }),
});

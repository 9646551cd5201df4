/**
 * An agent loop on the Vercel AI SDK: the context as `format=ai-sdk` is
 * `generateText`'s `instructions` and `messages`, unchanged, and the result
 * goes back to the store whole (its `response.messages`, `usage` and
 * `finishReason`). Run: see examples/README.md.
 */
import { openai } from '@ai-sdk/openai'; // OPENAI_API_KEY, OPENAI_BASE_URL
import { generateText, jsonSchema, tool, ToolSet } from 'ai';
import { runAgent } from './agent';
import { TOOLS } from './tools';

const tools: ToolSet = Object.fromEntries(
  TOOLS.map(({ name, description, parameters }) => [name, tool({ description, inputSchema: jsonSchema(parameters) })]),
);

runAgent('ai-sdk', process.env.OPENAI_MODEL ?? 'gpt-4.1', {
  format: 'ai-sdk',
  async call(context) {
    const response = await generateText({ model: openai(context.model), instructions: context.system, messages: context.messages, tools });
    return { answer: { format: 'ai-sdk', response }, text: response.text, calls: response.toolCalls.map((call) => ({ callId: call.toolCallId, name: call.toolName, input: call.input })) };
  },
  results: (results) => ({
    format: 'ai-sdk',
    messages: [
      {
        role: 'tool',
        content: results.map(({ callId, name, output, isError }) => ({
          type: 'tool-result',
          toolCallId: callId,
          toolName: name,
          output: { type: isError ? 'error-text' : 'text', value: output },
        })),
      },
    ],
  }),
});

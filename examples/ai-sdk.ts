/**
 * An agent loop on the Vercel AI SDK: the context as `format=ai-sdk` gives
 * `system` and `messages` (ModelMessage[]), passed to generateText unchanged
 * (`system` as its `instructions`).
 * The tools have no `execute`, so each generateText is one step and the loop
 * runs the tools itself. `openai(model)` of @ai-sdk/openai 4 calls the
 * Responses API (`openai.chat(model)` would call Chat Completions); any AI SDK
 * provider works the same. Run: see examples/README.md.
 */
import { openai } from '@ai-sdk/openai'; // OPENAI_API_KEY, OPENAI_BASE_URL
import { generateText, jsonSchema, tool, ToolSet } from 'ai';
import { runAgent } from './agent';
import { TOOLS } from './tools';

const tools: ToolSet = Object.fromEntries(
  TOOLS.map(({ name, description, parameters }) => [name, tool({ description, inputSchema: jsonSchema(parameters) })]),
);

runAgent('ai-sdk', process.env.OPENAI_MODEL ?? 'gpt-4.1', async (store, sessionId) => {
  const context = await store.context(sessionId, { format: 'ai-sdk' });
  const result = await generateText({ model: openai(context.model), instructions: context.system, messages: context.messages, tools });
  return {
    contextSeq: context.headSeq,
    text: result.text,
    calls: result.toolCalls.map((call) => ({ callId: call.toolCallId, name: call.toolName, input: call.input })),
    usage: result.usage,
    finishReason: result.finishReason,
  };
});

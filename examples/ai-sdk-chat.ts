/**
 * A chat on the Vercel AI SDK kept in the session store with
 * `@session-store/ai-sdk`: each turn appends the user's message, then runs
 * the SDK's own tool loop with `prepareStep` feeding every step the store's
 * (compacted) context and saving the step before it, then saves the last
 * step. The first turn runs with `generateText`, the second with
 * `streamText`. Run: see examples/README.md; `node dist/examples/ai-sdk-chat.js [session-id]`
 * continues a session.
 */
import { openai } from '@ai-sdk/openai'; // OPENAI_API_KEY, OPENAI_BASE_URL
import { generateText, jsonSchema, isStepCount, streamText, tool, ToolSet } from 'ai';
import { SessionStoreChat } from '@session-store/ai-sdk';
import { SessionStoreClient } from '@session-store/client';
import { runTool, TOOLS } from './tools';

const tools: ToolSet = Object.fromEntries(
  TOOLS.map(({ name, description, parameters }) => [
    name,
    tool({ description, inputSchema: jsonSchema(parameters), execute: async (input: unknown) => runTool(name, input).output }),
  ]),
);

async function main(): Promise<void> {
  const apiKey = process.env.SESSION_STORE_KEY;
  if (!apiKey) throw new Error('SESSION_STORE_KEY is not set (a tenant API key)');
  const client = new SessionStoreClient({ baseUrl: process.env.SESSION_STORE_URL ?? 'http://127.0.0.1:3000', apiKey });
  const model = openai(process.env.OPENAI_MODEL ?? 'gpt-4.1');
  const sessionId = process.argv[2] ?? (await client.createSession({ model: model.modelId, system: 'You are a careful coding agent.' })).id;
  const chat = new SessionStoreChat({ client, sessionId });

  await chat.addMessages([{ role: 'user', content: 'Run the tests of packages/client.' }]);
  const result = await generateText({ model, tools, stopWhen: isStepCount(5), ...(await chat.load()), prepareStep: chat.prepareStep });
  await chat.saveSteps(result.steps);
  console.log(`generateText: ${result.steps.length} steps: ${JSON.stringify(result.text)}`);

  await chat.addMessages([{ role: 'user', content: 'Now check build.log.' }]);
  const stream = streamText({ model, tools, stopWhen: isStepCount(5), ...(await chat.load()), prepareStep: chat.prepareStep });
  let text = '';
  for await (const delta of stream.textStream) text += delta;
  const steps = await stream.steps;
  await chat.saveSteps(steps);
  console.log(`streamText: ${steps.length} steps: ${JSON.stringify(text)}`);
  console.log(`session ${sessionId}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

// A LangGraph graph whose threads live in the session store (packages/langgraph/README.md).
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { SessionStoreClient } from '@session-store/client';
import { SessionStoreSaver } from '@session-store/langgraph';

const client = new SessionStoreClient({ baseUrl: process.env.SESSION_STORE_URL ?? 'http://127.0.0.1:3000', apiKey: process.env.SESSION_STORE_KEY ?? '' });
const graph = new StateGraph(MessagesAnnotation)
  // A stub model: it counts what the thread has heard, all of it read back from the session store.
  .addNode('model', ({ messages }) => ({ messages: [new AIMessage(`Heard ${messages.filter((m) => m.type === 'human').length} message(s)`)] }))
  .addEdge(START, 'model')
  .compile({ checkpointer: new SessionStoreSaver({ client }) });

async function main() {
  const config = { configurable: { thread_id: 'chat-1' } };
  await graph.invoke({ messages: [new HumanMessage('Hi')] }, config);
  const { messages } = await graph.invoke({ messages: [new HumanMessage('Again')] }, config);
  console.log(messages.map((message) => message.text).join(' | '));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

import type { LanguageModelUsage, ModelMessage } from 'ai';
import { SessionStoreClient } from '@session-store/client';
import { SessionStoreChat } from './chat';

/**
 * The helpers' requests, against a stand-in of the two routes they use
 * (`GET …/context`, `POST …/messages`) behind the client's `fetch` option:
 * which step is appended when, with what `contextSeq`. The SDK and the
 * service themselves run in test/ai-sdk-adapter.e2e-spec.ts.
 */
function standIn() {
  const appended: unknown[] = [];
  let headSeq = 2;
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const { pathname } = new URL(request.url);
    if (request.method === 'GET' && pathname === '/v1/sessions/s1/context') {
      const context = { format: 'ai-sdk', model: 'gpt-4.1', system: 'Be brief.', messages: [{ role: 'user', content: `at ${headSeq}` }], headSeq };
      return Response.json({ ...context, tokens: {}, pivotSeq: null, atSeq: null, pendingToolCalls: [], repairs: {}, compaction: {}, fitted: null });
    }
    if (request.method === 'POST' && pathname === '/v1/sessions/s1/messages') {
      appended.push(await request.json());
      headSeq += 3;
      return Response.json({ headSeq, events: [] }, { status: 201 });
    }
    return Response.json({ type: 'about:blank', title: 'Not Found', status: 404, code: 'not_found', detail: pathname }, { status: 404 });
  };
  return { appended, client: new SessionStoreClient({ baseUrl: 'http://store.test', apiKey: 'sk_test', fetch, retries: 0 }) };
}

const usage = (inputTokens: number | undefined, outputTokens: number | undefined): LanguageModelUsage => ({
  inputTokens,
  inputTokenDetails: { noCacheTokens: inputTokens, cacheReadTokens: undefined, cacheWriteTokens: undefined },
  outputTokens,
  outputTokenDetails: { textTokens: outputTokens, reasoningTokens: undefined },
  totalTokens: inputTokens === undefined || outputTokens === undefined ? undefined : inputTokens + outputTokens,
});

function step(text: string, stepUsage: LanguageModelUsage) {
  const messages: Array<Extract<ModelMessage, { role: 'assistant' }>> = [{ role: 'assistant', content: text }];
  return { response: { id: text, timestamp: new Date(0), modelId: 'gpt-4.1', messages }, usage: stepUsage, finishReason: 'stop' as const };
}

describe('SessionStoreChat', () => {
  it('prepareStep saves the steps before the current one, each once, with the head of the context it was sent', async () => {
    const { appended, client } = standIn();
    const chat = new SessionStoreChat({ client, sessionId: 's1' });
    const first = step('one', usage(10, 2));
    const second = step('two', usage(12, 3));

    expect(await chat.prepareStep({ steps: [] })).toEqual({ instructions: 'Be brief.', messages: [{ role: 'user', content: 'at 2' }] });
    expect(appended).toEqual([]);
    expect(await chat.prepareStep({ steps: [first] })).toEqual({ instructions: 'Be brief.', messages: [{ role: 'user', content: 'at 5' }] });
    await chat.saveSteps([first, second]);
    await chat.saveStep(second);

    const sent = (s: ReturnType<typeof step>, contextSeq: number) => ({
      format: 'ai-sdk',
      response: { response: { messages: s.response.messages }, usage: JSON.parse(JSON.stringify(s.usage)), finishReason: 'stop' },
      contextSeq,
    });
    expect(appended).toEqual([sent(first, 2), sent(second, 5)]);
  });

  it('saves a step whose provider reported no token counts as its messages alone', async () => {
    const { appended, client } = standIn();
    const chat = new SessionStoreChat({ client, sessionId: 's1' });
    await chat.addMessages([{ role: 'user', content: 'hi' }]);
    await chat.saveStep(step('answer', usage(undefined, undefined)));
    expect(appended).toEqual([
      { format: 'ai-sdk', messages: [{ role: 'user', content: 'hi' }] },
      { format: 'ai-sdk', messages: [{ role: 'assistant', content: 'answer' }] },
    ]);
  });
});

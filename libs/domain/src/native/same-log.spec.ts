import fc from 'fast-check';
import { Message } from '../events';
import { renderAiSdk, renderAnthropic, renderOpenAIChat, renderOpenAIResponses } from '../view/render';
import { CARRIED_BY_ALL, conversationArbitrary } from '../view/testing/conversations';
import { NativeFormat, nativeAppendRequest } from './native-append';

/** A conversation as each format's client holds it: the request it would send its SDK. */
const asSent: Record<NativeFormat, (messages: Message[]) => unknown> = {
  openai: (messages) => renderOpenAIChat({ messages }),
  'openai-responses': (messages) => renderOpenAIResponses({ messages }),
  anthropic: (messages) => renderAnthropic({ messages }),
  'ai-sdk': (messages) => {
    const { system, messages: rest } = renderAiSdk({ messages });
    return system === undefined ? rest : [{ role: 'system', content: system }, ...rest];
  },
};

const formats = Object.keys(asSent) as NativeFormat[];

describe('native append: the neutral log is the same whichever format wrote it', () => {
  it('given any conversation of what every format carries, when each format appends it as its SDK holds it, then the same events', () => {
    fc.assert(
      fc.property(conversationArbitrary(CARRIED_BY_ALL), (conversation) => {
        // when
        const [first, ...rest] = formats.map((format) => nativeAppendRequest({ format, messages: asSent[format](conversation) }).events);
        // then
        for (const events of rest) expect(events).toEqual(first);
        expect(first).toEqual(conversation.map(({ role, parts }) => ({ type: 'message.added', data: { message: { role, parts } } })));
      }),
      { numRuns: 300 },
    );
  });
});

import fc from 'fast-check';
import { Message, StoredEvent } from '../../events';
import { viewAt } from '../model-view';
import { renderAiSdk, renderAnthropic, renderOpenAIChat, renderOpenAIResponses, RenderableView } from '../render';
import { sessionEventsArbitrary } from '../testing/arbitraries';
import { CARRIED_BY_FORMAT, conversationArbitrary } from '../testing/conversations';
import { TEST_MODEL } from '../testing/events';
import { PendingMode } from '../types';
import { parseAiSdk, parseAnthropic, parseOpenAIChat, parseOpenAIResponses } from '.';
import { NativeMessage } from './native-message';

const runs = { numRuns: 500 };

/** A format's render and parse, kept apart per format so each parse gets its own render's type. */
function format<R>(name: keyof typeof CARRIED_BY_FORMAT, render: (view: RenderableView) => R, parse: (rendered: R) => NativeMessage[]) {
  return { name, carried: CARRIED_BY_FORMAT[name], render, renderAndParse: (view: RenderableView) => parse(render(view)) };
}

const formats = [
  format('openai', renderOpenAIChat, parseOpenAIChat),
  format('openai-responses', renderOpenAIResponses, parseOpenAIResponses),
  format('anthropic', (view) => renderAnthropic(view), parseAnthropic),
  format('ai-sdk', renderAiSdk, parseAiSdk),
];

/** Parsed messages as a view to render again: ids are the renders' to ignore, a nameless result's name the append's to fill. */
function viewOfParsed(messages: NativeMessage[]): RenderableView {
  return {
    messages: messages.map(({ role, parts }, i) => ({
      id: `parsed${i}`,
      role,
      parts: parts.map((part) => (part.type === 'tool_result' ? { ...part, name: part.name ?? '' } : part)),
    })),
  };
}

const withoutIds = (messages: Message[]): NativeMessage[] => messages.map(({ role, parts }) => ({ role, parts }));

const viewAtHead = (events: StoredEvent[], pending: PendingMode, contextBudgetTokens: number, system?: string) =>
  viewAt(events, events.length, { system, model: TEST_MODEL, options: { pending, contextBudgetTokens } });

describe.each(formats)('parse $name (random conversations)', ({ render, renderAndParse, carried }) => {
  it('given any session log, when its render is parsed and rendered again, then the second render equals the first', () => {
    fc.assert(
      fc.property(
        sessionEventsArbitrary(),
        fc.constantFrom<PendingMode>('abort', 'omit'),
        fc.constantFrom(20, 60_000),
        fc.constantFrom(undefined, '', 'be brief'),
        (events, pending, budget, system) => {
          // given
          const view = viewAtHead(events, pending, budget, system);
          // when
          const again = render(viewOfParsed(renderAndParse(view)));
          // then
          expect(again).toEqual(render(view));
        },
      ),
      runs,
    );
  });

  it('given a conversation of what the format carries, when rendered and parsed back, then the same messages without ids', () => {
    fc.assert(
      fc.property(conversationArbitrary(carried), (messages) => {
        // when
        const parsed = renderAndParse({ messages });
        // then
        expect(parsed).toEqual(withoutIds(messages));
      }),
      runs,
    );
  });
});

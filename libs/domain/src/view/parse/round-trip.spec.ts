import fc from 'fast-check';
import { FilePart, Message, StoredEvent } from '../../events';
import { viewAt } from '../model-view';
import { renderAiSdk, renderAnthropic, renderOpenAIChat, renderOpenAIResponses, RenderableView } from '../render';
import { sessionEventsArbitrary } from '../testing/arbitraries';
import { Carried, conversationArbitrary } from '../testing/conversations';
import { TEST_MODEL } from '../testing/events';
import { PendingMode } from '../types';
import { parseAiSdk, parseAnthropic, parseOpenAIChat, parseOpenAIResponses } from '.';
import { NativeMessage } from './native-message';

const runs = { numRuns: 500 };

const pngData: FilePart = { type: 'file', mediaType: 'image/png', data: 'aGVsbG8=' };
const pngUrl: FilePart = { type: 'file', mediaType: 'image/png', url: 'https://example.test/shot.png' };
const pdfData: FilePart = { type: 'file', mediaType: 'application/pdf', data: 'JVBERi0=' };
const pdfUrl: FilePart = { type: 'file', mediaType: 'application/pdf', url: 'https://example.test/spec.pdf' };
const named = (file: FilePart, filename: string): FilePart => ({ ...file, filename });

/** Each format with a parse, and what it carries unchanged (see each parser's comment for the rest). */
const formats: Array<{ name: string; render: (view: RenderableView) => unknown; parse: (rendered: never) => NativeMessage[]; carried: Carried }> = [
  {
    name: 'openai',
    render: renderOpenAIChat,
    parse: parseOpenAIChat,
    carried: { files: [pngData, pngUrl, named(pdfData, 'spec.pdf')], reasoning: false, errors: false },
  },
  {
    name: 'openai-responses',
    render: renderOpenAIResponses,
    parse: parseOpenAIResponses,
    carried: { files: [pngData, pngUrl, named(pdfData, 'spec.pdf'), pdfUrl], reasoning: false, errors: false },
  },
  {
    name: 'anthropic',
    render: (view) => renderAnthropic(view),
    parse: parseAnthropic,
    carried: { files: [pngData, pngUrl, pdfData, pdfUrl], reasoning: false, errors: true },
  },
  {
    name: 'ai-sdk',
    render: renderAiSdk,
    parse: parseAiSdk,
    carried: { files: [named(pngData, 'shot.png'), named(pdfData, 'spec.pdf'), pngUrl, pdfUrl], reasoning: true, errors: true },
  },
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

describe.each(formats)('parse $name (random conversations)', ({ render, parse, carried }) => {
  it('given any session log, when its render is parsed and rendered again, then the second render equals the first', () => {
    fc.assert(
      fc.property(
        sessionEventsArbitrary(),
        fc.constantFrom<PendingMode>('abort', 'omit'),
        fc.constantFrom(20, 60_000),
        fc.constantFrom(undefined, '', 'be brief'),
        (events, pending, budget, system) => {
          // given
          const first = render(viewAtHead(events, pending, budget, system));
          // when
          const second = render(viewOfParsed(parse(first as never)));
          // then
          expect(second).toEqual(first);
        },
      ),
      runs,
    );
  });

  it('given a conversation of what the format carries, when rendered and parsed back, then the same messages without ids', () => {
    fc.assert(
      fc.property(conversationArbitrary(carried), (messages) => {
        // when
        const parsed = parse(render({ messages }) as never);
        // then
        expect(parsed).toEqual(withoutIds(messages));
      }),
      runs,
    );
  });
});

import fc from 'fast-check';
import { StoredEvent } from '../events';
import { buildModelView, latestPivot, viewAt } from './model-view';
import { renderToolOutputTools } from '../tool-output';
import { renderAnthropic, renderContext, renderOpenAIChat, renderOpenAIResponses, withToolsBreakpoint } from './render';
import { HIDDEN_MARKER, sessionEventsArbitrary } from './testing/arbitraries';
import { TEST_MODEL } from './testing/events';
import { PendingMode } from './types';
import { validateAnthropicRequest, validateOpenAIChatMessages, validateOpenAIResponsesInput } from './validate';

const runs = { numRuns: 1_000 };
const logs = sessionEventsArbitrary();
const pending = fc.constantFrom<PendingMode>('abort', 'omit');
/** Small enough that the generated 400-char outputs get trimmed now and then. */
const budget = fc.constantFrom(20, 200, 60_000);
const system = fc.constantFrom(undefined, '', 'be brief', ' ');

const viewAtHead = (events: StoredEvent[], mode: PendingMode, contextBudgetTokens: number, prompt?: string) =>
  viewAt(events, events.length, { system: prompt, model: TEST_MODEL, options: { pending: mode, contextBudgetTokens } });

describe('model view properties (random session logs)', () => {
  it('every anthropic render passes the Anthropic validator', () => {
    fc.assert(
      fc.property(logs, pending, budget, system, (events, mode, b, prompt) => {
        expect(validateAnthropicRequest(renderAnthropic(viewAtHead(events, mode, b, prompt)))).toEqual([]);
      }),
      runs,
    );
  });

  it('every anthropic render with cache breakpoints passes the validator (at most four, in place)', () => {
    fc.assert(
      fc.property(logs, pending, budget, system, fc.constantFrom('5m' as const, '1h' as const), (events, mode, b, prompt, cacheTtl) => {
        const request = renderAnthropic(viewAtHead(events, mode, b, prompt), { cacheTtl });
        expect(validateAnthropicRequest({ ...request, tools: withToolsBreakpoint(renderToolOutputTools('anthropic'), cacheTtl) })).toEqual([]);
      }),
      runs,
    );
  });

  it('every openai render passes the OpenAI validator', () => {
    fc.assert(
      fc.property(logs, pending, budget, system, (events, mode, b, prompt) => {
        expect(validateOpenAIChatMessages(renderOpenAIChat(viewAtHead(events, mode, b, prompt)))).toEqual([]);
      }),
      runs,
    );
  });

  it('every openai-responses render passes the Responses validator', () => {
    fc.assert(
      fc.property(logs, pending, budget, system, (events, mode, b, prompt) => {
        expect(validateOpenAIResponsesInput(renderOpenAIResponses(viewAtHead(events, mode, b, prompt)))).toEqual([]);
      }),
      runs,
    );
  });

  it('hidden messages never appear, in any format', () => {
    fc.assert(
      fc.property(logs, pending, (events, mode) => {
        const view = viewAtHead(events, mode, 60_000);
        for (const format of ['neutral', 'openai', 'openai-responses', 'anthropic'] as const) {
          expect(JSON.stringify(renderContext(view, format))).not.toContain(HIDDEN_MARKER);
        }
      }),
      runs,
    );
  });

  it('the view at seq k equals the view computed from the first k events alone', () => {
    const logAndSeq = logs.chain((events) => fc.tuple(fc.constant(events), fc.nat({ max: events.length })));
    fc.assert(
      fc.property(logAndSeq, pending, ([events, k], mode) => {
        const input = { system: 'sys', model: TEST_MODEL, options: { pending: mode, contextBudgetTokens: 200 } };
        const firstK = events.slice(0, k);
        expect(viewAt(events, k, input)).toEqual(buildModelView({ ...input, pivot: latestPivot(firstK), events: firstK }));
      }),
      runs,
    );
  });
});

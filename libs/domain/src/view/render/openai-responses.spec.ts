// Type-only imports, in a spec: prove the rendered items compile against the SDK the clients use.
// eslint-disable-next-line no-restricted-imports
import type { EasyInputMessage, ResponseCreateParamsNonStreaming, ResponseInputItem } from 'openai/resources/responses/responses';
import { FilePart } from '../../events';
import { assistant, call, result, tool, user, viewOf } from '../testing/events';
import { validateOpenAIResponsesInput } from '../validate';
import { ANTHROPIC_OPENING_TEXT } from './anthropic';
import { renderOpenAIResponses, ResponsesInputItem } from './openai-responses';

// Every item the renderer can emit, not only those of one example, is an SDK input item (a
// compile-time check: `npm run typecheck` fails if the type drifts from the SDK's).
type Assignable<A, B> = [A] extends [B] ? true : false;
const everyItemIsAnSdkItem: Assignable<ResponsesInputItem, ResponseInputItem> = true;
const assistantIsAnEasyInputMessage: Assignable<Extract<ResponsesInputItem, { role: 'assistant' }>, EasyInputMessage> = true;

const image: FilePart = { type: 'file', mediaType: 'image/png', url: 'https://example.test/shot.png' };

describe('renderOpenAIResponses', () => {
  it('renders messages, function_call and function_call_output items', () => {
    const view = viewOf(
      [
        user('u1', 'list'),
        assistant('a1', { type: 'reasoning', text: 'hmm' }, 'listing', call('c1', 'ls', { dir: '/' })),
        tool('t1', result('c1', 'a b')),
        assistant('a2', 'done'),
      ],
      { system: 'be brief' },
    );
    // Typed as the SDK's input and request params, with no cast: the shape compiles against the real client.
    const items = renderOpenAIResponses(view) satisfies ResponseInputItem[];
    const request = { model: 'gpt-5.4', input: items, store: false } satisfies ResponseCreateParamsNonStreaming;
    expect(items).toEqual([
      { type: 'message', role: 'system', content: [{ type: 'input_text', text: 'be brief' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'list' }] },
      { type: 'message', role: 'assistant', content: 'listing' },
      { type: 'function_call', call_id: 'c1', name: 'ls', arguments: '{"dir":"/"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'a b' },
      { type: 'message', role: 'assistant', content: 'done' },
    ]);
    expect(validateOpenAIResponsesInput(request.input)).toEqual([]);
    expect(everyItemIsAnSdkItem && assistantIsAnEasyInputMessage).toBe(true);
  });

  // The openai SDK (openai@7, resources/responses/responses.d.ts) types an assistant message in the
  // input either as `EasyInputMessage` (string or input_* parts) or as `ResponseOutputMessage`
  // (output_text parts, with the `id` and `status` of an item the API made; unknown ids are refused
  // when store is false). The API refuses input_* parts on assistant messages, so: string content.
  it('renders assistant text as EasyInputMessages with string content, one per part, with no id', () => {
    // given an assistant turn with text, a file and more text
    const file: FilePart = { type: 'file', mediaType: 'image/png', url: 'https://example.test/a.png', filename: 'a.png' };
    const view = viewOf([user('u1', 'draw'), assistant('a1', 'here', file, 'and more', call('c1', 'draw'))]);
    // when
    const assistantItems = renderOpenAIResponses(view).filter((item) => item.type === 'message' && item.role === 'assistant');
    // then: each part its own message, in order, the file as its note, and no item carries an id
    expect(assistantItems).toEqual([
      { type: 'message', role: 'assistant', content: 'here' },
      { type: 'message', role: 'assistant', content: expect.stringContaining('a.png') },
      { type: 'message', role: 'assistant', content: 'and more' },
    ]);
    for (const item of renderOpenAIResponses(view)) expect(item).not.toHaveProperty('id');
  });

  it('carries result attachments in the output item', () => {
    const items = renderOpenAIResponses(viewOf([assistant('a1', call('c1')), tool('t1', result('c1', 'shot', { attachments: [image] }))]));
    expect(items[1]).toEqual({
      type: 'function_call_output',
      call_id: 'c1',
      output: [
        { type: 'input_text', text: 'shot' },
        { type: 'input_image', image_url: 'https://example.test/shot.png', detail: 'auto' },
      ],
    });
  });

  it('emits no item for a message with nothing to send', () => {
    expect(renderOpenAIResponses(viewOf([user('u1', ''), assistant('a1', { type: 'reasoning', text: 'hmm' }), user('u2', 'next')]))).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'next' }] },
    ]);
  });

  it('never sends an empty input: an empty view opens with one user item', () => {
    const items = renderOpenAIResponses(viewOf([user('u1', ''), assistant('a1', { type: 'reasoning', text: 'hmm' })]));
    expect(items).toEqual([{ type: 'message', role: 'user', content: [{ type: 'input_text', text: ANTHROPIC_OPENING_TEXT }] }]);
    expect(validateOpenAIResponsesInput(items)).toEqual([]);
    expect(validateOpenAIResponsesInput([])).toEqual(["Invalid 'input': empty array. Expected an array with minimum length 1."]);
  });
});

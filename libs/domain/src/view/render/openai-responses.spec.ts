import { FilePart } from '../../events';
import { assistant, call, result, tool, user, viewOf } from '../testing/events';
import { validateOpenAIResponsesInput } from '../validate';
import { ANTHROPIC_OPENING_TEXT } from './anthropic';
import { renderOpenAIResponses } from './openai-responses';

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
    const items = renderOpenAIResponses(view);
    expect(items).toEqual([
      { type: 'message', role: 'system', content: [{ type: 'input_text', text: 'be brief' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'list' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'listing', annotations: [] }] },
      { type: 'function_call', call_id: 'c1', name: 'ls', arguments: '{"dir":"/"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'a b' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'done', annotations: [] }] },
    ]);
    expect(validateOpenAIResponsesInput(items)).toEqual([]);
  });

  // The openai SDK (openai@6, resources/responses/responses.d.ts, `ResponseOutputText`) declares
  // `annotations` required on every output_text part; strict Responses backends reject a part without it.
  it('gives every output_text part annotations: [], file notes included', () => {
    // given an assistant turn with text and a file
    const file: FilePart = { type: 'file', mediaType: 'image/png', url: 'https://example.test/a.png', filename: 'a.png' };
    const view = viewOf([user('u1', 'draw'), assistant('a1', 'here', file, 'and more')]);
    // when
    const parts = renderOpenAIResponses(view).flatMap((item) => (item.type === 'message' && item.role === 'assistant' ? item.content : []));
    // then
    expect(parts).toHaveLength(3);
    for (const part of parts) expect(part).toEqual({ type: 'output_text', text: expect.any(String), annotations: [] });
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

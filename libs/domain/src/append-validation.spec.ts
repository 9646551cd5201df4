import { parseAppendBatch, parseClientEvent, ID_PATTERN } from './append-validation';
import { CLIENT_EVENT_TYPES, EVENT_TYPES } from './events';
import { errorOf } from './testing/expect-domain-error';

/** Deterministic ids for events the client left without one. */
function idSource() {
  let n = 0;
  const next = jest.fn(() => `gen-${++n}`);
  return next;
}

const parse = (body: unknown, maxEvents = 100) => parseAppendBatch(body, idSource(), maxEvents);
const codeOf = (body: unknown) => errorOf(() => parse(body)).code;

const userText = (text: string, extra: Record<string, unknown> = {}) => ({
  type: 'message.added',
  data: { message: { role: 'user', parts: [{ type: 'text', text }] } },
  ...extra,
});
const withMessage = (message: Record<string, unknown>) => ({ events: [{ type: 'message.added', data: { message } }] });
const withPart = (role: string, part: Record<string, unknown>) => withMessage({ role, parts: [part] });

describe('parseAppendBatch: the envelope', () => {
  it('parses a batch, keeps client ids and generates the missing ones in order', () => {
    // given one event with an id and two without
    const newId = idSource();
    const body = { expectedSeq: 3, events: [userText('a', { id: 'evt-1' }), userText('b'), userText('c')] };
    // when
    const batch = parseAppendBatch(body, newId, 100);
    // then
    expect(batch.expectedSeq).toBe(3);
    expect(batch.events.map((e) => e.id)).toEqual(['evt-1', 'gen-1', 'gen-2']);
    expect(newId).toHaveBeenCalledTimes(2);
    // the message id defaults to its event id
    expect(batch.events[1]).toEqual({
      id: 'gen-1',
      type: 'message.added',
      data: { message: { id: 'gen-1', role: 'user', parts: [{ type: 'text', text: 'b' }] } },
    });
  });

  it('leaves expectedSeq out when the client did, and accepts 0 (a session before any event)', () => {
    expect(parse({ events: [userText('a')] })).not.toHaveProperty('expectedSeq');
    expect(parse({ expectedSeq: 0, events: [userText('a')] }).expectedSeq).toBe(0);
  });

  it.each([
    ['negative', -1],
    ['fractional', 1.5],
    ['a numeric string', '1'],
    ['null', null],
    ['beyond 2^53', 2 ** 53],
    ['a boolean', true],
  ])('refuses an expectedSeq that is %s', (_, expectedSeq) => {
    const error = errorOf(() => parse({ expectedSeq, events: [userText('a')] }));
    expect(error.code).toBe('invalid_field');
    expect(error.details).toEqual({ path: '$.expectedSeq' });
  });

  it.each([
    ['an array', [userText('a')]],
    ['null', null],
    ['a string', 'events'],
    ['undefined (no body)', undefined],
  ])('refuses a body that is %s', (_, body) => {
    expect(codeOf(body)).toBe('invalid_field');
  });

  it.each([
    ['missing', {}],
    ['empty', { events: [] }],
    ['not an array', { events: { 0: userText('a') } }],
  ])('refuses events %s', (_, body) => {
    expect(codeOf(body)).toBe('invalid_field');
  });

  it('refuses more events than the limit, and accepts exactly the limit', () => {
    const events = (k: number) => Array.from({ length: k }, (_, i) => userText(`m${i}`));
    expect(parse({ events: events(3) }, 3).events).toHaveLength(3);
    const error = errorOf(() => parse({ events: events(4) }, 3));
    expect(error.code).toBe('too_many_events');
    expect(error.details).toMatchObject({ max: 3 });
  });

  it.each(['tenantId', 'seq', 'sessionId', '__proto__'])('refuses an unknown top-level field %s (mass assignment)', (field) => {
    // JSON.parse makes "__proto__" an own key, which is how it reaches us from body-parser
    const body = JSON.parse(JSON.stringify({ events: [userText('a')] }).replace(/^\{/, `{"${field}": 1,`));
    const error = errorOf(() => parse(body));
    expect(error.code).toBe('unknown_field');
    expect(error.details).toEqual({ path: `$.${field}` });
  });

  it('refuses an event id repeated within the batch', () => {
    const error = errorOf(() => parse({ events: [userText('a', { id: 'x' }), userText('b', { id: 'x' })] }));
    expect(error.code).toBe('duplicate_event_id');
    expect(error.details).toEqual({ path: '$.events[1].id' });
  });

  it('validates every event before returning: a bad last event fails the whole batch', () => {
    const error = errorOf(() => parse({ events: [userText('a'), userText('b'), { type: 'nope', data: {} }] }));
    expect(error.details).toEqual({ path: '$.events[2].type' });
  });
});

describe('parseClientEvent: types and ids', () => {
  it.each(['foo.bar', '', 'MESSAGE.ADDED', 42, undefined])('refuses the unknown event type %p', (type) => {
    const error = errorOf(() => parseClientEvent({ type, data: {} }, '$.e', idSource()));
    expect(error.code).toBe('unknown_event_type');
  });

  const serviceOnly = EVENT_TYPES.filter((t) => !CLIENT_EVENT_TYPES.includes(t));

  it.each(serviceOnly)('refuses the service-only type %s from a client', (type) => {
    const error = errorOf(() => parseClientEvent({ type, data: {} }, '$.e', idSource()));
    expect(error.code).toBe('reserved_event_type');
  });

  it('has service-only types to refuse (guards the table above from going empty)', () => {
    expect(serviceOnly).toEqual(expect.arrayContaining(['session.created', 'compaction.completed', 'tool_outputs.pruned']));
  });

  it('refuses pins through the raw append: they go through POST .../pins, which checks the budget under the session lock', () => {
    expect(serviceOnly).toEqual(expect.arrayContaining(['pin.added', 'pin.removed']));
    const error = errorOf(() => parseClientEvent({ type: 'pin.added', data: { pinId: 'p1', text: 'x' } }, '$.e', idSource()));
    expect(error.code).toBe('reserved_event_type');
  });

  it("takes a step's contextSeq (the headSeq of the context the call was sent with), a non-negative integer", () => {
    const step = (contextSeq: unknown) => ({ type: 'step.finished', data: { usage: { input_tokens: 1, output_tokens: 1 }, contextSeq } });
    expect(parseClientEvent(step(12), '$.e', idSource()).data).toEqual({ usage: { input_tokens: 1, output_tokens: 1 }, contextSeq: 12 });
    for (const bad of [-1, 1.5, '12', null]) expect(errorOf(() => parseClientEvent(step(bad), '$.e', idSource())).details).toEqual({ path: '$.e.data.contextSeq' });
  });

  it.each(['seq', 'tenantId', 'createdAt', 'sessionId'])('refuses a server-assigned field %s on an event', (field) => {
    const error = errorOf(() => parseClientEvent({ ...userText('a'), [field]: 1 }, '$.e', idSource()));
    expect(error.code).toBe('unknown_field');
  });

  it.each([
    ['a leading dot', '.x'],
    ['a slash', 'a/b'],
    ['a space', 'a b'],
    ['an empty string', ''],
    ['129 characters', 'a'.repeat(129)],
    ['non-ASCII', 'été'],
    ['a NUL', 'a\u0000'],
    ['a number', 7],
  ])('refuses an event id with %s', (_, id) => {
    const error = errorOf(() => parseClientEvent(userText('a', { id }), '$.e', idSource()));
    expect(['invalid_id', 'invalid_field']).toContain(error.code);
    expect(error.details).toMatchObject({ path: '$.e.id' });
  });

  it('accepts the widest legal id', () => {
    const id = `A${'z._:~-9'.repeat(18)}`.slice(0, 128);
    expect(id).toMatch(ID_PATTERN);
    expect(parseClientEvent(userText('a', { id }), '$.e', idSource()).id).toBe(id);
  });
});

describe('parseClientEvent: messages and parts', () => {
  it.each(['robot', 'developer', '', 'USER', undefined])('refuses the unknown role %p', (role) => {
    expect(codeOf(withMessage({ role, parts: [{ type: 'text', text: 'x' }] }))).toBe('unknown_role');
  });

  it('refuses a message without parts, or with an empty list', () => {
    expect(codeOf(withMessage({ role: 'user' }))).toBe('invalid_field');
    expect(codeOf(withMessage({ role: 'user', parts: [] }))).toBe('invalid_field');
  });

  it('refuses a message.added without a message', () => {
    expect(codeOf({ events: [{ type: 'message.added', data: {} }] })).toBe('invalid_field');
    expect(codeOf({ events: [{ type: 'message.added' }] })).toBe('invalid_field');
  });

  it.each([
    ['an unknown part type', 'user', { type: 'video', url: 'x' }],
    ['a tool call from the user', 'user', { type: 'tool_call', callId: 'c', name: 'n', input: {} }],
    ['a tool result from the assistant', 'assistant', { type: 'tool_result', callId: 'c', output: 'x' }],
    ['text in a tool message', 'tool', { type: 'text', text: 'x' }],
    ['a file in a system message', 'system', { type: 'file', mediaType: 'image/png', url: 'https://x' }],
    ['a part without a type', 'user', { text: 'x' }],
  ])('refuses %s', (_, role, part) => {
    expect(codeOf(withPart(role, part))).toBe('invalid_part');
  });

  it('accepts each role with its parts', () => {
    const batch = parse({
      events: [
        { type: 'message.added', data: { message: { role: 'system', parts: [{ type: 'text', text: 's' }] } } },
        {
          type: 'message.added',
          data: { message: { role: 'user', parts: [{ type: 'text', text: 'u' }, { type: 'file', mediaType: 'image/png', data: 'iVBO' }] } },
        },
        {
          type: 'message.added',
          data: {
            message: {
              role: 'assistant',
              parts: [
                { type: 'reasoning', text: 'r' },
                { type: 'tool_call', callId: 'c1', name: 'read', input: { path: 'a' } },
              ],
            },
          },
        },
        { type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId: 'c1', output: 'o', isError: false }] } } },
      ],
    });
    expect(batch.events.map((e) => e.type === 'message.added' && e.data.message.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    // a result without a name gets '' here; the ledger fills it from the call
    expect(batch.events[3]).toMatchObject({ data: { message: { parts: [{ type: 'tool_result', callId: 'c1', name: '', output: 'o', isError: false }] } } });
  });

  it.each([
    ['an extra key on a text part', { type: 'text', text: 'x', html: '<b>' }, 'unknown_field'],
    ['a non-string text', { type: 'text', text: 5 }, 'invalid_field'],
    ['a file with both url and data', { type: 'file', mediaType: 'image/png', url: 'https://x', data: 'AA' }, 'invalid_part'],
    ['a file with neither url nor data', { type: 'file', mediaType: 'image/png' }, 'invalid_part'],
    ['a file without a media type', { type: 'file', url: 'https://x' }, 'invalid_field'],
  ])('refuses %s', (_, part, code) => {
    expect(codeOf(withPart('user', part))).toBe(code);
  });

  it.each([
    ['no input', { type: 'tool_call', callId: 'c', name: 'n' }, 'invalid_part'],
    ['a bad call id', { type: 'tool_call', callId: 'c d', name: 'n', input: {} }, 'invalid_id'],
    ['an empty name', { type: 'tool_call', callId: 'c', name: '', input: {} }, 'invalid_field'],
    ['a 257-character name', { type: 'tool_call', callId: 'c', name: 'n'.repeat(257), input: {} }, 'field_too_long'],
  ])('refuses a tool call with %s', (_, part, code) => {
    expect(codeOf(withPart('assistant', part))).toBe(code);
  });

  it.each([
    ['neither output nor outputRef', { type: 'tool_result', callId: 'c' }, 'invalid_part'],
    ['both output and outputRef', { type: 'tool_result', callId: 'c', output: 'x', outputRef: { id: 'r1' } }, 'invalid_part'],
    ['an outputRef with client-chosen sizes', { type: 'tool_result', callId: 'c', outputRef: { id: 'r1', byte_size: 1 } }, 'unknown_field'],
    ['attachments that are not an array', { type: 'tool_result', callId: 'c', output: 'x', attachments: {} }, 'invalid_field'],
    ['a non-boolean isError', { type: 'tool_result', callId: 'c', output: 'x', isError: 'yes' }, 'invalid_field'],
  ])('refuses a tool result with %s', (_, part, code) => {
    expect(codeOf(withPart('tool', part))).toBe(code);
  });

  it('sizes of a referenced output are server-assigned (zero until the store fills them)', () => {
    const batch = parse(withPart('tool', { type: 'tool_result', callId: 'c', outputRef: { id: 'r1' } }));
    expect(batch.events[0]).toMatchObject({ data: { message: { parts: [{ outputRef: { id: 'r1', byte_size: 0, line_count: 0 } }] } } });
  });

  it('checks routing metadata types but keeps extra metadata keys', () => {
    expect(codeOf(withMessage({ role: 'user', parts: [{ type: 'text', text: 'x' }], metadata: { agentVisible: 'no' } }))).toBe('invalid_field');
    expect(codeOf(withMessage({ role: 'user', parts: [{ type: 'text', text: 'x' }], metadata: { kind: 'k'.repeat(65) } }))).toBe('field_too_long');
    const batch = parse(withMessage({ role: 'user', parts: [{ type: 'text', text: 'x' }], metadata: { agentVisible: false, trace: 't1' } }));
    expect(batch.events[0]).toMatchObject({ data: { message: { metadata: { agentVisible: false, trace: 't1' } } } });
  });

  it('refuses unknown keys on the message and on its data', () => {
    expect(codeOf(withMessage({ role: 'user', parts: [{ type: 'text', text: 'x' }], seq: 1 }))).toBe('unknown_field');
    expect(codeOf({ events: [{ type: 'message.added', data: { message: { role: 'user', parts: [{ type: 'text', text: 'x' }] }, extra: 1 } }] })).toBe(
      'unknown_field',
    );
  });
});

describe('parseClientEvent: the other client events', () => {
  const one = (event: Record<string, unknown>) => parse({ events: [event] }).events[0];

  it('record.added keeps any JSON value under its kind', () => {
    // given a framework's checkpoint as a record
    const value = { id: 'ckpt-1', channels: { messages: [{ role: 'user', content: 'hi' }] }, parent: null };
    // when / then
    expect(one({ type: 'record.added', data: { kind: 'langgraph.checkpoint', value } }).data).toEqual({ kind: 'langgraph.checkpoint', value });
  });

  it.each([
    ['without a value', { kind: 'x' }],
    ['without a kind', { value: 1 }],
    ['with a kind that is not an id', { kind: 'two words', value: 1 }],
    ['with an unknown key', { kind: 'x', value: 1, at: 2 }],
  ])('record.added is refused %s', (_, data) => {
    expect(['invalid_field', 'unknown_field', 'invalid_id']).toContain(codeOf({ events: [{ type: 'record.added', data }] }));
  });

  it('step.finished keeps usage counts and the finish reason', () => {
    const usage = { input_tokens: 10, output_tokens: 2, cache_creation_tokens: 0, cache_read_tokens: 5 };
    expect(one({ type: 'step.finished', data: { usage, finishReason: 'tool_calls' } }).data).toEqual({ usage, finishReason: 'tool_calls' });
  });

  it.each([
    ['a negative count', { input_tokens: -1, output_tokens: 0 }],
    ['a fractional count', { input_tokens: 1.5, output_tokens: 0 }],
    ['a missing output count', { input_tokens: 1 }],
    ['an unknown counter', { input_tokens: 1, output_tokens: 1, total: 2 }],
  ])('step.finished refuses usage with %s', (_, usage) => {
    expect(['invalid_field', 'unknown_field']).toContain(codeOf({ events: [{ type: 'step.finished', data: { usage } }] }));
  });

  it.each([
    ['Chat Completions', { prompt_tokens: 1830, completion_tokens: 41, total_tokens: 1871, prompt_tokens_details: { cached_tokens: 1536, audio_tokens: 0 } }],
    ['Responses', { input_tokens: 1830, input_tokens_details: { cached_tokens: 1536 }, output_tokens: 41, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 1871 }],
    ['Anthropic', { input_tokens: 294, output_tokens: 41, cache_creation_input_tokens: null, cache_read_input_tokens: 1536, service_tier: 'standard' }],
    ['AI SDK', { inputTokens: 1830, inputTokenDetails: { noCacheTokens: 294, cacheReadTokens: 1536 }, outputTokens: 41, outputTokenDetails: {}, totalTokens: 1871 }],
  ])('step.finished takes a %s usage object whole and stores it in the service fields', (_, usage) => {
    // given a provider usage as its SDK returns it, when appended
    const event = one({ type: 'step.finished', data: { usage, finishReason: 'tool_calls' } });
    // then the event carries the same measurement in the service's fields
    expect(event.data).toEqual({ usage: { input_tokens: 294, output_tokens: 41, cache_read_tokens: 1536 }, finishReason: 'tool_calls' });
  });

  it.each([
    ['a misspelt service field', { input_tokens: 1, output_tokens: 1, cache_read_token: 2 }, 'unknown_field', '$.events[0].data.usage.cache_read_token'],
    ['a negative Anthropic count', { input_tokens: -1, output_tokens: 1, cache_creation_input_tokens: null, cache_read_input_tokens: 0 }, 'invalid_field', '$.events[0].data.usage.input_tokens'],
    ['Chat usage without completion_tokens', { prompt_tokens: 5 }, 'invalid_field', '$.events[0].data.usage.completion_tokens'],
    ['AI SDK usage without inputTokens', { inputTokenDetails: {}, outputTokens: 3 }, 'usage_incomplete', '$.events[0].data.usage.inputTokens'],
  ])('step.finished refuses %s with the code and path of the shape its fields name', (_, usage, code, path) => {
    const error = errorOf(() => parse({ events: [{ type: 'step.finished', data: { usage } }] }));
    expect({ code: error.code, path: error.details.path }).toEqual({ code, path });
  });

  it('compaction.requested from a client is always manual: auto and reason cannot be set', () => {
    expect(one({ type: 'compaction.requested', data: { instructions: 'keep the plan' } }).data).toEqual({
      auto: false,
      reason: 'manual',
      instructions: 'keep the plan',
    });
    expect(codeOf({ events: [{ type: 'compaction.requested', data: { auto: true } }] })).toBe('unknown_field');
  });

  it('turn.aborted and context.overflowed take optional bounded strings', () => {
    expect(one({ type: 'turn.aborted' }).data).toEqual({ reason: undefined });
    expect(one({ type: 'context.overflowed', data: { error: 'context_length_exceeded' } }).data).toEqual({ error: 'context_length_exceeded' });
    expect(codeOf({ events: [{ type: 'turn.aborted', data: { reason: 'r'.repeat(4097) } }] })).toBe('field_too_long');
  });
});

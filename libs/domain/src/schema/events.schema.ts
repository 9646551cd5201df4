/**
 * The event log's wire shapes as JSON Schema (2020-12, OpenAPI 3.1
 * components), the one description from which both the append validator
 * (append-validation.ts) and the OpenAPI document come. `New*` schemas are
 * what a client appends; the others are events as the service returns them
 * (GET .../events, the event stream), mirroring the types in events.ts.
 */
import { CLIENT_EVENT_TYPES, EVENT_TYPES, EventType, Part, Role, ROLES } from '../events';
import { JsonSchema } from '../config/json-schema';
import { ID_PATTERN } from './ids';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** A oneOf over components, discriminated on `propertyName` with the OpenAPI mapping (stripped for ajv, which refuses it). */
function union(propertyName: string, variants: Readonly<Record<string, string>>): JsonSchema {
  const mapping = Object.fromEntries(Object.entries(variants).map(([tag, name]) => [tag, ref(name).$ref]));
  return { type: 'object', oneOf: Object.values(variants).map(ref), discriminator: { propertyName, mapping } };
}

function object(properties: Readonly<Record<string, JsonSchema>>, required: readonly string[], extra: JsonSchema = {}): JsonSchema {
  return { type: 'object', properties, required, additionalProperties: false, ...extra };
}

const id = (description: string) => ({ type: 'string', pattern: ID_PATTERN.source, description });
const count = (description?: string) => ({ type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, ...(description ? { description } : {}) });
const text = (maxLength?: number, description?: string) => ({
  type: 'string',
  ...(maxLength !== undefined ? { maxLength } : {}),
  ...(description ? { description } : {}),
});
const tag = (value: string) => ({ const: value });

// ---- message parts (shared by what is appended and what is returned, except tool results)

const textLike = (type: 'text' | 'reasoning', description: string) =>
  object({ type: tag(type), text: { type: 'string' } }, ['type', 'text'], { description });

const FilePart = object(
  {
    type: tag('file'),
    mediaType: { type: 'string', minLength: 1, maxLength: 255, examples: ['image/png'] },
    url: text(8192),
    data: text(undefined, 'Small inline content, base64'),
    filename: text(1024),
  },
  ['type', 'mediaType'],
  { description: 'Media or a document: exactly one of `url` or inline base64 `data`', oneOf: [{ required: ['url'] }, { required: ['data'] }] },
);

const ToolCallPart = object(
  {
    type: tag('tool_call'),
    callId: id('Unique within the session; its tool_result names it'),
    name: { type: 'string', minLength: 1, maxLength: 256 },
    input: { description: "The tool's arguments: any JSON value" },
  },
  ['type', 'callId', 'name', 'input'],
);

const ToolOutputRef = object(
  {
    id: { type: 'string' },
    byte_size: count(),
    line_count: count(),
    sha256: { type: 'string' },
  },
  ['id', 'byte_size', 'line_count'],
  { description: 'The whole output, kept in the tool-output store (GET /v1/tool-outputs/{refId})' },
);

const toolResultCommon = {
  type: tag('tool_result'),
  isError: { type: 'boolean' },
  attachments: { type: 'array', items: ref('FilePart'), description: 'Media the tool returned (screenshots...)' },
};

const NewToolResultPart = object(
  {
    ...toolResultCommon,
    callId: id('The tool_call this answers'),
    name: text(256, "The tool's name; filled from the call when left out"),
    output: text(undefined, 'The whole output (stored aside when large; the view keeps a truncated copy)'),
    outputRef: object({ id: id('A ref from POST /v1/sessions/{id}/tool-outputs') }, ['id'], {
      description: 'An output uploaded beforehand; its sizes are filled by the service',
    }),
  },
  ['type', 'callId'],
  { description: 'Exactly one of `output` or `outputRef`', oneOf: [{ required: ['output'] }, { required: ['outputRef'] }] },
);

const ToolResultPart = object(
  {
    ...toolResultCommon,
    callId: { type: 'string' },
    name: { type: 'string' },
    output: text(undefined, 'The in-context view of the output (possibly truncated)'),
    outputRef: ref('ToolOutputRef'),
    truncated: { type: 'boolean' },
  },
  ['type', 'callId', 'name', 'output'],
);

const PART_SCHEMAS: Record<Part['type'], string> = {
  text: 'TextPart',
  reasoning: 'ReasoningPart',
  file: 'FilePart',
  tool_call: 'ToolCallPart',
  tool_result: 'ToolResultPart',
};

/** The parts each role may append (the view relies on it: e.g. only the assistant calls tools). */
export const ALLOWED_PARTS: Readonly<Record<Role, readonly Part['type'][]>> = {
  system: ['text'],
  user: ['text', 'file'],
  assistant: ['text', 'reasoning', 'file', 'tool_call'],
  tool: ['tool_result'],
};

// ---- messages

const MessageMetadata = {
  type: 'object',
  properties: {
    agentVisible: { type: 'boolean', description: 'false: kept out of the model context' },
    userVisible: { type: 'boolean', description: 'false: hidden from user-facing renderings' },
    kind: text(64),
  },
  additionalProperties: true,
  description: 'Routing flags (unset means visible) and any other keys, kept as given',
};

const capitalized = (role: Role) => `${role[0].toUpperCase()}${role.slice(1)}`;
const newMessageName = (role: Role) => `New${capitalized(role)}Message`;

const newMessage = (role: Role) =>
  object(
    {
      id: id('Defaults to the event id'),
      role: tag(role),
      parts: {
        type: 'array',
        minItems: 1,
        items: union(
          'type',
          Object.fromEntries(ALLOWED_PARTS[role].map((type) => [type, type === 'tool_result' ? 'NewToolResultPart' : PART_SCHEMAS[type]])),
        ),
      },
      metadata: ref('MessageMetadata'),
    },
    ['role', 'parts'],
  );

const Message = object(
  {
    id: { type: 'string' },
    role: { type: 'string', enum: [...ROLES] },
    parts: { type: 'array', items: ref('Part') },
    metadata: ref('MessageMetadata'),
  },
  ['id', 'role', 'parts'],
);

const Usage = object(
  {
    input_tokens: count("Prompt tokens outside the cache, as Anthropic counts them (OpenAI's prompt_tokens - cached_tokens)"),
    output_tokens: count(),
    cache_creation_tokens: count('Prompt tokens written to the provider cache'),
    cache_read_tokens: count("Prompt tokens read from the provider cache (OpenAI's cached_tokens)"),
  },
  ['input_tokens', 'output_tokens'],
  { description: "The provider's token counts for one model call" },
);

/**
 * What a client may send as a step's usage: the service's fields, or a
 * provider's usage object passed whole, in its own names (usage.ts maps it;
 * the log stores `Usage`). Each provider variant requires the fields only it
 * has, and is open: SDKs add fields (service tiers, audio, server tools,
 * output details), which are accepted and not stored.
 */
const tokens = { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER };
const nullableTokens = { type: ['integer', 'null'], minimum: 0, maximum: Number.MAX_SAFE_INTEGER };
const cacheDetails = { type: 'object', properties: { cached_tokens: tokens, cache_write_tokens: tokens } };
const providerUsage = (properties: Record<string, JsonSchema>, required: string[], description: string): JsonSchema => ({
  type: 'object',
  properties,
  required,
  description,
});
const USAGE_VARIANTS: Record<string, JsonSchema> = {
  OpenAIChatUsage: providerUsage(
    { prompt_tokens: tokens, completion_tokens: tokens, total_tokens: tokens, prompt_tokens_details: cacheDetails },
    ['prompt_tokens', 'completion_tokens'],
    "A Chat Completions `usage` (`CompletionUsage`), as returned; prompt_tokens counts the cached tokens too",
  ),
  OpenAIResponsesUsage: providerUsage(
    { input_tokens: tokens, output_tokens: tokens, total_tokens: tokens, input_tokens_details: cacheDetails },
    ['input_tokens', 'output_tokens', 'input_tokens_details'],
    'A Responses API `usage` (`ResponseUsage`), as returned; input_tokens counts the cached tokens too',
  ),
  AnthropicUsage: providerUsage(
    { input_tokens: tokens, output_tokens: tokens, cache_creation_input_tokens: nullableTokens, cache_read_input_tokens: nullableTokens },
    ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'],
    "A Messages API `usage`, as returned; input_tokens leaves out cache reads and writes",
  ),
  AiSdkUsage: providerUsage(
    {
      inputTokens: tokens,
      outputTokens: tokens,
      totalTokens: tokens,
      inputTokenDetails: { type: 'object', properties: { noCacheTokens: tokens, cacheReadTokens: tokens, cacheWriteTokens: tokens } },
      cachedInputTokens: tokens,
    },
    ['inputTokenDetails'],
    "The Vercel AI SDK's `usage` (`LanguageModelUsage`), as returned; inputTokens and outputTokens must be there (400 usage_incomplete)",
  ),
};
const NewUsage: JsonSchema = {
  oneOf: [ref('Usage'), ...Object.keys(USAGE_VARIANTS).map(ref)],
  description: "The service's fields, or the provider's usage object passed whole; stored as `Usage`",
};

// ---- event data

const STEP_FIELDS = {
  finishReason: text(64, '`length` or `max_tokens` (a reply cut at its limit) makes the session a compaction candidate'),
  contextSeq: count(
    'The headSeq of the context the call was sent with (GET .../context reports it); without it, the last event the client ' +
      'itself appended before the step. Usage measured before the latest compaction, prune or archive is not trusted',
  ),
};

const seq = count();
const strings = { type: 'array', items: { type: 'string' } };
const openObject = { type: 'object', additionalProperties: true };
const COMPACTION_REASONS = ['threshold', 'manual', 'overflow', 'finish_length', 'cache_cold'];

const DATA: Record<EventType, JsonSchema> = {
  'session.created': object({ model: { type: 'string' }, system: { type: 'string' }, config: ref('SessionConfig'), metadata: openObject }, [
    'model',
    'config',
    'metadata',
  ]),
  'message.added': object({ message: ref('Message') }, ['message']),
  'step.finished': object(
    {
      usage: ref('Usage'),
      ...STEP_FIELDS,
    },
    ['usage'],
  ),
  'turn.aborted': object({ reason: text(4096) }, []),
  'record.added': object(
    {
      kind: { ...id('What the record is, for its reader (`langgraph.checkpoint`…)'), maxLength: 128 },
      value: { description: 'Any JSON: the record itself, never part of the model view' },
    },
    ['kind', 'value'],
  ),
  'context.overflowed': object({ error: text(65536) }, []),
  'compaction.requested': object({ auto: { type: 'boolean' }, reason: { type: 'string', enum: COMPACTION_REASONS }, instructions: text(65536) }, [
    'auto',
    'reason',
  ]),
  'compaction.completed': object(
    {
      markerSeq: seq,
      coveredThroughSeq: count('Events with seq <= this are replaced by `prefix` in the model view'),
      summary: { type: 'string' },
      retain: { type: 'string' },
      prefix: { type: 'array', items: ref('Message'), description: 'What the model sees before the window, after the system prompt' },
      strategy: { type: 'string' },
      model: { type: 'string' },
      tokensBefore: count(),
      tokensAfter: count(),
      messagesCompacted: count(),
      durationMs: count(),
      pins: { type: 'array', items: ref('Pin') },
      overhead: count(),
      evicted: {
        type: 'array',
        maxItems: 50,
        items: object({ section: { type: 'string' }, text: text(200) }, ['section', 'text']),
        description: 'What left the summary record at this compaction (its first 50 items, texts clipped)',
      },
    },
    ['markerSeq', 'coveredThroughSeq', 'summary', 'prefix', 'strategy', 'model', 'tokensBefore', 'tokensAfter', 'messagesCompacted', 'durationMs'],
    { additionalProperties: true },
  ),
  'compaction.failed': object({ markerSeq: seq, attempt: count(), error: { type: 'string' }, fallback: { type: 'string' } }, [
    'markerSeq',
    'attempt',
    'error',
    'fallback',
  ]),
  'tool_outputs.pruned': object(
    {
      callIds: strings,
      tokensFreed: count(),
      policy: openObject,
      clearInputs: { type: 'boolean', description: "Anthropic's clear_tool_inputs: the calls' inputs are replaced too" },
    },
    ['callIds', 'tokensFreed', 'policy'],
    { additionalProperties: true, description: 'Results of `callIds` render as a placeholder from here on' },
  ),
  'tool_results.archived': object(
    { callIds: strings, digest: { anyOf: [ref('Message'), { type: 'null' }] } },
    ['callIds', 'digest'],
    { additionalProperties: true, description: 'The pairs of `callIds` leave the model view; `digest`, if any, is shown here instead' },
  ),
  'session.config_changed': object({ patch: ref('SessionConfig') }, ['patch']),
  'pin.added': object({ pinId: { type: 'string' }, text: { type: 'string' } }, ['pinId', 'text']),
  'pin.removed': object({ pinId: { type: 'string' } }, ['pinId']),
  'session.rewound': object(
    { toSeq: count('What clients appended after this seq, up to this event, leaves the view; the log keeps it') },
    ['toSeq'],
    { description: 'POST .../rewind' },
  ),
};

/** `message.added` → `MessageAdded` */
const pascal = (type: string) => type.split(/[._]/).map((word) => `${word[0].toUpperCase()}${word.slice(1)}`).join('');
/** The component name of a type's stored data (`message.added` → `MessageAddedData`). */
export const dataName = (type: EventType) => `${pascal(type)}Data`;

// ---- what a client appends

/** The data a client sends where it differs from the stored one (the rest is appended as stored). */
const NEW_DATA: Partial<Record<EventType, JsonSchema>> = {
  'message.added': object({ message: ref('NewMessage') }, ['message']),
  'step.finished': object({ usage: ref('NewUsage'), ...STEP_FIELDS }, ['usage']),
  // The service fills auto=false, reason=manual: a client cannot fake an automatic compaction.
  'compaction.requested': object({ instructions: text(65536, 'Extra guidance for the summary') }, []),
};
/** Types whose data may be left out (it defaults to `{}`). */
const DATA_OPTIONAL: readonly EventType[] = ['turn.aborted', 'context.overflowed', 'compaction.requested'];

const newEventName = (type: EventType) => `New${pascal(type)}Event`;
const newEvent = (type: EventType) =>
  object(
    {
      id: id('Client event id; a retry with the same id returns the original seq. Generated when left out'),
      type: tag(type),
      data: NEW_DATA[type] ? ref(`New${dataName(type)}`) : ref(dataName(type)),
    },
    DATA_OPTIONAL.includes(type) ? ['type'] : ['type', 'data'],
  );

// ---- what the service returns

const eventName = (type: EventType) => `${pascal(type)}Event`;
const storedEvent = (type: EventType) =>
  object(
    {
      seq: count('Gap-free position in the session log, from 1'),
      id: { type: 'string' },
      type: tag(type),
      data: ref(dataName(type)),
      createdAt: { type: 'string', format: 'date-time' },
      origin: ref('EventOrigin'),
    },
    ['seq', 'id', 'type', 'data', 'createdAt'],
  );

/** One step of an agent loop: the model's tool call, the tool's result, the step's usage. */
const APPEND_EXAMPLE = {
  expectedSeq: 4,
  events: [
    {
      id: 'turn-3-assistant',
      type: 'message.added',
      data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId: 'call_1', name: 'read_file', input: { path: 'src/app.ts' } }] } },
    },
    {
      id: 'turn-3-tool',
      type: 'message.added',
      data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId: 'call_1', output: 'export const answer = 42;\n' }] } },
    },
    { id: 'turn-3-step', type: 'step.finished', data: { usage: { input_tokens: 1830, output_tokens: 41, cache_read_tokens: 1536 }, finishReason: 'tool_calls', contextSeq: 4 } },
  ],
};

const byName = <T extends string>(keys: readonly T[], name: (key: T) => string, schema: (key: T) => JsonSchema) =>
  Object.fromEntries(keys.map((key) => [name(key), schema(key)]));

export const EVENT_SCHEMAS: Record<string, JsonSchema> = {
  TextPart: textLike('text', 'Plain text'),
  ReasoningPart: textLike('reasoning', "The model's reasoning, as the provider returned it"),
  FilePart,
  ToolCallPart,
  NewToolResultPart,
  ToolResultPart,
  ToolOutputRef,
  Part: union('type', PART_SCHEMAS),
  MessageMetadata,
  ...byName(ROLES, newMessageName, newMessage),
  NewMessage: union('role', Object.fromEntries(ROLES.map((role) => [role, newMessageName(role)]))),
  Message,
  Usage,
  NewUsage,
  ...USAGE_VARIANTS,
  Pin: object({ pinId: { type: 'string' }, text: { type: 'string' }, seq }, ['pinId', 'text', 'seq']),
  ...byName(EVENT_TYPES, dataName, (type) => DATA[type]),
  ...Object.fromEntries(Object.entries(NEW_DATA).map(([type, schema]) => [`New${dataName(type as EventType)}`, schema])),
  ...byName(CLIENT_EVENT_TYPES, newEventName, newEvent),
  NewEvent: union('type', Object.fromEntries(CLIENT_EVENT_TYPES.map((type) => [type, newEventName(type)]))),
  AppendRequest: object(
    {
      expectedSeq: count('The head the client expects; a mismatch is 409 version_conflict'),
      events: { type: 'array', minItems: 1, items: ref('NewEvent'), description: 'All appended or none; at most maxEventsPerAppend' },
    },
    ['events'],
    { examples: [APPEND_EXAMPLE] },
  ),
  EventOrigin: object({ sessionId: { type: 'string' }, seq }, ['sessionId', 'seq'], {
    description: 'On events a fork inherited: the session and seq they were first written at',
  }),
  ...byName(EVENT_TYPES, eventName, storedEvent),
  Event: union('type', Object.fromEntries(EVENT_TYPES.map((type) => [type, eventName(type)]))),
};

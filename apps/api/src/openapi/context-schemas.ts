import { type ContextFormat, type JsonSchema, NATIVE_FORMATS } from '@app/domain';
import { object, openObject, ref } from './schema-builders';

/**
 * The context's `messages` in each format, as component schemas: the shapes
 * the domain's renderers emit (libs/domain/src/view/render), which are
 * subsets of the provider SDKs' request types. Every variant names its
 * `role` or `type` with a `const`, so a generated client narrows a union by
 * it, and `Context` is a `oneOf` by `format`. Objects stay open (no
 * `additionalProperties: false`): a field added later is no breaking change.
 * `context-schemas.spec.ts` validates random renders of every format against
 * them, and every e2e read of a context is checked against the document.
 */
const str: JsonSchema = { type: 'string' };
const constant = (value: string): JsonSchema => ({ type: 'string', const: value });
const arrayOf = (items: JsonSchema): JsonSchema => ({ type: 'array', items });
const oneOf = (...schemas: JsonSchema[]): JsonSchema => ({ oneOf: schemas });
const describe = (schema: JsonSchema, description: string): JsonSchema => ({ ...schema, description });

// ------------------------------------------------------------------ OpenAI Chat Completions

const OpenAIChatTextPart = object({ type: constant('text'), text: str });
const OpenAIChatContentPart = oneOf(
  ref('OpenAIChatTextPart'),
  object({ type: constant('image_url'), image_url: object({ url: describe(str, 'An http(s) or data: URL') }) }),
  object({ type: constant('file'), file: object({ filename: str, file_data: describe(str, 'A data: URL') }, ['filename']) }),
);
const OpenAIChatMessage = describe(
  oneOf(
    object({ role: constant('system'), content: str }),
    object({ role: constant('user'), content: oneOf(str, arrayOf(ref('OpenAIChatContentPart'))) }),
    object(
      {
        role: constant('assistant'),
        content: oneOf(str, arrayOf(ref('OpenAIChatTextPart')), { type: 'null' }),
        tool_calls: arrayOf(object({ id: str, type: constant('function'), function: object({ name: str, arguments: describe(str, 'JSON text') }) })),
      },
      ['tool_calls'],
    ),
    object({ role: constant('tool'), tool_call_id: str, content: str }),
  ),
  'A Chat Completions message (`ChatCompletionMessageParam` of the openai SDK)',
);

// ------------------------------------------------------------------ OpenAI Responses

const OpenAIResponsesInputContent = oneOf(
  object({ type: constant('input_text'), text: str }),
  object({ type: constant('input_image'), image_url: describe(str, 'An http(s) or data: URL'), detail: { type: 'string', enum: ['auto', 'low', 'high'] } }),
  object({ type: constant('input_file'), filename: str, file_data: describe(str, 'A data: URL'), file_url: str }, ['filename', 'file_data', 'file_url']),
);
const OpenAIResponsesItem = describe(
  oneOf(
    object({ type: constant('message'), role: { type: 'string', enum: ['system', 'user'] }, content: arrayOf(ref('OpenAIResponsesInputContent')) }),
    describe(
      object({ type: constant('message'), role: constant('assistant'), content: describe(str, "The assistant's text") }),
      'An assistant message as the SDK\'s `EasyInputMessage`: string content, no item id',
    ),
    object({ type: constant('function_call'), call_id: str, name: str, arguments: describe(str, 'JSON text') }),
    object({ type: constant('function_call_output'), call_id: str, output: oneOf(str, arrayOf(ref('OpenAIResponsesInputContent'))) }),
  ),
  'A Responses API input item (`ResponseInputItem` of the openai SDK), for `responses.create({ input })`',
);

// ------------------------------------------------------------------ Anthropic Messages

const cacheable = { cache_control: ref('AnthropicCacheControl') };
const CACHEABLE = ['cache_control'];
const AnthropicCacheControl = describe(
  object({ type: constant('ephemeral'), ttl: constant('1h') }, ['ttl']),
  'A prompt-cache breakpoint (no `ttl`: 5 minutes)',
);
const anthropicSource = (mediaTypes: string[]): JsonSchema =>
  oneOf(
    object({ type: constant('base64'), media_type: { type: 'string', enum: mediaTypes }, data: describe(str, 'Base64') }),
    object({ type: constant('url'), url: str }),
  );
const AnthropicTextBlock = object({ type: constant('text'), text: str, ...cacheable }, CACHEABLE);
const AnthropicImageBlock = object({ type: constant('image'), source: anthropicSource(['image/jpeg', 'image/png', 'image/gif', 'image/webp']), ...cacheable }, CACHEABLE);
const AnthropicDocumentBlock = object({ type: constant('document'), source: anthropicSource(['application/pdf']), ...cacheable }, CACHEABLE);
const AnthropicContentBlock = oneOf(
  ref('AnthropicTextBlock'),
  ref('AnthropicImageBlock'),
  ref('AnthropicDocumentBlock'),
  object({ type: constant('tool_use'), id: str, name: str, input: openObject, ...cacheable }, CACHEABLE),
  object(
    {
      type: constant('tool_result'),
      tool_use_id: str,
      content: oneOf(str, arrayOf(oneOf(ref('AnthropicTextBlock'), ref('AnthropicImageBlock'), ref('AnthropicDocumentBlock')))),
      is_error: { type: 'boolean' },
      ...cacheable,
    },
    ['content', 'is_error', ...CACHEABLE],
  ),
);
const AnthropicMessage = describe(
  object({ role: { type: 'string', enum: ['user', 'assistant'] }, content: arrayOf(ref('AnthropicContentBlock')) }),
  'A Messages API message (`MessageParam` of @anthropic-ai/sdk)',
);

// ------------------------------------------------------------------ Vercel AI SDK

const AiSdkTextPart = object({ type: constant('text'), text: str });
const AiSdkMessage = describe(
  oneOf(
    object({
      role: constant('user'),
      content: arrayOf(oneOf(ref('AiSdkTextPart'), object({ type: constant('file'), mediaType: str, data: describe(str, 'Base64 or a URL'), filename: str }, ['filename']))),
    }),
    object({
      role: constant('assistant'),
      content: arrayOf(
        oneOf(
          ref('AiSdkTextPart'),
          object({ type: constant('reasoning'), text: str }),
          object({ type: constant('tool-call'), toolCallId: str, toolName: str, input: openObject }),
        ),
      ),
    }),
    object({
      role: constant('tool'),
      content: arrayOf(
        object({
          type: constant('tool-result'),
          toolCallId: str,
          toolName: str,
          output: oneOf(
            object({ type: constant('text'), value: str }),
            object({ type: constant('error-text'), value: str }),
            object({
              type: constant('content'),
              value: arrayOf(
                oneOf(
                  ref('AiSdkTextPart'),
                  object({ type: constant('file-data'), mediaType: str, data: describe(str, 'Base64'), filename: str }, ['filename']),
                  object({ type: constant('file-url'), url: str, mediaType: str }),
                ),
              ),
            }),
          ),
        }),
      ),
    }),
  ),
  'A Vercel AI SDK `ModelMessage`',
);

/**
 * POST …/messages: the formats' shapes for writing, as their SDKs type them.
 * They are wider than the renders' (a `developer` message, string content,
 * output messages with ids, a response object whole), so the items are open
 * objects here, described by their SDK type; the domain reads each format
 * (libs/domain/src/native) and answers a shape it cannot hold with the path.
 */
export const NativeAppendRequest: JsonSchema = {
  type: 'object',
  required: ['format'],
  example: { format: 'anthropic', messages: [{ role: 'user', content: 'Fix the failing test in src/app.ts' }] },
  additionalProperties: false,
  properties: {
    format: { type: 'string', enum: [...NATIVE_FORMATS], description: 'The SDK shapes of `messages` and `response`: the formats of GET …/context but `neutral`' },
    messages: describe(
      oneOf(arrayOf(openObject), openObject),
      'What the client sent the model this step that the log lacks (the user turn, the tool results), one message.added each: `openai` Chat Completions messages (`ChatCompletionMessageParam[]`); `openai-responses` input items (`ResponseInputItem[]`, a Response\'s `output` included); `anthropic` `MessageParam[]`, or a request `{system, messages}`; `ai-sdk` `ModelMessage[]` (system messages included). Appended before `response`',
    ),
    response: describe(
      openObject,
      "The SDK's response object whole: a `ChatCompletion` (one choice), a Responses `Response`, an Anthropic `Message`, an AI SDK `generateText` result or `onStepFinish` step (`response.messages`, `usage`, `finishReason`). Its assistant messages, then step.finished with its usage as the provider reported it (none without usage) and its finish reason",
    ),
    contextSeq: {
      type: 'integer',
      minimum: 0,
      description: "step.finished's contextSeq: the headSeq of the context the call was sent with. Not with `messages` (sent with the call too): the service infers it then",
    },
    expectedSeq: { type: 'integer', minimum: 0, description: 'The head this append expects, as in POST …/events: another writer in between is a 409' },
  },
};

/** The components the context's variants refer to. */
export const CONTEXT_MESSAGE_SCHEMAS: Record<string, JsonSchema> = {
  OpenAIChatTextPart,
  OpenAIChatContentPart,
  OpenAIChatMessage,
  OpenAIResponsesInputContent,
  OpenAIResponsesItem,
  AnthropicCacheControl,
  AnthropicTextBlock,
  AnthropicImageBlock,
  AnthropicDocumentBlock,
  AnthropicContentBlock,
  AnthropicMessage,
  AiSdkTextPart,
  AiSdkMessage,
};

/** Each format's context: the shared fields, `format` as a const, and its own `system` and `messages`. */
export const CONTEXT_VARIANTS = {
  neutral: { name: 'NeutralContext', messages: ref('Message'), system: undefined },
  openai: { name: 'OpenAIChatContext', messages: ref('OpenAIChatMessage'), system: undefined },
  'openai-responses': { name: 'OpenAIResponsesContext', messages: ref('OpenAIResponsesItem'), system: undefined },
  anthropic: {
    name: 'AnthropicContext',
    messages: ref('AnthropicMessage'),
    system: describe(oneOf(str, arrayOf(ref('AnthropicTextBlock'))), 'The system prompt: a string, or with `cacheBreakpoints` one text block carrying `cache_control`; absent when there is none'),
  },
  'ai-sdk': { name: 'AiSdkContext', messages: ref('AiSdkMessage'), system: describe(str, "generateText's `instructions`; absent when there is none") },
} satisfies Record<ContextFormat, { name: string; messages: JsonSchema; system: JsonSchema | undefined }>;

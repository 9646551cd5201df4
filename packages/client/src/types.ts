import type { Message as AnthropicMessage, MessageCreateParams as AnthropicRequest, MessageParam as AnthropicMessageParam, Tool as AnthropicTool } from '@anthropic-ai/sdk/resources/messages';
import type { FinishReason, JSONSchema7, LanguageModelUsage, ModelMessage } from 'ai';
import type { ChatCompletion, ChatCompletionFunctionTool, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { FunctionTool, Response as OpenAIResponse, ResponseInputItem } from 'openai/resources/responses/responses';
import type { components, paths } from './schema';

type Schemas = components['schemas'];
type Operation<P extends keyof paths, M extends 'get' | 'post'> = NonNullable<paths[P][M]>;
type JsonContent<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type RequestJson<O> = O extends { requestBody?: infer R } ? JsonContent<NonNullable<R>> : never;
type ResponseJson<O, S extends number> = O extends { responses: { [K in S]: infer R } } ? JsonContent<R> : never;

export type Session = ResponseJson<Operation<'/v1/sessions/{sessionId}', 'get'>, 200>;
export type CreateSessionRequest = RequestJson<Operation<'/v1/sessions', 'post'>>;
export type AppendRequest = RequestJson<Operation<'/v1/sessions/{sessionId}/events', 'post'>>;
/** An event as appended: `{ id?, type, data }`. */
export type NewEvent = AppendRequest['events'][number];
export type AppendResult = ResponseJson<Operation<'/v1/sessions/{sessionId}/events', 'post'>, 201>;
/** A stored event, as GET …/events and the event stream return it. */
export type StoredEvent = Schemas['Event'];
export type SearchQuery = NonNullable<Operation<'/v1/search', 'get'>['parameters']['query']>;
export type SessionSearchQuery = NonNullable<Operation<'/v1/sessions/{sessionId}/search', 'get'>['parameters']['query']>;
export type SearchResult = ResponseJson<Operation<'/v1/search', 'get'>, 200>;
export type SessionSearchResult = ResponseJson<Operation<'/v1/sessions/{sessionId}/search', 'get'>, 200>;
export type SearchHit = Schemas['SearchHit'];
export type ToolOutputUpload = ResponseJson<Operation<'/v1/sessions/{sessionId}/tool-outputs', 'post'>, 201>;
/** A stored tool output's ref: what a tool_result part carries as `outputRef`. */
export type ToolOutputRef = ToolOutputUpload['ref'];

type ContextOperation = Operation<'/v1/sessions/{sessionId}/context', 'get'>;
/** GET …/context's answer as the document describes it: a union by `format`, `messages` typed per format by the document's own schemas. */
export type DocumentContext = ResponseJson<ContextOperation, 200>;
export type ContextQuery = NonNullable<ContextOperation['parameters']['query']>;
export type ContextFormat = NonNullable<ContextQuery['format']>;

/** The AI SDK's tools are objects keyed by name: pass `tool({ description, inputSchema: jsonSchema(inputSchema) })`. */
export interface AiSdkToolDefinition {
  name: string;
  description: string;
  inputSchema: JSONSchema7;
}

/** A neutral tool definition: a JSON Schema for its arguments. */
export interface NeutralToolDefinition {
  name: string;
  description: string;
  parameters: JSONSchema7;
}

/** What each format renders, in the provider SDK's own request types, so it is passed on with no cast. */
interface FormatShapes {
  neutral: { messages: Schemas['Message'][]; tools?: NeutralToolDefinition[] };
  openai: { messages: ChatCompletionMessageParam[]; tools?: ChatCompletionFunctionTool[] };
  /** `messages` goes to `responses.create({ input })`. */
  'openai-responses': { messages: ResponseInputItem[]; tools?: FunctionTool[] };
  /** `messages.create({ system, messages })`. */
  anthropic: { system?: string; messages: AnthropicMessageParam[]; tools?: AnthropicTool[] };
  /** `generateText({ instructions: system, messages })`. */
  'ai-sdk': { system?: string; messages: ModelMessage[]; tools?: AiSdkToolDefinition[] };
}

/**
 * GET …/context in format F: the document's fields, with `messages` (and
 * `system`, `tools` where the format has them) typed by the provider's SDK.
 * `tools` is there when asked for with `tools: 'tool_output_cache'`.
 */
export type Context<F extends ContextFormat> = Omit<DocumentContext, 'format' | 'system' | 'messages' | 'tools'> & { format: F } & FormatShapes[F];

/** An AI SDK step as appended: what `generateText` returns and `onStepFinish` gets (the client sends these three fields of it). */
export interface AiSdkStep {
  response: { messages: ModelMessage[] };
  usage: LanguageModelUsage;
  finishReason?: FinishReason;
}

/** What each format appends natively (POST …/messages), in the provider SDK's own types: the messages sent to the model, the object it returned. */
interface NativeShapes {
  openai: { messages?: ChatCompletionMessageParam[]; response?: ChatCompletion };
  'openai-responses': { messages?: ResponseInputItem[]; response?: OpenAIResponse };
  /** `messages` may also be a request's `{ system, messages }`. */
  anthropic: { messages?: AnthropicMessageParam[] | Pick<AnthropicRequest, 'system' | 'messages'>; response?: AnthropicMessage };
  'ai-sdk': { messages?: ModelMessage[]; response?: AiSdkStep };
}
export type NativeFormat = keyof NativeShapes;

/**
 * A native append in format F: `messages` (the new input sent with the call:
 * the user turn, the tool results) then `response` (the SDK's answer, whole).
 * `contextSeq` is the headSeq of the context the call was sent with, only
 * without `messages` (the service infers it from them).
 */
export type NativeAppend<F extends NativeFormat = NativeFormat> = F extends NativeFormat ? { format: F; contextSeq?: number } & NativeShapes[F] : never;

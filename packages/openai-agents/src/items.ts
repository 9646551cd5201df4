import type {
  AgentInputItem,
  AssistantMessageItem,
  FunctionCallItem,
  FunctionCallResultItem,
  ReasoningItem,
  SystemMessageItem,
  ToolCallStructuredOutput,
  UserMessageItem,
} from '@openai/agents';
import type {
  EasyInputMessage,
  ResponseFunctionCallOutputItem,
  ResponseFunctionToolCall,
  ResponseInputContent,
  ResponseInputItem,
  ResponseOutputMessage,
  ResponseReasoningItem,
} from 'openai/resources/responses/responses';

/**
 * The Agents SDK keeps its own item shapes (camelCase `callId`,
 * `function_call_result` with the tool's name, assistant messages with a
 * `status`), which the Responses API and this service's native append do
 * not take as they are: both directions are mapped here, field by field.
 */

/** Raised for an item the session store cannot hold (hosted and shell tools, the provider's compaction items, files kept by OpenAI). */
export class UnsupportedItemError extends Error {
  constructor(what: string) {
    super(`the session store cannot hold ${what}: it keeps messages, function calls, their results and reasoning summaries`);
    this.name = 'UnsupportedItemError';
  }
}

type UserContent = Exclude<UserMessageItem['content'], string>[number];
type UserInputImage = Extract<UserContent, { type: 'input_image' }>;
type UserInputFile = Extract<UserContent, { type: 'input_file' }>;
type ToolOutput = FunctionCallResultItem['output'];

// ------------------------------------------------------------ SDK → Responses

/** An SDK item as Responses input items, as POST …/messages (format openai-responses) reads them. */
export function toResponsesItems(item: AgentInputItem): ResponseInputItem[] {
  if ('role' in item) return [messageToResponses(item)].flat();
  switch (item.type) {
    case 'function_call':
      return [functionCall(item)];
    case 'function_call_result':
      return [{ type: 'function_call_output', call_id: item.callId, output: toolOutput(item.output) }];
    case 'reasoning':
      return reasoning(item);
    default:
      throw new UnsupportedItemError(`an item of type ${item.type}`);
  }
}

function messageToResponses(item: UserMessageItem | AssistantMessageItem | SystemMessageItem): EasyInputMessage | EasyInputMessage[] {
  switch (item.role) {
    case 'system':
      return { type: 'message', role: 'system', content: item.content };
    case 'user':
      return { type: 'message', role: 'user', content: typeof item.content === 'string' ? item.content : item.content.map(userContent) };
    case 'assistant':
      // Responses input takes assistant text as an easy message (an output message needs an id the API issued): one per part.
      return item.content.map((part): EasyInputMessage => {
        if (part.type === 'output_text') return { type: 'message', role: 'assistant', content: part.text };
        if (part.type === 'refusal') return { type: 'message', role: 'assistant', content: part.refusal };
        throw new UnsupportedItemError(`assistant ${part.type} content`);
      });
  }
}

function functionCall(item: FunctionCallItem): ResponseFunctionToolCall {
  return { type: 'function_call', call_id: item.callId, name: item.name, arguments: item.arguments };
}

/** Only the summary is kept by the log; the id is the type's requirement, the service does not read it. */
function reasoning(item: ReasoningItem): ResponseReasoningItem[] {
  const summary = item.content.map((part) => ({ type: 'summary_text' as const, text: part.text }));
  return summary.length > 0 ? [{ type: 'reasoning', id: item.id ?? '', summary }] : [];
}

function userContent(part: UserContent): ResponseInputContent {
  if (part.type === 'audio') throw new UnsupportedItemError('audio content');
  return inputContent(part);
}

/** Text, image and file parts: a user message's and a structured tool output's are the same in the SDK. */
function inputContent(part: Exclude<UserContent, { type: 'audio' }> | ToolCallStructuredOutput) {
  switch (part.type) {
    case 'input_text':
      return { type: 'input_text' as const, text: part.text };
    case 'input_image':
      return { type: 'input_image' as const, image_url: imageUrl(part), detail: imageDetail(part.detail) };
    case 'input_file':
      return inputFile(part);
  }
}

function imageUrl(part: UserInputImage | Extract<ToolCallStructuredOutput, { type: 'input_image' }>): string {
  if (typeof part.image === 'string') return part.image;
  throw new UnsupportedItemError('an image kept by OpenAI (file id)');
}

function inputFile(part: UserInputFile | Extract<ToolCallStructuredOutput, { type: 'input_file' }>): ResponseInputContent {
  const named = part.filename === undefined ? {} : { filename: part.filename };
  if (typeof part.file === 'string') return { type: 'input_file', ...named, ...(/^https?:/.test(part.file) ? { file_url: part.file } : { file_data: part.file }) };
  if (part.file !== undefined && 'url' in part.file) return { type: 'input_file', ...named, file_url: part.file.url };
  throw new UnsupportedItemError('a file kept by OpenAI (file id)');
}

const DETAILS = ['low', 'high', 'auto', 'original'] as const;
type Detail = (typeof DETAILS)[number];
const isDetail = (value: string | undefined): value is Detail => DETAILS.some((detail) => detail === value);
const imageDetail = (detail: string | undefined): Detail => (isDetail(detail) ? detail : 'auto');

function toolOutput(output: ToolOutput): string | ResponseFunctionCallOutputItem[] {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return output.map(structuredOutput);
  switch (output.type) {
    case 'text':
      return output.text;
    case 'image':
      if (typeof output.image === 'string') return [{ type: 'input_image', image_url: output.image, detail: imageDetail(output.detail) }];
      if (output.image !== undefined && 'url' in output.image) return [{ type: 'input_image', image_url: output.image.url, detail: imageDetail(output.detail) }];
      throw new UnsupportedItemError('a tool output image given as bytes or file id');
    case 'file':
      throw new UnsupportedItemError('a tool output file');
  }
}

function structuredOutput(part: ToolCallStructuredOutput): ResponseFunctionCallOutputItem {
  const content = inputContent(part);
  if (content.type !== 'input_text' && content.type !== 'input_image' && content.type !== 'input_file') throw new UnsupportedItemError('a tool output file');
  return content;
}

// ------------------------------------------------------------ Responses → SDK

/**
 * The context's Responses items as the SDK's items. A function_call_output
 * carries no name in the Responses API, the SDK's result needs one: it takes
 * its call's (the view never has a result without its call).
 */
export function toAgentItems(items: readonly ResponseInputItem[]): AgentInputItem[] {
  const names = new Map<string, string>();
  return items.map((item): AgentInputItem => {
    if (isMessage(item)) return messageToAgent(item);
    switch (item.type) {
      case 'function_call':
        names.set(item.call_id, item.name);
        return { type: 'function_call', callId: item.call_id, name: item.name, arguments: item.arguments, status: 'completed' };
      case 'function_call_output': {
        const callId = item.call_id ?? '';
        return { type: 'function_call_result', callId, name: names.get(callId) ?? item.name ?? '', status: 'completed', output: resultOutput(item.output) };
      }
      default:
        throw new UnsupportedItemError(`a context item of type ${item.type}`);
    }
  });
}

type ContextMessage = EasyInputMessage | ResponseInputItem.Message | ResponseOutputMessage;
const isMessage = (item: ResponseInputItem): item is ContextMessage => 'role' in item && (item.type === undefined || item.type === 'message');

function messageToAgent(item: ContextMessage): AgentInputItem {
  const parts = typeof item.content === 'string' ? [{ type: 'input_text' as const, text: item.content }] : item.content;
  switch (item.role) {
    case 'assistant':
      return {
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: parts.map((part) => {
          if (part.type === 'output_text' || part.type === 'input_text') return { type: 'output_text', text: part.text };
          if (part.type === 'refusal') return { type: 'refusal', refusal: part.refusal };
          throw new UnsupportedItemError(`assistant ${part.type} content`);
        }),
      };
    case 'system':
    case 'developer':
      return { type: 'message', role: 'system', content: parts.map((part) => ('text' in part ? part.text : '')).join('') };
    case 'user':
      return { type: 'message', role: 'user', content: parts.map(agentUserContent) };
  }
}

function agentUserContent(part: ContextMessage['content'][number]): UserContent {
  if (typeof part === 'string') return { type: 'input_text', text: part };
  if (part.type === 'input_text' || part.type === 'input_image' || part.type === 'input_file') return agentContent(part);
  throw new UnsupportedItemError(`user ${part.type} content`);
}

function resultOutput(output: string | ResponseFunctionCallOutputItem[]): ToolOutput {
  return typeof output === 'string' ? output : output.map(agentContent);
}

/** A Responses text, image or file part as the SDK's: the same in a user message and in a structured tool output. */
function agentContent(part: ResponseFunctionCallOutputItem | Extract<ResponseInputContent, { type: 'input_text' | 'input_image' | 'input_file' }>) {
  switch (part.type) {
    case 'input_text':
      return { type: 'input_text' as const, text: part.text };
    case 'input_image':
      if (!part.image_url) throw new UnsupportedItemError('an image kept by OpenAI (file id)');
      return { type: 'input_image' as const, image: part.image_url, ...(part.detail ? { detail: part.detail } : {}) };
    case 'input_file': {
      const file = part.file_data ?? part.file_url;
      if (!file) throw new UnsupportedItemError('a file kept by OpenAI (file id)');
      return { type: 'input_file' as const, file, ...(part.filename ? { filename: part.filename } : {}) };
    }
  }
}

import { AnthropicThinkingBlock, ParsableAnthropicRequest, parseAnthropic } from '../view/parse/anthropic';
import { AnthropicContentBlock, AnthropicImageType, AnthropicMediaBlock, AnthropicTextBlock } from '../view/render/anthropic';
import { NativeStep } from './native-step';
import { eachAt, Json, objectAt, optionalStringAt, stringAt, unsupported } from './reader';

type Block = AnthropicContentBlock | AnthropicThinkingBlock;
type Turn = ParsableAnthropicRequest['messages'][number];

const IMAGE_TYPES: readonly string[] = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] satisfies AnthropicImageType[];
const isImageType = (value: string): value is AnthropicImageType => IMAGE_TYPES.includes(value);

/**
 * Messages API input as the @anthropic-ai/sdk writes it: a request's
 * `{system, messages}` or its `messages` alone (`MessageParam[]`), and a
 * `Message` response, read into the render's shapes and parsed as a context
 * read back. Content may be a string; cache breakpoints and citations are
 * dropped; a thinking block keeps its text (its signature is the
 * provider's), a redacted one has none to keep. Server tools, search results
 * and files kept by Anthropic have no place in the log and are refused.
 */
export function readAnthropicRequest(value: unknown, path: string): ParsableAnthropicRequest {
  if (Array.isArray(value)) return { messages: eachAt(value, path, readTurn) };
  const request = objectAt(value, path);
  const system = request.system == null ? undefined : typeof request.system === 'string' ? request.system : eachAt(request.system, `${path}.system`, readText);
  return { ...(system === undefined ? {} : { system }), messages: eachAt(request.messages, `${path}.messages`, readTurn) };
}

export function readAnthropicMessage(value: unknown, path: string): NativeStep {
  const message = objectAt(value, path);
  return {
    messages: parseAnthropic({ messages: [{ role: 'assistant', content: readContent(message.content, `${path}.content`) }] }),
    usage: message.usage ?? undefined,
    finishReason: optionalStringAt(message.stop_reason, `${path}.stop_reason`),
  };
}

function readTurn(value: unknown, path: string): Turn {
  const turn = objectAt(value, path);
  if (turn.role !== 'user' && turn.role !== 'assistant') throw unsupported(`${path}.role`, String(turn.role), 'the roles are user and assistant (the system prompt is `system`)');
  return { role: turn.role, content: readContent(turn.content, `${path}.content`) };
}

function readContent(value: unknown, path: string): Block[] {
  if (typeof value === 'string') return [{ type: 'text', text: value }];
  return eachAt(value, path, readBlock).flat();
}

function readText(value: unknown, path: string): AnthropicTextBlock {
  const block = objectAt(value, path);
  if (block.type !== 'text') throw unsupported(`${path}.type`, String(block.type), 'the system prompt is text');
  return { type: 'text', text: stringAt(block.text, `${path}.text`) };
}

function readBlock(value: unknown, path: string): Block[] {
  const block = objectAt(value, path);
  switch (block.type) {
    case 'text':
      return [readText(block, path)];
    case 'image':
    case 'document':
      return [readMedia(block, path)];
    case 'tool_use':
      return [{ type: 'tool_use', id: stringAt(block.id, `${path}.id`), name: stringAt(block.name, `${path}.name`), input: objectAt(block.input, `${path}.input`) }];
    case 'tool_result': {
      const content = block.content == null || typeof block.content === 'string' ? block.content : eachAt(block.content, `${path}.content`, readResultContent);
      return [
        {
          type: 'tool_result',
          tool_use_id: stringAt(block.tool_use_id, `${path}.tool_use_id`),
          ...(content == null ? {} : { content }),
          ...(block.is_error === true ? { is_error: true } : {}),
        },
      ];
    }
    case 'thinking':
      return [{ type: 'thinking', thinking: stringAt(block.thinking, `${path}.thinking`) }];
    case 'redacted_thinking':
      return [];
    default:
      throw unsupported(`${path}.type`, String(block.type), 'the blocks are text, image, document, tool_use, tool_result and thinking');
  }
}

function readResultContent(value: unknown, path: string): AnthropicTextBlock | AnthropicMediaBlock {
  const block = objectAt(value, path);
  if (block.type === 'text') return readText(block, path);
  if (block.type === 'image' || block.type === 'document') return readMedia(block, path);
  throw unsupported(`${path}.type`, String(block.type), 'a tool result holds text, images and documents');
}

function readMedia(block: Json, path: string): AnthropicMediaBlock {
  const source = objectAt(block.source, `${path}.source`);
  if (source.type === 'url') {
    const url = { type: 'url' as const, url: stringAt(source.url, `${path}.source.url`) };
    return block.type === 'image' ? { type: 'image', source: url } : { type: 'document', source: url };
  }
  if (source.type !== 'base64') throw unsupported(`${path}.source.type`, String(source.type), 'media sources are base64 or url');
  const mediaType = stringAt(source.media_type, `${path}.source.media_type`);
  const data = stringAt(source.data, `${path}.source.data`);
  if (block.type === 'image') {
    if (!isImageType(mediaType)) throw unsupported(`${path}.source.media_type`, mediaType, `images are ${IMAGE_TYPES.join(', ')}`);
    return { type: 'image', source: { type: 'base64', media_type: mediaType, data } };
  }
  if (mediaType !== 'application/pdf') throw unsupported(`${path}.source.media_type`, mediaType, 'base64 documents are PDFs');
  return { type: 'document', source: { type: 'base64', media_type: mediaType, data } };
}

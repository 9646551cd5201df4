import { FilePart, Message, Part, ToolResultPart } from '../../events';
import { fileNote, isPdf, systemReminder, textsOf } from './media';
import { RenderableView } from './renderable-view';

/** Messages API shapes (the subset we emit), kept here so the domain needs no SDK. */
export type AnthropicImageType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';
export type AnthropicUrlSource = { type: 'url'; url: string };

/** How long a cached prefix lives: the Messages API's two `cache_control` TTLs. */
export type CacheTtl = '5m' | '1h';
/** A prompt-cache breakpoint: the prefix up to and including its block is cached. No `ttl` is 5 minutes, the API's default. */
export type AnthropicCacheControl = { type: 'ephemeral'; ttl?: '1h' };
/** Every block we emit may carry a breakpoint. */
type Cacheable = { cache_control?: AnthropicCacheControl };

export type AnthropicTextBlock = { type: 'text'; text: string } & Cacheable;
export type AnthropicMediaBlock = (
  | { type: 'image'; source: { type: 'base64'; media_type: AnthropicImageType; data: string } | AnthropicUrlSource }
  | { type: 'document'; source: { type: 'base64'; media_type: 'application/pdf'; data: string } | AnthropicUrlSource }
) &
  Cacheable;
export type AnthropicToolUseBlock = { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> } & Cacheable;
export type AnthropicToolResultBlock = {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | Array<AnthropicTextBlock | AnthropicMediaBlock>;
  is_error?: boolean;
} & Cacheable;
export type AnthropicContentBlock = AnthropicTextBlock | AnthropicMediaBlock | AnthropicToolUseBlock | AnthropicToolResultBlock;

export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: AnthropicContentBlock[];
}

export interface AnthropicRequest {
  /** A string; one text block when it carries a breakpoint. */
  system?: string | AnthropicTextBlock[];
  messages: AnthropicMessage[];
}

export interface AnthropicRenderOptions {
  /** Mark prompt-cache breakpoints with this lifetime (see withBreakpoints); absent, none. */
  cacheTtl?: CacheTtl;
}

/** Anthropic's limit: a request with more blocks carrying `cache_control` is refused. */
export const MAX_CACHE_BREAKPOINTS = 4;

export function cacheControl(ttl: CacheTtl): AnthropicCacheControl {
  // 5m is the API's default: the bare marker is also what gateways without TTL support take.
  return ttl === '1h' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' };
}

/** The tool definitions with a breakpoint on the last one: tools come first in the cached prefix. */
export function withToolsBreakpoint<T extends object>(tools: readonly T[], ttl: CacheTtl): Array<T & Cacheable> {
  return tools.map((tool, i) => (i === tools.length - 1 ? { ...tool, cache_control: cacheControl(ttl) } : tool));
}

/**
 * Opens the conversation when the view does not start with a user message
 * (e.g. a prefix or a session that begins with the assistant), since the
 * Messages API (strictly on Bedrock) wants a user turn first. Also the whole
 * conversation of an empty view, so the request is still valid.
 */
export const ANTHROPIC_OPENING_TEXT = '(conversation continues)';

const IMAGE_TYPES: ReadonlySet<string> = new Set<AnthropicImageType>(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

const isAnthropicImage = (mediaType: string): mediaType is AnthropicImageType => IMAGE_TYPES.has(mediaType);

/**
 * Messages API request: system apart; tool results as tool_result blocks in
 * the next user turn (first in it, since a normalized view puts results
 * right after their call); same-role turns merged; blank text dropped (the
 * API rejects empty and whitespace-only text blocks).
 *
 * System-role messages: those before the first other message join `system`;
 * later ones become user text wrapped in <system-reminder> (the Messages API
 * has no system turns; the tag tells the model who is speaking).
 * Reasoning parts are omitted: thinking blocks need the provider's signature,
 * which the log does not keep.
 */
export function renderAnthropic(view: RenderableView, options: AnthropicRenderOptions = {}): AnthropicRequest {
  const ids = new ToolUseIds();
  const leading = view.messages.findIndex((message) => message.role !== 'system');
  const head = leading === -1 ? view.messages.length : leading;
  const system = [view.system ?? '', ...view.messages.slice(0, head).flatMap(textsOf)].filter(isPresent).join('\n\n');
  const stable = stablePrefixLength(view);

  const turns: AnthropicMessage[] = [];
  let stableEnd: AnthropicContentBlock | undefined;
  view.messages.slice(head).forEach((message, k) => {
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const content = messageBlocks(message, ids);
    if (content.length === 0) return;
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...content);
    else turns.push({ role, content });
    if (head + k < stable) stableEnd = content.at(-1);
  });
  if (turns[0]?.role !== 'user') turns.unshift({ role: 'user', content: [{ type: 'text', text: ANTHROPIC_OPENING_TEXT }] });
  trimFinalAssistant(turns);
  if (!options.cacheTtl) return system ? { system, messages: turns } : { messages: turns };
  return withBreakpoints(system, turns, stableEnd, cacheControl(options.cacheTtl));
}

/**
 * Leading messages that change only at a rewrite (pivot, pin): through the
 * last one from the pivot's prefix or the pins. Results normalization placed
 * among them answer the prefix's own calls and are as stable.
 */
function stablePrefixLength(view: RenderableView): number {
  return (view.sources?.findLastIndex((source) => source.origin === 'prefix' || source.origin === 'pins') ?? -1) + 1;
}

/**
 * Breakpoints where the prefix stops being stable, in request order: the
 * system prompt (tools before it are marked by withToolsBreakpoint), the end
 * of the pivot's prefix and pins (a compaction rewrites them, a new turn does
 * not), and the last block, so the next read, which begins with this one,
 * reads everything up to it from the cache. At most three here, four with the
 * tools: Anthropic's limit.
 */
function withBreakpoints(
  system: string,
  turns: AnthropicMessage[],
  stableEnd: AnthropicContentBlock | undefined,
  control: AnthropicCacheControl,
): AnthropicRequest {
  const last = turns.at(-1)!;
  const marked = new Set([stableEnd, last.content.at(-1)]);
  const messages = turns.map((turn) => ({
    role: turn.role,
    content: turn.content.map((block) => (marked.has(block) ? { ...block, cache_control: control } : block)),
  }));
  return system ? { system: [{ type: 'text', text: system, cache_control: control }], messages } : { messages };
}

function isPresent(text: string): boolean {
  return text.trim().length > 0;
}

function messageBlocks(message: Message, ids: ToolUseIds): AnthropicContentBlock[] {
  if (message.role === 'system') {
    const text = textsOf(message).join('\n\n');
    return isPresent(text) ? [{ type: 'text', text: systemReminder(text) }] : [];
  }
  return message.parts.flatMap((part) => partBlocks(part, ids));
}

function partBlocks(part: Part, ids: ToolUseIds): AnthropicContentBlock[] {
  switch (part.type) {
    case 'text':
      return isPresent(part.text) ? [{ type: 'text', text: part.text }] : [];
    case 'reasoning':
      return [];
    case 'file':
      return [fileBlock(part)];
    case 'tool_call':
      return [{ type: 'tool_use', id: ids.of(part.callId), name: part.name, input: toolInput(part.input) }];
    case 'tool_result':
      return [toolResultBlock(part, ids)];
  }
}

/** The API wants an object; any other JSON input is wrapped as `{input}`. */
export function toolInput(input: unknown): Record<string, unknown> {
  return typeof input === 'object' && input !== null && !Array.isArray(input)
    ? (input as Record<string, unknown>)
    : { input };
}

function toolResultBlock(part: ToolResultPart, ids: ToolUseIds): AnthropicToolResultBlock {
  const media = (part.attachments ?? []).map(fileBlock);
  const text: AnthropicTextBlock[] = isPresent(part.output) ? [{ type: 'text', text: part.output }] : [];
  const content = media.length > 0 ? [...text, ...media] : text[0]?.text;
  return {
    type: 'tool_result',
    tool_use_id: ids.of(part.callId),
    ...(content === undefined ? {} : { content }),
    ...(part.isError ? { is_error: true } : {}),
  };
}

/** Images and PDFs the API accepts, inline data first; anything else as a text note. */
function fileBlock(part: FilePart): AnthropicTextBlock | AnthropicMediaBlock {
  const { mediaType, data, url } = part;
  const urlSource = url ? { type: 'url' as const, url } : undefined;
  if (isAnthropicImage(mediaType) && (data || urlSource)) {
    return { type: 'image', source: data ? { type: 'base64', media_type: mediaType, data } : urlSource! };
  }
  if (isPdf(part) && (data || urlSource)) {
    return { type: 'document', source: data ? { type: 'base64', media_type: 'application/pdf', data } : urlSource! };
  }
  return { type: 'text', text: fileNote(part) };
}

/** The API rejects a final assistant turn (a prefill) that ends in whitespace. */
function trimFinalAssistant(turns: AnthropicMessage[]): void {
  const last = turns.at(-1);
  if (last?.role !== 'assistant') return;
  const i = last.content.length - 1;
  const block = last.content[i];
  if (block.type === 'text') last.content[i] = { type: 'text', text: block.text.trimEnd() };
}

/**
 * Tool-use ids must match ^[a-zA-Z0-9_-]+$ while ours may also hold `.:~`:
 * other characters become `_`, and a clash gets a counter. Stable within a render.
 */
export class ToolUseIds {
  private readonly byCallId = new Map<string, string>();
  private readonly taken = new Set<string>();

  of(callId: string): string {
    let id = this.byCallId.get(callId);
    if (id) return id;
    const base = callId.replace(/[^a-zA-Z0-9_-]/g, '_') || '_';
    id = base;
    for (let n = 2; this.taken.has(id); n++) id = `${base}_${n}`;
    this.byCallId.set(callId, id);
    this.taken.add(id);
    return id;
  }
}

/**
 * Checks a Messages API request against the rules Anthropic enforces with a
 * 400, worded like its errors where we know them. Shapes are loose: stub
 * servers feed it parsed JSON.
 */
import { MAX_CACHE_BREAKPOINTS } from '../render/anthropic';

export interface AnthropicBlockInput {
  type: string;
  text?: unknown;
  id?: unknown;
  input?: unknown;
  tool_use_id?: unknown;
  content?: unknown;
  cache_control?: unknown;
}

export interface AnthropicMessageInput {
  role: string;
  content: string | readonly AnthropicBlockInput[];
}

export interface AnthropicRequestInput {
  system?: unknown;
  messages: readonly AnthropicMessageInput[];
  tools?: unknown;
}

const TOOL_USE_ID = /^[a-zA-Z0-9_-]+$/;

function blocksOf(message: AnthropicMessageInput): readonly AnthropicBlockInput[] {
  return typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
}

function idsOf(message: AnthropicMessageInput | undefined, type: 'tool_use' | 'tool_result'): string[] {
  if (!message) return [];
  return blocksOf(message)
    .filter((block) => block.type === type)
    .map((block) => String(type === 'tool_use' ? block.id : block.tool_use_id));
}

export function validateAnthropicRequest(request: AnthropicRequestInput): string[] {
  const { messages } = request;
  const errors: string[] = [];
  if (typeof request.system === 'string' && request.system.length > 0 && request.system.trim() === '') {
    errors.push('system: text content blocks must contain non-whitespace text');
  }
  if (messages.length === 0) errors.push('messages: at least one message is required');
  else if (messages[0].role !== 'user') errors.push('messages: first message must use the "user" role');

  const toolUseIds = new Set<string>();
  messages.forEach((message, i) => {
    if (message.role !== 'user' && message.role !== 'assistant') {
      errors.push(`messages.${i}.role: Input should be 'user' or 'assistant'`);
    }
    if (i > 0 && message.role === messages[i - 1].role) {
      errors.push(
        `messages: roles must alternate between "user" and "assistant", but found multiple "${message.role}" roles in a row`,
      );
    }
    const blocks = blocksOf(message);
    const finalAssistant = i === messages.length - 1 && message.role === 'assistant';
    if (blocks.length === 0 && !finalAssistant) {
      errors.push(`messages.${i}: all messages must have non-empty content except for the optional final assistant message`);
    }
    errors.push(...blockErrors(message, i, toolUseIds));
    errors.push(...pairingErrors(messages, i));
  });

  const lastBlock = messages.length > 0 ? blocksOf(messages[messages.length - 1]).at(-1) : undefined;
  if (messages.at(-1)?.role === 'assistant' && lastBlock?.type === 'text' && /\s$/.test(String(lastBlock.text))) {
    errors.push('messages: final assistant content cannot end with trailing whitespace');
  }
  errors.push(...cacheControlErrors(request));
  return errors;
}

/** Blocks that may carry `cache_control`; thinking blocks may not (Anthropic, "Prompt caching": what cannot be cached). */
const CACHEABLE_BLOCKS: ReadonlySet<string> = new Set(['text', 'image', 'document', 'tool_use', 'tool_result']);

const asBlocks = (value: unknown): AnthropicBlockInput[] =>
  Array.isArray(value) ? value.filter((v): v is AnthropicBlockInput => typeof v === 'object' && v !== null) : [];

/**
 * Prompt-caching rules (Anthropic, "Prompt caching"; @anthropic-ai/sdk's
 * CacheControlEphemeral): at most four breakpoints; `type: "ephemeral"` with
 * an optional `ttl` of `5m` or `1h`; only on blocks that can be cached; and,
 * in request order (tools, system, messages), no 1-hour breakpoint after a
 * 5-minute one.
 */
function cacheControlErrors(request: AnthropicRequestInput): string[] {
  const marked: Array<{ at: string; type: string; control: unknown }> = [];
  const collect = (blocks: AnthropicBlockInput[], at: string) =>
    blocks.forEach((block, j) => {
      if (block.cache_control !== undefined && block.cache_control !== null) marked.push({ at: `${at}.${j}`, type: block.type, control: block.cache_control });
      if (block.type === 'tool_result') collect(asBlocks(block.content), `${at}.${j}.content`);
    });
  asBlocks(request.tools).forEach((tool, i) => {
    if (tool.cache_control !== undefined && tool.cache_control !== null) marked.push({ at: `tools.${i}`, type: 'tool', control: tool.cache_control });
  });
  collect(asBlocks(request.system), 'system');
  request.messages.forEach((message, i) => collect(asBlocks(message.content), `messages.${i}.content`));

  const errors: string[] = [];
  if (marked.length > MAX_CACHE_BREAKPOINTS) {
    errors.push(`A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found ${marked.length}.`);
  }
  let fiveMinutesAt: string | null = null;
  for (const { at, type, control } of marked) {
    if (type !== 'tool' && !CACHEABLE_BLOCKS.has(type)) errors.push(`${at}.cache_control: ${type} blocks cannot be cached`);
    const { type: kind, ttl, ...rest } = (typeof control === 'object' && control !== null ? control : {}) as Record<string, unknown>;
    if (kind !== 'ephemeral') errors.push(`${at}.cache_control.type: Input should be 'ephemeral'`);
    if (ttl !== undefined && ttl !== '5m' && ttl !== '1h') errors.push(`${at}.cache_control.ttl: Input should be '5m' or '1h'`);
    for (const key of Object.keys(rest)) errors.push(`${at}.cache_control.${key}: Extra inputs are not permitted`);
    if (ttl === '1h' && fiveMinutesAt !== null) {
      errors.push(`${at}.cache_control: a ttl='1h' breakpoint must not come after a ttl='5m' one (${fiveMinutesAt}); the order is tools, system, messages`);
    }
    if (ttl !== '1h') fiveMinutesAt ??= at;
  }
  return errors;
}

function blockErrors(message: AnthropicMessageInput, i: number, toolUseIds: Set<string>): string[] {
  const errors: string[] = [];
  let seenOther = false;
  blocksOf(message).forEach((block, j) => {
    const at = `messages.${i}.content.${j}`;
    switch (block.type) {
      case 'text':
        if (typeof block.text !== 'string' || block.text.length === 0) {
          errors.push(`${at}.text: text content blocks must be non-empty`);
        } else if (block.text.trim() === '') {
          errors.push('messages: text content blocks must contain non-whitespace text');
        }
        break;
      case 'tool_use': {
        const id = String(block.id);
        if (message.role !== 'assistant') errors.push(`${at}: tool_use blocks are only allowed in assistant messages`);
        if (!TOOL_USE_ID.test(id)) errors.push(`${at}.id: String should match pattern '^[a-zA-Z0-9_-]+$'`);
        if (toolUseIds.has(id)) errors.push(`${at}: \`tool_use\` ids must be unique`);
        if (typeof block.input !== 'object' || block.input === null || Array.isArray(block.input)) {
          errors.push(`${at}.input: Input should be a valid dictionary`);
        }
        toolUseIds.add(id);
        break;
      }
      case 'tool_result':
        if (message.role !== 'user') errors.push(`${at}: tool_result blocks are only allowed in user messages`);
        if (seenOther) errors.push(`${at}: tool_result blocks must come first in the user message, before any other content`);
        break;
    }
    if (block.type !== 'tool_result') seenOther = true;
  });
  return errors;
}

/** Every tool_use answered in the very next user message; every tool_result answering the message before. */
function pairingErrors(messages: readonly AnthropicMessageInput[], i: number): string[] {
  const message = messages[i];
  if (message.role === 'assistant') {
    const next = messages[i + 1];
    const answered = new Set(next?.role === 'user' ? idsOf(next, 'tool_result') : []);
    const missing = idsOf(message, 'tool_use').filter((id) => !answered.has(id));
    return missing.length === 0
      ? []
      : [
          `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. ` +
            'Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
        ];
  }
  const previous = messages[i - 1];
  const called = new Set(previous?.role === 'assistant' ? idsOf(previous, 'tool_use') : []);
  const answered = new Set<string>();
  const errors: string[] = [];
  blocksOf(message).forEach((block, j) => {
    if (block.type !== 'tool_result') return;
    const id = String(block.tool_use_id);
    if (!called.has(id)) {
      errors.push(
        `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. ` +
          'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
      );
    } else if (answered.has(id)) {
      errors.push(`messages.${i}.content.${j}: each \`tool_use\` id must have exactly one \`tool_result\` block: ${id}`);
    }
    answered.add(id);
  });
  return errors;
}

import { IncomingMessage } from 'node:http';
import { validateAnthropicRequest, validateOpenAIChatMessages, validateOpenAIResponsesInput } from '@app/domain';
import {
  anthropicError,
  anthropicMessage,
  chatCompletion,
  openAIError,
  responsesResponse,
  send,
  sendResponsesStream,
  startStubServer,
  StubReply,
  StubServer,
  StubUsage,
} from './provider-wire';

/**
 * A local stand-in for the three provider APIs the context formats target:
 * OpenAI Chat Completions (`POST /v1/chat/completions`), OpenAI Responses
 * (`POST /v1/responses`) and Anthropic Messages (`POST /v1/messages`).
 *
 * Each request is checked strictly: JSON shape (required fields, roles, block
 * and item types, field types) and then the provider's ordering rules with the
 * domain validators (Anthropic's prompt-caching rules among them: at most four
 * `cache_control` breakpoints, on cacheable blocks, TTLs in order). An invalid request gets a 400 in the provider's error
 * shape (the SDKs turn it into a BadRequestError); a valid one gets a minimal
 * valid response. Every request is recorded, with its problems.
 */
export interface StubRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
  problems: string[];
}

export interface ProviderStub extends StubServer {
  requests: StubRequest[];
}

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isString = (v: unknown): v is string => typeof v === 'string';

/** Collects shape problems with their JSON path. */
class Problems {
  readonly list: string[] = [];
  add(path: string, message: string): void {
    this.list.push(`${path}: ${message}`);
  }
  string(value: unknown, path: string, opts: { nonEmpty?: boolean } = {}): void {
    if (!isString(value)) this.add(path, 'must be a string');
    else if (opts.nonEmpty && value.length === 0) this.add(path, 'must not be empty');
  }
  array(value: unknown, path: string, opts: { nonEmpty?: boolean } = {}): value is unknown[] {
    if (!Array.isArray(value)) {
      this.add(path, 'must be an array');
      return false;
    }
    if (opts.nonEmpty && value.length === 0) this.add(path, 'must not be empty');
    return true;
  }
  object(value: unknown, path: string): value is Record<string, any> {
    if (!isObject(value)) {
      this.add(path, 'must be an object');
      return false;
    }
    return true;
  }
  oneOf(value: unknown, allowed: readonly string[], path: string): void {
    if (!allowed.includes(value as string)) this.add(path, `must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
  }
  /** Fields beyond `allowed` are rejected, as the real APIs reject unknown parameters. */
  only(value: Record<string, any>, allowed: readonly string[], path: string): void {
    for (const key of Object.keys(value)) if (!allowed.includes(key)) this.add(`${path}.${key}`, 'unknown field');
  }
}

const isDataUrl = (url: unknown) => isString(url) && /^data:[\w.+-]+\/[\w.+-]+;base64,[A-Za-z0-9+/]*={0,2}$/.test(url);
const isHttpUrl = (url: unknown) => isString(url) && /^https?:\/\//.test(url);

// ------------------------------------------------------------ Chat Completions

const CHAT_ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;

function chatTextParts(content: unknown, path: string, p: Problems): void {
  if (isString(content)) return;
  if (!p.array(content, path, { nonEmpty: true })) return;
  content.forEach((part, i) => {
    if (!p.object(part, `${path}[${i}]`)) return;
    p.only(part, ['type', 'text'], `${path}[${i}]`);
    p.oneOf(part.type, ['text'], `${path}[${i}].type`);
    p.string(part.text, `${path}[${i}].text`);
  });
}

function chatUserContent(content: unknown, path: string, p: Problems): void {
  if (isString(content)) return;
  if (!p.array(content, path, { nonEmpty: true })) return;
  content.forEach((part, i) => {
    const at = `${path}[${i}]`;
    if (!p.object(part, at)) return;
    switch (part.type) {
      case 'text':
        p.only(part, ['type', 'text'], at);
        p.string(part.text, `${at}.text`);
        break;
      case 'image_url':
        p.only(part, ['type', 'image_url'], at);
        if (p.object(part.image_url, `${at}.image_url`)) {
          if (!isDataUrl(part.image_url.url) && !isHttpUrl(part.image_url.url)) p.add(`${at}.image_url.url`, 'must be a data: or http(s) URL');
          if (part.image_url.detail !== undefined) p.oneOf(part.image_url.detail, ['auto', 'low', 'high'], `${at}.image_url.detail`);
        }
        break;
      case 'file':
        p.only(part, ['type', 'file'], at);
        if (p.object(part.file, `${at}.file`)) {
          if (part.file.file_data === undefined && part.file.file_id === undefined) p.add(`${at}.file`, 'needs file_data or file_id');
          if (part.file.file_data !== undefined && !isDataUrl(part.file.file_data)) p.add(`${at}.file.file_data`, 'must be a data: URL');
        }
        break;
      default:
        p.add(`${at}.type`, `unsupported content part type ${JSON.stringify(part.type)}`);
    }
  });
}

function checkChatRequest(body: any): string[] {
  const p = new Problems();
  if (!p.object(body, '$')) return p.list;
  p.string(body.model, 'model', { nonEmpty: true });
  if (!p.array(body.messages, 'messages', { nonEmpty: true })) return p.list;
  body.messages.forEach((m: unknown, i: number) => {
    const at = `messages[${i}]`;
    if (!p.object(m, at)) return;
    p.oneOf(m.role, CHAT_ROLES, `${at}.role`);
    switch (m.role) {
      case 'system':
      case 'developer':
        p.only(m, ['role', 'content', 'name'], at);
        chatTextParts(m.content, `${at}.content`, p);
        break;
      case 'user':
        p.only(m, ['role', 'content', 'name'], at);
        chatUserContent(m.content, `${at}.content`, p);
        break;
      case 'assistant':
        p.only(m, ['role', 'content', 'tool_calls', 'name', 'refusal'], at);
        if (m.content !== null && m.content !== undefined) chatTextParts(m.content, `${at}.content`, p);
        if (m.tool_calls !== undefined && p.array(m.tool_calls, `${at}.tool_calls`)) {
          m.tool_calls.forEach((c: unknown, k: number) => {
            const cat = `${at}.tool_calls[${k}]`;
            if (!p.object(c, cat)) return;
            p.only(c, ['id', 'type', 'function'], cat);
            p.string(c.id, `${cat}.id`, { nonEmpty: true });
            p.oneOf(c.type, ['function'], `${cat}.type`);
            if (p.object(c.function, `${cat}.function`)) {
              p.only(c.function, ['name', 'arguments'], `${cat}.function`);
              p.string(c.function.name, `${cat}.function.name`, { nonEmpty: true });
              p.string(c.function.arguments, `${cat}.function.arguments`);
            }
          });
        }
        break;
      case 'tool':
        p.only(m, ['role', 'content', 'tool_call_id'], at);
        p.string(m.tool_call_id, `${at}.tool_call_id`, { nonEmpty: true });
        chatTextParts(m.content, `${at}.content`, p);
        break;
    }
  });
  return p.list.length > 0 ? p.list : validateOpenAIChatMessages(body.messages as any[]);
}

// ------------------------------------------------------------------ Responses

function responsesInputContent(content: unknown, path: string, p: Problems): void {
  if (!p.array(content, path)) return;
  content.forEach((part, i) => {
    const at = `${path}[${i}]`;
    if (!p.object(part, at)) return;
    switch (part.type) {
      case 'input_text':
        p.only(part, ['type', 'text'], at);
        p.string(part.text, `${at}.text`);
        break;
      case 'input_image':
        p.only(part, ['type', 'image_url', 'file_id', 'detail'], at);
        p.oneOf(part.detail, ['auto', 'low', 'high'], `${at}.detail`);
        if (!isDataUrl(part.image_url) && !isHttpUrl(part.image_url) && part.file_id === undefined) p.add(at, 'needs image_url or file_id');
        break;
      case 'input_file':
        p.only(part, ['type', 'file_data', 'file_url', 'file_id', 'filename'], at);
        if (part.file_data === undefined && part.file_url === undefined && part.file_id === undefined) p.add(at, 'needs file_data, file_url or file_id');
        if (part.file_data !== undefined && !isDataUrl(part.file_data)) p.add(`${at}.file_data`, 'must be a data: URL');
        break;
      default:
        p.add(`${at}.type`, `unsupported input content type ${JSON.stringify(part.type)}`);
    }
  });
}

function checkResponsesRequest(body: any): string[] {
  const p = new Problems();
  if (!p.object(body, '$')) return p.list;
  p.string(body.model, 'model', { nonEmpty: true });
  if (isString(body.input)) return p.list;
  if (!p.array(body.input, 'input', { nonEmpty: true })) return p.list;
  body.input.forEach((item: unknown, i: number) => {
    const at = `input[${i}]`;
    if (!p.object(item, at)) return;
    // The stub stores nothing, as the API with store: false: every item id is one it does not know.
    if (item.id !== undefined) p.add(`${at}.id`, `Item with id '${String(item.id)}' not found. Items are not persisted when \`store\` is set to false.`);
    switch (item.type ?? 'message') {
      case 'message':
        p.only(item, ['type', 'role', 'content', 'id', 'status', 'phase'], at);
        p.oneOf(item.role, ['system', 'developer', 'user', 'assistant'], `${at}.role`);
        if (isString(item.content)) break;
        if (item.role === 'assistant') {
          // An assistant message as input carries output content only ("Supported values are: 'output_text' and 'refusal'").
          if (!p.array(item.content, `${at}.content`)) break;
          item.content.forEach((part: unknown, k: number) => {
            if (!p.object(part, `${at}.content[${k}]`)) return;
            p.oneOf(part.type, ['output_text', 'refusal'], `${at}.content[${k}].type`);
            p.string(part.type === 'refusal' ? part.refusal : part.text, `${at}.content[${k}].text`);
          });
        } else {
          responsesInputContent(item.content, `${at}.content`, p);
        }
        break;
      case 'function_call':
        p.only(item, ['type', 'call_id', 'name', 'arguments', 'id', 'status'], at);
        p.string(item.call_id, `${at}.call_id`, { nonEmpty: true });
        p.string(item.name, `${at}.name`, { nonEmpty: true });
        p.string(item.arguments, `${at}.arguments`);
        break;
      case 'function_call_output':
        p.only(item, ['type', 'call_id', 'output', 'id', 'status'], at);
        p.string(item.call_id, `${at}.call_id`, { nonEmpty: true });
        if (!isString(item.output)) responsesInputContent(item.output, `${at}.output`, p);
        break;
      default:
        p.add(`${at}.type`, `unsupported item type ${JSON.stringify(item.type)}`);
    }
  });
  return p.list.length > 0 ? p.list : validateOpenAIResponsesInput(body.input as any[]);
}

// ------------------------------------------------------------------ Anthropic

const ANTHROPIC_IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];

function anthropicSource(source: unknown, mediaTypes: readonly string[], path: string, p: Problems): void {
  if (!p.object(source, path)) return;
  if (source.type === 'base64') {
    p.only(source, ['type', 'media_type', 'data'], path);
    p.oneOf(source.media_type, mediaTypes, `${path}.media_type`);
    if (!isString(source.data) || !/^[A-Za-z0-9+/]*={0,2}$/.test(source.data)) p.add(`${path}.data`, 'must be base64');
  } else if (source.type === 'url') {
    p.only(source, ['type', 'url'], path);
    if (!isHttpUrl(source.url)) p.add(`${path}.url`, 'must be an http(s) URL');
  } else {
    p.add(`${path}.type`, `unsupported source type ${JSON.stringify(source.type)}`);
  }
}

function anthropicBlock(block: unknown, path: string, p: Problems, allowed: readonly string[]): void {
  if (!p.object(block, path)) return;
  if (!allowed.includes(block.type)) {
    p.add(`${path}.type`, `unexpected block type ${JSON.stringify(block.type)}`);
    return;
  }
  switch (block.type) {
    case 'text':
      p.only(block, ['type', 'text', 'cache_control'], path);
      p.string(block.text, `${path}.text`);
      break;
    case 'image':
      p.only(block, ['type', 'source', 'cache_control'], path);
      anthropicSource(block.source, ANTHROPIC_IMAGE_TYPES, `${path}.source`, p);
      break;
    case 'document':
      p.only(block, ['type', 'source', 'title', 'cache_control'], path);
      anthropicSource(block.source, ['application/pdf'], `${path}.source`, p);
      break;
    case 'tool_use':
      p.only(block, ['type', 'id', 'name', 'input', 'cache_control'], path);
      p.string(block.id, `${path}.id`, { nonEmpty: true });
      p.string(block.name, `${path}.name`, { nonEmpty: true });
      break;
    case 'tool_result':
      p.only(block, ['type', 'tool_use_id', 'content', 'is_error', 'cache_control'], path);
      p.string(block.tool_use_id, `${path}.tool_use_id`, { nonEmpty: true });
      if (block.is_error !== undefined && typeof block.is_error !== 'boolean') p.add(`${path}.is_error`, 'must be a boolean');
      if (block.content !== undefined && !isString(block.content) && p.array(block.content, `${path}.content`)) {
        block.content.forEach((inner: unknown, k: number) => anthropicBlock(inner, `${path}.content[${k}]`, p, ['text', 'image', 'document']));
      }
      break;
  }
}

function checkAnthropicRequest(body: any, headers: IncomingMessage['headers']): string[] {
  const p = new Problems();
  if (!isString(headers['anthropic-version'])) p.add('headers', 'anthropic-version is required');
  // This SDK version sends the key as a bearer token; x-api-key is the older header.
  if (!isString(headers['x-api-key']) && !/^Bearer \S+$/.test(headers.authorization ?? '')) p.add('headers', 'an API key is required');
  if (!p.object(body, '$')) return p.list;
  p.string(body.model, 'model', { nonEmpty: true });
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) p.add('max_tokens', 'must be a positive integer');
  if (body.system !== undefined && !isString(body.system) && p.array(body.system, 'system')) {
    body.system.forEach((b: unknown, i: number) => anthropicBlock(b, `system[${i}]`, p, ['text']));
  }
  if (body.tools !== undefined && p.array(body.tools, 'tools')) {
    body.tools.forEach((t: unknown, i: number) => {
      if (!p.object(t, `tools[${i}]`)) return;
      p.only(t, ['name', 'description', 'input_schema', 'cache_control'], `tools[${i}]`);
      p.string(t.name, `tools[${i}].name`, { nonEmpty: true });
      p.object(t.input_schema, `tools[${i}].input_schema`);
    });
  }
  if (!p.array(body.messages, 'messages')) return p.list;
  body.messages.forEach((m: unknown, i: number) => {
    const at = `messages[${i}]`;
    if (!p.object(m, at)) return;
    p.only(m, ['role', 'content'], at);
    p.oneOf(m.role, ['user', 'assistant'], `${at}.role`);
    if (isString(m.content)) return;
    if (!p.array(m.content, `${at}.content`)) return;
    const allowed = m.role === 'assistant' ? ['text', 'tool_use'] : ['text', 'image', 'document', 'tool_result'];
    m.content.forEach((b: unknown, k: number) => anthropicBlock(b, `${at}.content[${k}]`, p, allowed));
  });
  return p.list.length > 0 ? p.list : validateAnthropicRequest(body as any);
}

// --------------------------------------------------------------------- server

/**
 * Drives an agent loop (the examples' end-to-end test): a request whose last
 * message is not a tool result gets one answer calling every tool of `calls`
 * at once; one ending with tool results gets `finalText`. Each answer reports
 * its usage. A scripted tool the request does not declare is a problem: the
 * model could not have called it.
 */
export interface AgentScript {
  calls: Array<{ name: string; input: Record<string, unknown> }>;
  finalText: string;
  usage: { calls: StubUsage; final: StubUsage };
}

type Route = '/v1/chat/completions' | '/v1/responses' | '/v1/messages';

const ROUTES: Record<Route, (body: any, headers: IncomingMessage['headers']) => string[]> = {
  '/v1/chat/completions': (body) => checkChatRequest(body),
  '/v1/responses': (body) => checkResponsesRequest(body),
  '/v1/messages': (body, headers) => checkAnthropicRequest(body, headers),
};
const isRoute = (path: string): path is Route => Object.hasOwn(ROUTES, path);

function endsWithToolResults(route: Route, body: any): boolean {
  if (route === '/v1/chat/completions') return body.messages.at(-1)?.role === 'tool';
  if (route === '/v1/responses') return Array.isArray(body.input) && body.input.at(-1)?.type === 'function_call_output';
  const last = body.messages.at(-1);
  return last?.role === 'user' && Array.isArray(last.content) && last.content.some((b: any) => b.type === 'tool_result');
}

function declaredTools(route: Route, body: any): string[] {
  const tools: any[] = Array.isArray(body.tools) ? body.tools : [];
  return tools.map((t) => (route === '/v1/chat/completions' ? t.function?.name : t.name));
}

function scriptedReply(script: AgentScript, route: Route, body: any, turn: number): { reply: StubReply; problems: string[] } {
  if (endsWithToolResults(route, body)) return { reply: { text: script.finalText, usage: script.usage.final }, problems: [] };
  const declared = declaredTools(route, body);
  return {
    reply: { calls: script.calls.map((c, i) => ({ id: `call_${turn}_${i}`, ...c })), usage: script.usage.calls },
    problems: script.calls.filter((c) => !declared.includes(c.name)).map((c) => `tools: ${c.name} is not declared`),
  };
}

/** Answers "ok" to every valid request, or plays `options.agent`. */
export async function startProviderStub(options: { agent?: AgentScript } = {}): Promise<ProviderStub> {
  const requests: StubRequest[] = [];
  const server = await startStubServer((req, res, path, body) => {
    if (req.method !== 'POST' || !isRoute(path)) return send(res, 404, openAIError(`no route ${req.method} ${path}`));
    const problems = body === undefined ? ['body is not JSON'] : ROUTES[path](body, req.headers);
    const scripted = options.agent && problems.length === 0 ? scriptedReply(options.agent, path, body, requests.length + 1) : undefined;
    problems.push(...(scripted?.problems ?? []));
    requests.push({ path, headers: req.headers, body, problems });
    const anthropic = path === '/v1/messages';
    if (problems.length > 0) return send(res, 400, anthropic ? anthropicError(problems.join('; ')) : openAIError(problems.join('; ')));
    const reply = scripted?.reply ?? 'ok';
    if (path === '/v1/chat/completions') return send(res, 200, chatCompletion(body.model, reply));
    if (path === '/v1/responses') return body.stream === true ? sendResponsesStream(res, responsesResponse(body.model, reply)) : send(res, 200, responsesResponse(body.model, reply));
    return send(res, 200, anthropicMessage(body.model, reply));
  });
  return { ...server, requests };
}

import { IncomingMessage } from 'node:http';
import { Recorded } from './awaiting';
import { anthropicError, anthropicMessage, chatCompletion, openAIError, send, startStubServer, StubServer } from './provider-wire';

/**
 * A local LLM provider for the summarizers: OpenAI Chat Completions
 * (`POST /v1/chat/completions`) and Anthropic Messages (`POST /v1/messages`),
 * in their wire formats, so the official SDKs talk to it unchanged.
 *
 * The requested model name scripts the answer:
 *   stub-ok                 a `<summary>` naming how many turns it read
 *   stub-500                HTTP 500
 *   stub-slow-<ms>          waits, then answers like stub-ok
 *   stub-empty              an empty answer
 *   stub-oversized          a summary far above any summaryMaxTokens
 *   stub-overflow-<chars>   the provider's context-length error while the prompt is longer than <chars>
 * Requests that break the provider's rules (roles, a missing field) get a 400
 * like the real API; every request is recorded.
 */
export interface LlmRequest {
  api: 'openai' | 'anthropic';
  model: string;
  /** System prompt and turns, provider-neutral. */
  system: string;
  messages: Array<{ role: string; content: string }>;
  body: any;
  headers: IncomingMessage['headers'];
  receivedAt: number;
  /** Why it was refused, if it was. */
  problems: string[];
}

/** The OpenAI base URL is `url` plus /v1. */
export interface LlmStub extends StubServer {
  requests: LlmRequest[];
  /** The first request (received already or still to come) that satisfies `predicate`; rejects naming `what` after `timeoutMs`. */
  received: (predicate: (request: LlmRequest, index: number) => boolean, what: string, timeoutMs?: number) => Promise<LlmRequest>;
}

const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((block: any) => (block?.type === 'text' ? block.text : '')).join('')
      : '';

/** The summarizer rules both APIs enforce on what we send: alternating user/assistant turns, user first and last, no tools. */
function turnProblems(messages: Array<{ role: string; content: string }>, body: any): string[] {
  const problems: string[] = [];
  if (messages.length === 0) problems.push('messages must not be empty');
  messages.forEach((m, i) => {
    if (m.role !== 'user' && m.role !== 'assistant') problems.push(`messages[${i}].role ${m.role}`);
    if (i > 0 && messages[i - 1].role === m.role) problems.push(`messages[${i}] repeats role ${m.role}`);
    if (!m.content) problems.push(`messages[${i}] is empty`);
  });
  if (messages[0]?.role !== 'user') problems.push('the first turn must be the user');
  if (body.tools !== undefined) problems.push('a summarizer call must not offer tools');
  return problems;
}

function parseRequest(path: string, body: any, headers: IncomingMessage['headers']): LlmRequest | null {
  if (typeof body !== 'object' || body === null) return null;
  const base = { model: String(body.model ?? ''), body, headers, receivedAt: Date.now() };
  if (path === '/v1/chat/completions') {
    const all = Array.isArray(body.messages) ? body.messages : [];
    const system = all.filter((m: any) => m.role === 'system').map((m: any) => textOf(m.content)).join('\n');
    const messages = all.filter((m: any) => m.role !== 'system').map((m: any) => ({ role: m.role, content: textOf(m.content) }));
    const problems = turnProblems(messages, body);
    if (!headers.authorization) problems.push('missing Authorization');
    return { api: 'openai', system, messages, problems, ...base };
  }
  if (path === '/v1/messages') {
    const messages = (Array.isArray(body.messages) ? body.messages : []).map((m: any) => ({ role: m.role, content: textOf(m.content) }));
    const problems = turnProblems(messages, body);
    if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) problems.push('max_tokens is required');
    if (!headers['anthropic-version']) problems.push('missing anthropic-version');
    if (!headers['x-api-key'] && !headers.authorization) problems.push('missing credentials');
    return { api: 'anthropic', system: textOf(body.system), messages, problems, ...base };
  }
  return null;
}

function errorBody(api: LlmRequest['api'], type: string, message: string, code: string | null = null) {
  return api === 'openai' ? openAIError(message, type, code) : anthropicError(message, type);
}

function answer(api: LlmRequest['api'], model: string, text: string) {
  return api === 'openai' ? chatCompletion(model, text) : anthropicMessage(model, text);
}

export const stubSummary = (request: Pick<LlmRequest, 'api' | 'messages'>) =>
  `## Goal\n- stub summary by ${request.api} of ${request.messages.length} turn(s)\n\n## Next Steps\n- continue`;

export async function startLlmStub(): Promise<LlmStub> {
  const requests = new Recorded<LlmRequest>();
  const server = await startStubServer((req, res, path, body) => {
    const request = req.method === 'POST' ? parseRequest(path, body, req.headers) : null;
    if (!request) return send(res, 404, errorBody('openai', 'not_found', `no route ${req.method} ${path}`));
    requests.push(request);
    const { api, model } = request;
    if (request.problems.length > 0) return send(res, 400, errorBody(api, 'invalid_request_error', request.problems.join('; ')));
    const ok = () => send(res, 200, answer(api, model, `<summary>\n${stubSummary(request)}\n</summary>`));
    if (model === 'stub-500') return send(res, 500, errorBody(api, api === 'openai' ? 'server_error' : 'api_error', 'stub: internal error'));
    if (model === 'stub-empty') return send(res, 200, answer(api, model, ''));
    if (model === 'stub-oversized') return send(res, 200, answer(api, model, `<summary>\n${'lorem ipsum dolor sit amet '.repeat(4000)}\n</summary>`));
    const slow = /^stub-slow-(\d+)$/.exec(model);
    if (slow) {
      const timer = setTimeout(ok, Number(slow[1]));
      res.on('close', () => clearTimeout(timer));
      return;
    }
    const overflow = /^stub-overflow-(\d+)$/.exec(model);
    if (overflow) {
      const chars = request.messages.reduce((sum, m) => sum + m.content.length, 0);
      if (chars > Number(overflow[1])) {
        return api === 'openai'
          ? send(res, 400, errorBody(api, 'invalid_request_error', `This model's maximum context length is ${overflow[1]} tokens. However, your messages resulted in ${chars} tokens.`, 'context_length_exceeded'))
          : send(res, 400, errorBody(api, 'invalid_request_error', `prompt is too long: ${chars} tokens > ${overflow[1]} maximum`));
      }
    }
    return ok();
  });
  return { ...server, requests: requests.items, received: (predicate, what, timeoutMs) => requests.first(predicate, what, timeoutMs) };
}

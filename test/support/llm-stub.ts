import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

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

export interface LlmStub {
  /** http://127.0.0.1:<port>; the OpenAI base URL is this plus /v1. */
  url: string;
  requests: LlmRequest[];
  close: () => Promise<void>;
}

const send = (res: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
};

async function readJson(req: IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
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
  return api === 'openai' ? { error: { message, type, param: null, code } } : { type: 'error', error: { type, message } };
}

function answer(api: LlmRequest['api'], model: string, text: string) {
  return api === 'openai'
    ? {
        id: 'chatcmpl-stub',
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, finish_reason: 'stop', logprobs: null }],
        usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
      }
    : {
        id: 'msg_stub',
        type: 'message',
        role: 'assistant',
        model,
        content: [{ type: 'text', text }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 10 },
      };
}

export const stubSummary = (request: Pick<LlmRequest, 'api' | 'messages'>) =>
  `## Goal\n- stub summary by ${request.api} of ${request.messages.length} turn(s)\n\n## Next Steps\n- continue`;

export async function startLlmStub(): Promise<LlmStub> {
  const requests: LlmRequest[] = [];
  const server: Server = createServer(async (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const body = await readJson(req);
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

/** What the local provider stubs share: a JSON server and the providers' wire shapes. */
export interface StubServer {
  /** http://127.0.0.1:<port> */
  url: string;
  close: () => Promise<void>;
}

export function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Serves on a free loopback port; `handle` gets the path without its query and the body as JSON (undefined when it is not JSON). */
export async function startStubServer(handle: (req: IncomingMessage, res: ServerResponse, path: string, body: any) => void): Promise<StubServer> {
  const server = createServer(async (req, res) => handle(req, res, (req.url ?? '').split('?')[0], await readJson(req)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

export const openAIError = (message: string, type = 'invalid_request_error', code: string | null = null) => ({
  error: { message, type, param: null, code },
});

export const anthropicError = (message: string, type = 'invalid_request_error') => ({ type: 'error', error: { type, message } });

/** Token figures a stub reports, in our terms: uncached input, cache reads and writes, output. */
export interface StubUsage {
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
}

export interface StubToolCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** What a stub answers: text, tool calls, or both, with the usage to report. A bare string is a text answer. */
export interface StubReply {
  text?: string;
  calls?: StubToolCall[];
  usage?: StubUsage;
}

const ONE_TOKEN_EACH: StubUsage = { input: 1, cacheRead: 0, cacheWrite: 0, output: 1 };

function replyOf(reply: string | StubReply): Required<Pick<StubReply, 'calls' | 'usage'>> & Pick<StubReply, 'text'> {
  const { text, calls = [], usage = ONE_TOKEN_EACH } = typeof reply === 'string' ? { text: reply } : reply;
  return { text, calls, usage };
}

/** A minimal valid Chat Completions response. OpenAI counts cached tokens inside prompt_tokens and reports no cache writes. */
export function chatCompletion(model: string, reply: string | StubReply) {
  const { text, calls, usage } = replyOf(reply);
  const toolCalls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.input) } }));
  return {
    id: 'chatcmpl-stub',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: text ?? null, refusal: null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
        finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
        logprobs: null,
      },
    ],
    usage: {
      prompt_tokens: usage.input + usage.cacheRead,
      completion_tokens: usage.output,
      total_tokens: usage.input + usage.cacheRead + usage.output,
      prompt_tokens_details: { cached_tokens: usage.cacheRead },
    },
  };
}

/** A minimal valid Responses API response; usage counted as in Chat Completions. */
export function responsesResponse(model: string, reply: string | StubReply) {
  const { text, calls, usage } = replyOf(reply);
  return {
    id: 'resp_stub',
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'completed',
    error: null,
    incomplete_details: null,
    instructions: null,
    model,
    output: [
      ...(text !== undefined
        ? [{ type: 'message', id: 'msg_stub', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] }]
        : []),
      ...calls.map((c) => ({
        type: 'function_call',
        id: `fc_${c.id}`,
        call_id: c.id,
        name: c.name,
        arguments: JSON.stringify(c.input),
        status: 'completed',
      })),
    ],
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    usage: {
      input_tokens: usage.input + usage.cacheRead,
      output_tokens: usage.output,
      total_tokens: usage.input + usage.cacheRead + usage.output,
      input_tokens_details: { cached_tokens: usage.cacheRead },
      output_tokens_details: { reasoning_tokens: 0 },
    },
  };
}

/**
 * A Responses answer as the API streams it (`stream: true`): server-sent
 * events from response.created to response.completed, each output item
 * added then done, a message's text as one delta.
 */
export function sendResponsesStream(res: ServerResponse, response: ReturnType<typeof responsesResponse>): void {
  const { output, ...head } = response;
  const events: Array<Record<string, unknown>> = [{ type: 'response.created', response: { ...head, status: 'in_progress', output: [], usage: null } }];
  output.forEach((item, index) => {
    events.push({ type: 'response.output_item.added', output_index: index, item: { ...item, status: 'in_progress', ...('content' in item ? { content: [] } : {}) } });
    if ('content' in item) for (const part of item.content) events.push({ type: 'response.output_text.delta', item_id: item.id, output_index: index, content_index: 0, delta: part.text });
    events.push({ type: 'response.output_item.done', output_index: index, item });
  });
  events.push({ type: 'response.completed', response });
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  events.forEach((event, index) => res.write(`event: ${String(event.type)}\ndata: ${JSON.stringify({ ...event, sequence_number: index })}\n\n`));
  res.end();
}

/** A minimal valid Anthropic Messages response. Anthropic's input_tokens leave out cache reads and writes. */
export function anthropicMessage(model: string, reply: string | StubReply) {
  const { text, calls, usage } = replyOf(reply);
  return {
    id: 'msg_stub',
    type: 'message',
    role: 'assistant',
    model,
    content: [
      ...(text !== undefined ? [{ type: 'text', text }] : []),
      ...calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.input })),
    ],
    stop_reason: calls.length > 0 ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: {
      input_tokens: usage.input,
      output_tokens: usage.output,
      cache_read_input_tokens: usage.cacheRead,
      cache_creation_input_tokens: usage.cacheWrite,
    },
  };
}

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

/** A minimal valid Chat Completions response. */
export function chatCompletion(model: string, text: string) {
  return {
    id: 'chatcmpl-stub',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, finish_reason: 'stop', logprobs: null }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
}

/** A minimal valid Anthropic Messages response. */
export function anthropicMessage(model: string, text: string) {
  return {
    id: 'msg_stub',
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  };
}

import { request } from 'node:http';
import { agentSession } from '../support/agent-script';
import { Client } from '../support/client';
import { LlmStub, startLlmStub } from '../support/llm-stub';
import { exited, startService, TestService } from '../support/service';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** A POST over its own connection: resolves with the answer, rejects on a reset or a close without one. */
function post(baseUrl: string, path: string, key: string, body: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request(
      `${baseUrl}${path}`,
      { method: 'POST', agent: false, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (piece: string) => (text += piece));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * SIGTERM while a `POST .../compactions {wait: true}` waits for a slow
 * summary: the wait ends with the drain and the request is answered (202
 * with the compaction's state), not cut when the drain's grace runs out.
 */
describe('faults: a long-poll in flight at SIGTERM', () => {
  let stub: LlmStub;
  let service: TestService;

  beforeAll(async () => {
    stub = await startLlmStub();
    service = await startService({
      env: { OPENAI_BASE_URL: `${stub.url}/v1`, OPENAI_API_KEY: 'sk-test', SHUTDOWN_TIMEOUT_MS: '10000' },
    });
  });
  afterAll(async () => {
    await service?.stop();
    await stub?.close();
  });

  it('answers a compaction wait 202 with its state, then the API exits cleanly', async () => {
    const client = new Client(service.baseUrl);
    const { key } = await client.createTenant();
    // The summary takes far longer than the drain may: only an answer given at the drain's start reaches the client.
    const agent = await agentSession(client, key, 'slow-summary', { compaction: { summarizer: 'openai', model: 'stub-slow-60000' } });
    const from = stub.requests.length;
    const { markerSeq } = await agent.untilMarker();
    await stub.received((_, i) => i >= from, 'the summarizer call', 20_000);

    const waiting = post(service.baseUrl, '/v1/sessions/slow-summary/compactions', key, { wait: true, timeoutMs: 120_000 });
    // Not a pass criterion: lets the request reach its wait before the signal.
    await new Promise((r) => setTimeout(r, 1000));
    service.api.child.kill('SIGTERM');

    const answer = await waiting;
    expect(answer.status).toBe(202);
    expect(answer.body).toMatchObject({ markerSeq, joined: true });
    expect(['pending', 'running']).toContain(answer.body.status);
    expect(answer.headers.connection).toBe('close');
    await exited(service.api.child);
    expect(service.api.child.exitCode).toBe(0);
  }, 90_000);
});

import { agentSession } from './support/agent-script';
import { Client, expectProblem, userMessage } from './support/client';
import { exited, startService, TestService, waitFor } from './support/service';
import { openStream as openSse, SseStream } from './support/sse';

/**
 * The live event stream: GET /v1/sessions/{id}/events/stream as
 * Server-Sent Events, against the real service. Appends, the service's own
 * events (a config change, a manual marker), a worker's compaction and an
 * API prune arrive live (the main service's heartbeat is
 * a minute long, so only the Redis wake-up can deliver them in time); a
 * reconnect with Last-Event-ID misses and repeats nothing; heartbeats, the
 * per-tenant cap, 404s and the SIGTERM drain on a second service.
 */

const openStream = (service: TestService, key: string, sessionId: string, options?: { lastEventId?: number; query?: string }) =>
  openSse(service.baseUrl, key, sessionId, options);

async function expectOpen(service: TestService, key: string, sessionId: string, options?: { lastEventId?: number; query?: string }) {
  const { response, stream } = await openStream(service, key, sessionId, options);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  return stream!;
}

/** The problem answer of a refused stream, read like any other response. */
async function refused(service: TestService, key: string, sessionId: string, lastEventId?: string) {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
  const response = await fetch(`${service.baseUrl}/v1/sessions/${encodeURIComponent(sessionId)}/events/stream`, { headers });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: JSON.parse(text), text };
}

const withoutSse = (events: any[]) => events.map(({ sseId: _id, sseEvent: _event, ...event }) => event);

describe('live event stream (SSE)', () => {
  let service: TestService;
  let client: Client;
  let key: string;
  const streams: SseStream[] = [];
  const tracked = (stream: SseStream) => (streams.push(stream), stream);

  beforeAll(async () => {
    // A minute-long heartbeat: a live event here comes from the Redis wake-up, not the safety-net poll.
    service = await startService({ env: { SSE_HEARTBEAT_MS: '60000' } });
    client = new Client(service.baseUrl);
    ({ key } = await client.createTenant('sse'));
  });
  afterAll(async () => {
    for (const stream of streams) stream.close();
    await service?.stop();
  });

  it('sends the log, then each appended event live, in order: id = seq, event = type, data = the event as GET .../events has it', async () => {
    const session = await client.createSession(key, { id: 'sse-live' });
    const stream = tracked(await expectOpen(service, key, session.id));
    await stream.untilSeq(1);
    expect(stream.response.headers.get('cache-control')).toMatch(/no-store/);

    for (let i = 1; i <= 3; i++) {
      const res = await client.append(key, session.id, { events: [userMessage(`live ${i}`), userMessage(`live ${i}b`)] });
      expect(res.status).toBe(201);
      // Each batch arrives before the next is sent: live, not a catch-up at the end.
      await stream.untilSeq(res.body.headSeq);
    }
    const log = await client.allEvents(key, session.id);
    expect(log.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(withoutSse(stream.events)).toEqual(log);
    expect(stream.events.map((e) => [e.sseId, e.sseEvent])).toEqual(log.map((e) => [String(e.seq), e.type]));
  });

  it('resumes after a dropped connection with Last-Event-ID (or ?afterSeq): no event missed or repeated', async () => {
    const session = await client.createSession(key, { id: 'sse-resume' });
    await client.append(key, session.id, { events: [userMessage('before 1'), userMessage('before 2')] });
    const first = tracked(await expectOpen(service, key, session.id));
    await first.untilSeq(3);
    first.close();
    await first.ended;
    const seen = first.events.map((e) => e.seq);
    const lastSeen = seen.at(-1)!;

    // Appended while the client is away.
    await client.append(key, session.id, { events: [userMessage('while away 1'), userMessage('while away 2')] });
    const second = tracked(await expectOpen(service, key, session.id, { lastEventId: lastSeen }));
    await second.untilSeq(5);
    const more = await client.append(key, session.id, { events: [userMessage('after reconnect')] });
    await second.untilSeq(more.body.headSeq);

    const log = await client.allEvents(key, session.id);
    expect([...first.events, ...second.events].map((e) => e.seq)).toEqual(log.map((e) => e.seq));
    expect(withoutSse([...first.events, ...second.events])).toEqual(log);

    // ?afterSeq for clients that cannot set the header (a browser's first EventSource request).
    const byQuery = tracked(await expectOpen(service, key, session.id, { query: '?afterSeq=4' }));
    await byQuery.untilSeq(6);
    expect(byQuery.events.map((e) => e.seq)).toEqual([5, 6]);
    byQuery.close();
  });

  it("the service's own events on a request arrive live too: a config change and a manual compaction marker", async () => {
    const session = await client.createSession(key, { id: 'sse-own', config: { compaction: { auto: false } } });
    const stream = tracked(await expectOpen(service, key, session.id));
    await stream.untilSeq(1);

    expect((await client.request('PATCH', `/v1/sessions/${session.id}`, { key, body: { config: { pins: { maxTokens: 500 } } } })).status).toBe(200);
    await stream.untilSeq(2);
    const marker = await client.request('POST', `/v1/sessions/${session.id}/compactions`, { key, body: {} });
    expect(marker.status).toBe(202);
    await stream.untilSeq(3);

    // The marker's job may have answered already (seq 4 on): only what the requests wrote is asserted.
    expect(stream.events.filter((e) => e.seq <= 3).map((e) => [e.seq, e.type])).toEqual([
      [1, 'session.created'],
      [2, 'session.config_changed'],
      [3, 'compaction.requested'],
    ]);
    expect(marker.body.markerSeq).toBe(3);
  });

  it("a worker's compaction.completed arrives live", async () => {
    const agent = await agentSession(client, key, 'sse-compaction');
    const stream = tracked(await expectOpen(service, key, agent.sessionId));
    const { markerSeq } = await agent.untilMarker();
    await stream.until((messages) => messages.some((m) => m.event === 'compaction.completed'));
    const completed = stream.events.find((e) => e.type === 'compaction.completed');
    expect(completed.data.markerSeq).toBe(markerSeq);
    // Everything up to it, in order, no gap.
    const upTo = stream.events.filter((e) => e.seq <= completed.seq).map((e) => e.seq);
    expect(upTo).toEqual(Array.from({ length: completed.seq }, (_, i) => i + 1));
  });

  it('a tool_outputs.pruned written by the prune job arrives live', async () => {
    const id = 'sse-prune';
    await client.createSession(key, { id, model: 'gpt-4.1', system: 'You are a careful coding agent.', config: { preset: 'opencode', toolOutput: { enabled: false } } });
    const answer = { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'text', text: 'Done.' }] } } };
    await client.append(key, id, {
      events: [
        userMessage('Turn 1: read the build log'),
        { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId: 'p-1', name: 'bash', input: { command: 'cat build.log' } }] } } },
        { type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId: 'p-1', name: 'bash', output: 'x'.repeat(200_000) }] } } },
        answer,
        userMessage('Turn 2'),
        answer,
        userMessage('Turn 3'),
        answer,
      ],
    });
    const stream = tracked(await expectOpen(service, key, id));
    const pruned = await client.request('POST', `/v1/sessions/${id}/prune`, { key, body: { wait: true } });
    expect(pruned.body.prune.status).toBe('pruned');
    await stream.until((messages) => messages.some((m) => m.event === 'tool_outputs.pruned'));
    expect(stream.events.at(-1)).toMatchObject({ seq: pruned.body.prune.seq, type: 'tool_outputs.pruned' });
  });

  it("another tenant's session and an unknown one are 404 problems, a bad Last-Event-ID a 400, before any stream byte", async () => {
    const session = await client.createSession(key, { id: 'sse-private' });
    const other = await client.createTenant('sse-other');
    for (const res of [await refused(service, other.key, session.id), await refused(service, key, 'sse-no-such-session')]) {
      expectProblem(res, 404, 'session_not_found');
    }
    expectProblem(await refused(service, key, session.id, 'not-a-seq'), 400, 'invalid_last_event_id');
  });
});

describe('live event stream: heartbeats, the per-tenant cap, the drain on SIGTERM', () => {
  let service: TestService;
  let client: Client;
  let key: string;

  beforeAll(async () => {
    // A long shutdown timeout: were streams left to the drain's cut (half of it), this spec would time out.
    service = await startService({ worker: false, env: { SSE_HEARTBEAT_MS: '200', SSE_MAX_STREAMS_PER_TENANT: '2', SHUTDOWN_TIMEOUT_MS: '300000' } });
    client = new Client(service.baseUrl);
    ({ key } = await client.createTenant('sse-limits'));
  });
  afterAll(() => service?.stop());

  it('sends a heartbeat comment on an idle stream', async () => {
    const session = await client.createSession(key, { id: 'sse-heartbeat' });
    const stream = await expectOpen(service, key, session.id);
    await stream.until((messages) => messages.some((m) => m.comment === 'heartbeat'));
    stream.close();
    await stream.ended;
  });

  it('answers 429 too_many_streams with Retry-After beyond the cap, and frees the slot when a stream closes', async () => {
    // A tenant of its own: no slot held by an earlier test's stream.
    const { key } = await client.createTenant('sse-cap');
    const session = await client.createSession(key, { id: 'sse-cap' });
    const open = [await expectOpen(service, key, session.id), await expectOpen(service, key, session.id)];
    const res = await refused(service, key, session.id);
    expectProblem(res, 429, 'too_many_streams');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another tenant is not affected.
    const other = await client.createTenant('sse-limits-other');
    const theirs = await client.createSession(other.key, { id: 'sse-cap-theirs' });
    const theirStream = await expectOpen(service, other.key, theirs.id);
    theirStream.close();

    open[0].close();
    await open[0].ended;
    let reopened: SseStream | undefined;
    // Polled: the API frees the slot once it sees the connection close, which a client cannot observe.
    await waitFor(async () => {
      const attempt = await openStream(service, key, session.id);
      if (attempt.response.status === 429) await attempt.response.text();
      reopened = attempt.stream;
      return attempt.response.status === 200;
    }, 'a freed slot');
    reopened!.close();
    open[1].close();
  });

  it("SIGTERM ends open streams and the API exits 0 without waiting for the drain's cut", async () => {
    const session = await client.createSession(key, { id: 'sse-sigterm' });
    const stream = await expectOpen(service, key, session.id);
    await stream.untilSeq(1);
    service.api.child.kill('SIGTERM');
    await stream.ended;
    await exited(service.api.child);
    expect(service.api.child.exitCode).toBe(0);
    expect(service.api.output()).not.toMatch(/forced exit/);
  });
});

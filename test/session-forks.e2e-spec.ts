import { CONTEXT_FORMATS } from '@app/domain';
import { Agent, agentSession } from './support/agent-script';
import { Client, HttpResult, userMessage } from './support/client';
import { startService, TestService } from './support/service';

/**
 * Session forks: POST /v1/sessions/{id}/forks is copy-on-write.
 * The fork's view at its head equals the source's at atSeq in every format
 * (pivot, pruning, tool-output refs included), the two diverge after, the
 * fork's inherited events report their origin, a compaction runs on the
 * fork, a fork of a fork reads through both, and deleting the source (then
 * the middle fork) leaves the forks whole, tool outputs included. Another
 * tenant cannot fork, or see, the session.
 */
const FORMATS = CONTEXT_FORMATS;

const problem = (res: HttpResult, status: number, code: string) => {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type') ?? '').toMatch(/^application\/problem\+json/);
};

const toolCall = (callId: string) => ({
  type: 'message.added',
  data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId, name: 'bash', input: { command: 'cat big.log' } }] } },
});
const bigResult = (callId: string) => ({
  type: 'message.added',
  data: {
    message: { role: 'tool', parts: [{ type: 'tool_result', callId, name: 'bash', output: Array.from({ length: 3000 }, (_, i) => `log row ${i + 1}`).join('\n') }] },
  },
});

describe('session forks', () => {
  let service: TestService;
  let client: Client;
  let key: string;
  let otherKey: string;

  beforeAll(async () => {
    service = await startService();
    client = new Client(service.baseUrl);
    ({ key } = await client.createTenant('forks'));
    ({ key: otherKey } = await client.createTenant('forks-other'));
  });
  afterAll(() => service?.stop());

  const fork = (sourceId: string, body: Record<string, unknown>, k = key) =>
    client.request('POST', `/v1/sessions/${encodeURIComponent(sourceId)}/forks`, { key: k, body });
  const contextAt = async (agent: Agent, format: string, atSeq?: number) => {
    const res = await client.request('GET', `${agent.path}/context?format=${format}${atSeq === undefined ? '' : `&atSeq=${atSeq}`}`, { key });
    expect(res.status).toBe(200);
    // What the model sees and its figures; headSeq and atSeq say where each session is.
    const { headSeq: _head, atSeq: _at, ...view } = res.body;
    return view;
  };
  /** The fork's view (at its head, or at forkSeq) equals the source's at atSeq, in every format. */
  async function expectSameViews(source: Agent, atSeq: number, forked: Agent, forkSeq?: number) {
    for (const format of FORMATS) {
      expect({ format, view: await contextAt(forked, format, forkSeq) }).toEqual({ format, view: await contextAt(source, format, atSeq) });
    }
  }
  const refsIn = (events: any[]): string[] =>
    events.flatMap((e) => (e.type === 'message.added' ? e.data.message.parts : [])).flatMap((p: any) => (p.outputRef ? [p.outputRef.id] : []));

  /** A source with a stored tool output, then turns until a compaction completed, then one more turn. */
  async function compactedSource(id: string) {
    const source = await agentSession(client, key, id);
    await source.append([userMessage('Read the big log.'), toolCall(`${id}-big`), bigResult(`${id}-big`)]);
    const { markerSeq, turns } = await source.untilMarker(1);
    expect((await source.settled(markerSeq)).status).toBe('completed');
    await source.turn(turns + 1);
    return Object.assign(source, { markerSeq });
  }

  it('views of source and fork are equal at atSeq in every format (pivot included), the events carry their origin, then they diverge', async () => {
    const source = await compactedSource('src-a');
    const state = await source.state();
    expect(state.pivotSeq).toBeGreaterThan(0);
    const atSeq = state.headSeq;

    const res = await fork('src-a', { atSeq, id: 'fork-a', metadata: { branch: 'retry' } });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe('/v1/sessions/fork-a');
    expect(res.body).toMatchObject({ id: 'fork-a', headSeq: atSeq, model: state.model, system: state.system, config: state.config, metadata: { branch: 'retry' } });
    expect(res.body.forkedFrom).toEqual({ sessionId: 'src-a', atSeq });
    const forked = new Agent(client, key, 'fork-a');
    const forkState = await forked.state();
    expect({ pivotSeq: forkState.pivotSeq, coveredThroughSeq: forkState.coveredThroughSeq, forkedFrom: forkState.forkedFrom }).toEqual({
      pivotSeq: state.pivotSeq,
      coveredThroughSeq: state.coveredThroughSeq,
      forkedFrom: { sessionId: 'src-a', atSeq },
    });
    await expectSameViews(source, atSeq, forked);
    await forked.expectValidForProviders();

    // The raw log: the source's events, each with its origin; nothing was copied.
    const sourceEvents = await source.events();
    const forkEvents = await forked.events();
    expect(forkEvents).toEqual(sourceEvents.map((e) => ({ ...e, origin: { sessionId: 'src-a', seq: e.seq } })));
    expect(refsIn(forkEvents).length).toBeGreaterThan(0);

    // Divergence: each appends its own; the fork's seqs continue at atSeq+1.
    const forkAppend = await forked.append([userMessage('FORK-ONLY: try the other approach.')]);
    expect(forkAppend.events[0].seq).toBe(atSeq + 1);
    await source.append([userMessage('SOURCE-ONLY: keep going.')]);
    const forkView = JSON.stringify(await contextAt(forked, 'neutral'));
    const sourceView = JSON.stringify(await contextAt(source, 'neutral'));
    expect([forkView.includes('FORK-ONLY'), forkView.includes('SOURCE-ONLY')]).toEqual([true, false]);
    expect([sourceView.includes('FORK-ONLY'), sourceView.includes('SOURCE-ONLY')]).toEqual([false, true]);
    expect((await forked.events()).at(-1)).not.toHaveProperty('origin');
    // Both still show the same view at atSeq.
    await expectSameViews(source, atSeq, forked, atSeq);
  });

  it('a fork exports whole: its inherited events and outputs come with it, and imported into another tenant it shows the same views', async () => {
    const forked = new Agent(client, key, 'fork-a');
    const exported = await client.request('GET', `${forked.path}/export`, { key });
    expect(exported.status).toBe(200);
    const imported = await client.request('POST', '/v1/sessions/import', {
      key: otherKey,
      rawBody: exported.text,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(imported.status).toBe(201);
    const copy = new Agent(client, otherKey, 'fork-a');
    // The copy is a session of its own: the same events, none inherited.
    expect(await copy.events()).toEqual((await forked.events()).map(({ origin: _origin, ...e }) => e));
    for (const format of FORMATS) {
      const view = async (k: string) => {
        const res = await client.request('GET', `/v1/sessions/fork-a/context?format=${format}`, { key: k });
        expect(res.status).toBe(200);
        return res.body;
      };
      expect({ format, view: await view(otherKey) }).toEqual({ format, view: await view(key) });
    }
  });

  it('a fork taken at a pending marker compacts it on its own; an inherited event id is answered as a replay', async () => {
    const source = await compactedSource('src-b');
    const atSeq = source.markerSeq;
    expect((await contextAt(source, 'neutral', atSeq)).compaction.pendingMarkerSeq).toBe(atSeq);
    expect((await fork('src-b', { atSeq, id: 'fork-b' })).status).toBe(201);
    const forked = new Agent(client, key, 'fork-b');
    expect((await forked.settled(atSeq)).status).toBe('completed');
    const forkState = await forked.state();
    expect(forkState.pivotSeq).toBeGreaterThan(atSeq);
    expect(forkState.compaction.pendingMarkerSeq).toBeNull();
    await forked.expectValidForProviders();

    const first = (await source.events()).find((e) => e.type === 'message.added');
    const replay = await client.append(key, 'fork-b', { events: [{ id: first.id, type: first.type, data: first.data }] });
    expect(replay.status).toBe(200);
    expect(replay.body.events).toEqual([{ id: first.id, seq: first.seq }]);
    expect((await forked.state()).headSeq).toBe(forkState.headSeq);
  });

  it('a compaction runs on the fork: its pivot moves, the source stays as it was', async () => {
    const source = await agentSession(client, key, 'src-c');
    for (let turn = 1; turn <= 3; turn++) await source.turn(turn, { outputLines: 20 });
    const before = await source.state();
    expect((await fork('src-c', { id: 'fork-c' })).status).toBe(201);
    const forked = new Agent(client, key, 'fork-c');
    const res = await client.request('POST', `${forked.path}/compactions`, { key, body: { wait: true } });
    expect(res.status).toBeLessThan(300);
    const history = await forked.compactions();
    expect(history.compactions.at(-1)).toMatchObject({ status: 'completed' });
    const after = await forked.state();
    expect(after.pivotSeq).toBeGreaterThan(before.headSeq);
    expect(after.coveredThroughSeq).toBeGreaterThan(0);
    expect(after.coveredThroughSeq).toBeLessThanOrEqual(before.headSeq);
    await forked.expectValidForProviders();
    expect(await source.state()).toMatchObject({ headSeq: before.headSeq, pivotSeq: before.pivotSeq });
  });

  it('deleting the source, then the middle fork, keeps a fork and a fork of a fork whole: views, raw events, tool outputs', async () => {
    const source = await compactedSource('src-d');
    const middleAt = (await source.state()).headSeq;
    expect((await fork('src-d', { atSeq: middleAt, id: 'fork-d1' })).status).toBe(201);
    const middle = new Agent(client, key, 'fork-d1');
    await middle.append([userMessage('MIDDLE: one more step.')]);
    const leafAt = middleAt + 1;
    expect((await fork('fork-d1', { atSeq: leafAt, id: 'fork-d2' })).status).toBe(201);
    const leaf = new Agent(client, key, 'fork-d2');
    await expectSameViews(middle, leafAt, leaf);
    await leaf.append([userMessage('LEAF: on my own now.')]);

    const snapshot = async (agent: Agent) => ({
      views: await Promise.all(FORMATS.map((format) => contextAt(agent, format))),
      events: await agent.events(),
    });
    const middleBefore = await snapshot(middle);
    const leafBefore = await snapshot(leaf);
    expect(leafBefore.events.at(middleAt)).toMatchObject({ origin: { sessionId: 'fork-d1', seq: leafAt } });
    const refs = refsIn(leafBefore.events);
    expect(refs.length).toBeGreaterThan(0);

    expect((await client.request('DELETE', source.path, { key })).status).toBe(204);
    expect(await snapshot(middle)).toEqual(middleBefore);
    expect(await snapshot(leaf)).toEqual(leafBefore);

    expect((await client.request('DELETE', middle.path, { key })).status).toBe(204);
    expect(await snapshot(leaf)).toEqual(leafBefore);
    for (const ref of refs) {
      const read = await client.request('GET', `/v1/tool-outputs/${ref}?offset=2999&limit=1`, { key });
      expect({ ref, status: read.status }).toEqual({ ref, status: 200 });
    }
    // The leaf still appends and compacts on its own.
    await leaf.append([userMessage('LEAF: still here.')]);
    await leaf.expectValidForProviders();
  });

  it('refuses: an unknown source or another tenant\'s (404), a taken id (409), atSeq beyond the head or below 1 (400); nothing is written', async () => {
    const source = await agentSession(client, key, 'src-e');
    await source.append([userMessage('hello')]);
    const { headSeq } = await source.state();
    problem(await fork('nope', {}), 404, 'session_not_found');
    problem(await fork('src-e', {}, otherKey), 404, 'session_not_found');
    problem(await fork('src-e', { id: 'src-e' }), 409, 'session_exists');
    problem(await fork('src-e', { atSeq: headSeq + 1, id: 'fork-e' }), 400, 'invalid_fork_seq');
    problem(await fork('src-e', { atSeq: -1, id: 'fork-e' }), 400, 'validation_failed');
    problem(await fork('src-e', { atSeq: 0, id: 'fork-e' }), 400, 'validation_failed');
    expect((await client.request('GET', '/v1/sessions/fork-e', { key })).status).toBe(404);

    // A fork made by the owner is invisible to the other tenant, like any session.
    expect((await fork('src-e', { id: 'fork-e' })).status).toBe(201);
    problem(await client.request('GET', '/v1/sessions/fork-e/context', { key: otherKey }), 404, 'session_not_found');
    problem(await client.request('GET', '/v1/sessions/fork-e/events', { key: otherKey }), 404, 'session_not_found');
  });
});

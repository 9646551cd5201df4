import { randomUUID } from 'node:crypto';
import { PINNED_CONTEXT_HEADER, PINNED_CONTEXT_KIND } from '@app/domain';
import { Agent, agentSession } from './support/agent-script';
import { Client, HttpResult, userMessage } from './support/client';
import { startService, TestService } from './support/service';

/**
 * Pinned context end to end: POST and DELETE .../pins append
 * pin.added / pin.removed through the append path; the pinned text is in
 * every context format right after the pivot's prefix, verbatim, survives a
 * compaction, goes when removed, stays within pins.maxTokens, and another
 * tenant's session is a 404 like an unknown one.
 */
const FORMATS = ['neutral', 'openai', 'openai-responses', 'anthropic'] as const;
const PIN = 'PIN-ALPHA: deploy only to eu-west-1; the deploy key lives in $DEPLOY_KEY, never print it.';
const SECOND_PIN = 'PIN-BRAVO: answer in British English.';

const problem = (res: HttpResult, status: number, code: string) => {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type') ?? '').toMatch(/^application\/problem\+json/);
};
/** A JSON fragment as it appears inside a serialized context. */
const inJson = (text: string) => JSON.stringify(text).slice(1, -1);

describe('pins', () => {
  let service: TestService;
  let client: Client;
  let key: string;

  beforeAll(async () => {
    service = await startService();
    client = new Client(service.baseUrl);
    ({ key } = await client.createTenant('pins'));
  });
  afterAll(() => service?.stop());

  const pin = (agent: Agent, text: string, headers?: Record<string, string>) => client.request('POST', `${agent.path}/pins`, { key, body: { text }, headers });
  const unpin = (agent: Agent, pinId: string) => client.request('DELETE', `${agent.path}/pins/${encodeURIComponent(pinId)}`, { key });

  /**
   * In every format: each pin verbatim, after the prefix (`afterText`, the
   * last thing the prefix says, or the system prompt) and before the newest
   * window message (`windowText`).
   */
  async function expectPinnedAfterPrefix(agent: Agent, pins: string[], afterText: string, windowText: string) {
    for (const format of FORMATS) {
      const context = await agent.context(format);
      const text = JSON.stringify({ system: context.system, messages: context.messages });
      const positions = [text.indexOf(inJson(afterText)), text.indexOf(inJson(PINNED_CONTEXT_HEADER)), ...pins.map((p) => text.indexOf(inJson(p))), text.lastIndexOf(inJson(windowText))];
      expect({ format, found: positions.every((at) => at >= 0) }).toEqual({ format, found: true });
      expect({ format, positions }).toEqual({ format, positions: [...positions].sort((a, b) => a - b) });
      for (const p of pins) expect({ format, occurrences: text.split(inJson(p)).length - 1 }).toEqual({ format, occurrences: 1 });
    }
  }

  it('pins: 201 with {pinId, seq} and a Location; the pin.added event; listed; verbatim right after the system prompt in every format', async () => {
    const agent = await agentSession(client, key, 'pin-basic');
    await agent.append([userMessage('Set up the deploy pipeline.')]);
    const res = await pin(agent, PIN);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ pinId: expect.stringMatching(/^pin_/), seq: 3 });
    expect(res.headers.get('location')).toBe(`${agent.path}/pins/${res.body.pinId}`);
    expect((await agent.events()).at(-1)).toMatchObject({ seq: 3, id: res.body.pinId, type: 'pin.added', data: { pinId: res.body.pinId, text: PIN } });

    const listed = await client.request('GET', `${agent.path}/pins`, { key });
    expect(listed.body).toEqual({ pins: [{ pinId: res.body.pinId, text: PIN, seq: 3, tokens: expect.any(Number) }], tokens: listed.body.pins[0].tokens, maxTokens: 4_000 });

    const neutral = await agent.context();
    expect(neutral.messages[1]).toEqual({
      id: 'pinned-context',
      role: 'user',
      parts: [{ type: 'text', text: PINNED_CONTEXT_HEADER }, { type: 'text', text: PIN }],
      metadata: { kind: PINNED_CONTEXT_KIND, userVisible: false },
    });
    await expectPinnedAfterPrefix(agent, [PIN], 'You are a careful coding agent.', 'Set up the deploy pipeline.');
    await agent.expectValidForProviders();
  });

  it('survives a compaction verbatim, right after the new prefix, outside the summary; the next ones are added after it', async () => {
    const agent = await agentSession(client, key, 'pin-compacted');
    await agent.turn(1);
    const { pinId } = (await pin(agent, PIN)).body;
    const { markerSeq, turns } = await agent.untilMarker(2);
    const entry = await agent.settled(markerSeq);
    expect(entry.status).toBe('completed');
    expect(entry.summary).not.toContain('PIN-ALPHA');
    const pivot = (await agent.events()).find((e) => e.seq === entry.completedSeq);
    expect(pivot.data.pins).toEqual([{ pinId, text: PIN, seq: expect.any(Number) }]);

    const context = await agent.context();
    const kinds = context.messages.map((m: any) => m.metadata?.kind ?? null);
    const pinnedAt = kinds.indexOf(PINNED_CONTEXT_KIND);
    expect(kinds.slice(1, pinnedAt)).toEqual(['compaction_retain', 'compaction_summary']);
    expect(context.messages[pinnedAt].parts.map((p: any) => p.text)).toEqual([PINNED_CONTEXT_HEADER, PIN]);
    const lastTurn = `Turn ${turns}: fix the failing test`;
    await expectPinnedAfterPrefix(agent, [PIN], entry.summary.slice(-40), lastTurn);

    await pin(agent, SECOND_PIN);
    await expectPinnedAfterPrefix(agent, [PIN, SECOND_PIN], entry.summary.slice(-40), lastTurn);
    await agent.expectValidForProviders();
  });

  it('removed: 204 and the pin.removed event; gone from every format; a second DELETE or an unknown pin is 404 pin_not_found', async () => {
    const agent = await agentSession(client, key, 'pin-removed');
    await agent.append([userMessage('Hello.')]);
    const first = (await pin(agent, PIN)).body;
    await pin(agent, SECOND_PIN);
    const removed = await unpin(agent, first.pinId);
    expect(removed.status).toBe(204);
    expect(removed.text).toBe('');
    expect((await agent.events()).at(-1)).toMatchObject({ type: 'pin.removed', data: { pinId: first.pinId } });
    for (const format of FORMATS) {
      const text = JSON.stringify(await agent.context(format));
      expect(text).not.toContain('PIN-ALPHA');
      expect(text).toContain(inJson(SECOND_PIN));
    }
    problem(await unpin(agent, first.pinId), 404, 'pin_not_found');
    problem(await unpin(agent, 'pin_nothing_here'), 404, 'pin_not_found');
    problem(await unpin(agent, 'bad\u0000id'), 404, 'pin_not_found');
    expect((await client.request('GET', `${agent.path}/pins`, { key })).body.pins.map((p: any) => p.text)).toEqual([SECOND_PIN]);
  });

  it('refuses a pin over pins.maxTokens with 413 pin_budget_exceeded and writes nothing; blank text is a 400', async () => {
    const agent = await agentSession(client, key, 'pin-budget', { pins: { maxTokens: 40 } });
    expect((await pin(agent, SECOND_PIN)).status).toBe(201);
    const { headSeq } = await agent.state();
    const refused = await pin(agent, 'Remember this: '.repeat(20));
    problem(refused, 413, 'pin_budget_exceeded');
    expect(refused.body).toMatchObject({ maxTokens: 40, usedTokens: expect.any(Number), pinTokens: expect.any(Number) });
    problem(await pin(agent, '   '), 400, 'invalid_field');
    problem(await client.request('POST', `${agent.path}/pins`, { key, body: {} }), 400, 'validation_failed');
    expect((await agent.state()).headSeq).toBe(headSeq);
  });

  it('replays an Idempotency-Key with the same pin; a raw append of pin.added is refused (pins go through .../pins)', async () => {
    const agent = await agentSession(client, key, 'pin-idempotent');
    const headers = { 'idempotency-key': `pin-${randomUUID()}` };
    const first = await pin(agent, PIN, headers);
    const again = await pin(agent, PIN, headers);
    expect(again.body).toEqual(first.body);
    expect((await agent.events()).filter((e) => e.type === 'pin.added')).toHaveLength(1);

    const raw = await client.append(key, agent.sessionId, { events: [{ type: 'pin.added', data: { pinId: 'p1', text: 'sneaky' } }] });
    problem(raw, 400, 'reserved_event_type');
  });

  it("another tenant's session is a 404 session_not_found on every pin route, as for an unknown id, and A's pins are untouched", async () => {
    const agent = await agentSession(client, key, 'pin-victim');
    const { pinId } = (await pin(agent, PIN)).body;
    const other = (await client.createTenant('intruder')).key;
    const before = await agent.events();
    for (const sessionId of [agent.sessionId, randomUUID()]) {
      const path = `/v1/sessions/${sessionId}/pins`;
      for (const res of [
        await client.request('POST', path, { key: other, body: { text: 'x' } }),
        await client.request('GET', path, { key: other }),
        await client.request('DELETE', `${path}/${pinId}`, { key: other }),
      ]) {
        problem(res, 404, 'session_not_found');
        expect(res.text).not.toContain('PIN-ALPHA');
      }
    }
    expect(await agent.events()).toEqual(before);
    expect((await client.request('GET', `${agent.path}/pins`, { key })).body.pins).toHaveLength(1);
  });
});

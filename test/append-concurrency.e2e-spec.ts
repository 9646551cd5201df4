import { Client, expectProblem, userMessage } from './support/client';
import { ADMIN_TOKEN } from './support/env';
import { freePort, startReady, startService, TestService } from './support/service';

/**
 * Invariants 1-2 under contention: 32 writers on one session, each appending
 * with the head it last saw. Seqs must come out gap-free with no duplicate,
 * and every loser must learn the current head from its 409.
 */
describe('concurrent appends to one session', () => {
  let service: TestService;
  let client: Client;
  let key: string;

  beforeAll(async () => {
    service = await startService({ worker: false });
    client = new Client(service.baseUrl);
    ({ key } = await client.createTenant('writers'));
  });
  afterAll(() => service?.stop());

  it('32 appenders with expectedSeq write 1,000 events gap-free; every loser gets 409 with the head', async () => {
    const session = await client.createSession(key);
    const target = 1000;
    let written = 0;
    let conflicts = 0;
    const acked = new Set<string>();

    const writer = async (w: number) => {
      let head = session.headSeq;
      let n = 0;
      while (written < target) {
        const id = `w${w}-${n}`;
        const res = await client.append(key, session.id, { expectedSeq: head, events: [userMessage(`writer ${w} #${n}`, id)] });
        if (res.status === 201) {
          written++;
          n++;
          acked.add(id);
          head = res.body.headSeq;
        } else {
          expect(res.status).toBe(409);
          expect(res.body.code).toBe('version_conflict');
          expect(res.body.headSeq).toBeGreaterThan(head);
          conflicts++;
          head = res.body.headSeq;
          // A real client backs off a little; without jitter 31 losers re-collide every round.
          await new Promise((r) => setTimeout(r, Math.random() * 8));
        }
      }
    };
    await Promise.all(Array.from({ length: 32 }, (_, w) => writer(w)));

    const events = await client.allEvents(key, session.id);
    const seqs = events.map((e) => e.seq);
    expect(seqs).toEqual(Array.from({ length: events.length }, (_, i) => i + 1));
    const ids = events.filter((e) => e.type === 'message.added').map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toEqual(acked);
    expect(ids.length).toBeGreaterThanOrEqual(target);
    expect(conflicts).toBeGreaterThan(0);
  }, 300_000);

  it('retries of identical event ids, racing each other, never duplicate', async () => {
    const session = await client.createSession(key);
    const ids = Array.from({ length: 250 }, (_, i) => `evt-${i}`);
    // Every id is sent by 4 concurrent clients; each batch carries 1-3 ids.
    const batches = ids.flatMap((id, i) => (i % 3 === 0 ? [[id, ids[i + 1], ids[i + 2]].filter(Boolean)] : []));
    const sends = [...batches, ...batches, ...batches, ...batches].sort(() => Math.random() - 0.5);
    const results: Array<{ status: number; body: any }> = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < sends.length) {
          const batch = sends[next++];
          results.push(await client.append(key, session.id, { events: batch.map((id) => userMessage(`text of ${id}`, id)) }));
        }
      }),
    );
    expect(results.every((r) => r.status === 201 || r.status === 200)).toBe(true);
    const events = (await client.allEvents(key, session.id)).filter((e) => e.type === 'message.added');
    expect(events.map((e) => e.id).sort()).toEqual([...ids].sort());
    // A replay reports the seqs the first write got.
    const seqById = new Map(events.map((e) => [e.id, e.seq]));
    for (const r of results) for (const e of r.body.events) expect(e.seq).toBe(seqById.get(e.id));
  });

  it('32 sessions of one tenant appending the same tool outputs at once: every append succeeds (no deadlock between contents and usage counters)', async () => {
    // Each round, every writer's turn carries two outputs the others send too, new ones and ones
    // already stored, half of the writers in the other order: the upsert of contents must lock
    // stored rows before the usage trigger locks its counters, in every append alike.
    const sessions = await Promise.all(Array.from({ length: 32 }, () => client.createSession(key)));
    const output = (round: number, which: number) => Array.from({ length: 60 }, (_, i) => `round ${round} output ${which} line ${i}`).join('\n');
    const failures: string[] = [];
    for (let round = 0; round < 8; round++) {
      await Promise.all(
        sessions.map(async (session, w) => {
          const pair = w % 2 === 0 ? [round, round + 1] : [round + 1, round];
          const calls = pair.map((which) => `r${round}-w${w}-o${which}`);
          const res = await client.append(key, session.id, {
            events: [
              { type: 'message.added', data: { message: { role: 'assistant', parts: calls.map((callId) => ({ type: 'tool_call', callId, name: 'bash', input: {} })) } } },
              ...calls.map((callId, i) => ({
                type: 'message.added',
                data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId, name: 'bash', output: output(round, pair[i]) }] } },
              })),
            ],
          });
          if (res.status !== 201) failures.push(`round ${round} writer ${w}: ${res.status} ${res.text.slice(0, 200)}`);
        }),
      );
    }
    expect(failures).toEqual([]);
  });

  // An append of a session whose model this process remembers is inserted behind the lock before its answer
  // (apps/api/src/events/events.service.ts): a model that changed under the same id must not price its events.
  it('a session deleted and created again under its id with another model: its next append is estimated with the new model', async () => {
    const text = 'Ünïcödé and 漢字 and a long identifier averyveryverylongidentifierwithoutanybreaks, priced differently per tokenizer';
    const estimated = async (id: string) => (await client.request('GET', `/v1/sessions/${id}/context`, { key })).body.tokens.estimated;
    const id = `model-swap-${Date.now()}`;
    await client.createSession(key, { id, model: 'gpt-4.1' });
    expect((await client.append(key, id, { events: [userMessage('first, so the model is remembered')] })).status).toBe(201);
    expect((await client.request('DELETE', `/v1/sessions/${id}`, { key })).status).toBe(204);
    await client.createSession(key, { id, model: 'claude-sonnet-5' });
    expect((await client.append(key, id, { events: [userMessage(text)] })).status).toBe(201);
    const fresh = await client.createSession(key, { model: 'claude-sonnet-5' });
    expect((await client.append(key, fresh.id, { events: [userMessage(text)] })).status).toBe(201);
    const onGpt = await client.createSession(key, { model: 'gpt-4.1' });
    expect((await client.append(key, onGpt.id, { events: [userMessage(text)] })).status).toBe(201);
    // The two tokenizers price this text differently, so the check can fail.
    expect(await estimated(onGpt.id)).not.toBe(await estimated(fresh.id));
    expect(await estimated(id)).toBe(await estimated(fresh.id));
  });
  it('an append in one round trip writes only at the head and state this process knows; else the ordinary path writes or refuses', async () => {
    const { id } = await client.createSession(key, { model: 'gpt-4.1' });
    const append = async (text: string) => client.append(key, id, { events: [userMessage(text)] });
    const seqs = async (text: string) => (await append(text)).body.events.map((e: { seq: number }) => e.seq);
    // The first append teaches this process the session's model and view bound; the next goes in one round trip.
    expect(await seqs('one')).toEqual([2]);
    expect(await seqs('two')).toEqual([3]);
    // A config change moves the head past the bound without going through the append path.
    expect((await client.request('PATCH', `/v1/sessions/${id}`, { key, body: { config: { compaction: { thresholdRatio: 0.6 } } } })).status).toBe(200);
    expect(await seqs('three')).toEqual([5]);
    expect(await seqs('four')).toEqual([6]);
    // Archived at the same head: the statement's own condition refuses, and the ordinary path answers 409.
    expect((await client.request('PATCH', `/v1/sessions/${id}`, { key, body: { archived: true } })).status).toBe(200);
    expectProblem(await append('five'), 409, 'session_archived');
    const events = await client.allEvents(key, id);
    expect(events.map((e) => [e.seq, e.type])).toEqual([
      [1, 'session.created'],
      [2, 'message.added'],
      [3, 'message.added'],
      [4, 'session.config_changed'],
      [5, 'message.added'],
      [6, 'message.added'],
    ]);
  });

  it('a turn with tool calls and outputs kept inline goes in one round trip on known settings; a reused call id or changed tenant settings take the ordinary path', async () => {
    const { tenantId, key: own } = await client.createTenant('one-trip-turns');
    const { id } = await client.createSession(own, { model: 'gpt-4.1' });
    const output = (n: number) => Array.from({ length: 40 }, (_, i) => `turn ${n} line ${i}: ok`).join('\n');
    const turn = (n: number, calls = [`c${n}a`, `c${n}b`]) => [
      userMessage(`turn ${n}`),
      { type: 'message.added', data: { message: { role: 'assistant', parts: calls.map((callId) => ({ type: 'tool_call', callId, name: 'bash', input: { n } })) } } },
      ...calls.map((callId) => ({ type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId, output: output(n) }] } } })),
      { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'text', text: `done ${n}` }] } } },
    ];
    const append = (events: unknown[]) => client.append(own, id, { events });
    // The first turn teaches this process the session's model, settings and view bound; the second goes in one round trip.
    expect((await append(turn(1))).body.headSeq).toBe(6);
    const second = await append(turn(2));
    expect([second.status, second.body.events.map((e: { seq: number }) => e.seq)]).toEqual([201, [7, 8, 9, 10, 11]]);
    // Its calls are in the ledger: answering one again is refused.
    const again = { type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId: 'c2a', output: 'late' }] } } };
    expectProblem(await append([again]), 400, 'duplicate_tool_result');
    // A call id the ledger holds fails the one-trip statement; the ordinary path answers, and nothing is written.
    expectProblem(await append(turn(3, ['c3a', 'c1b'])), 400, 'duplicate_tool_call_id');
    // Its outputs are kept whole in their events, each with a ref that reads them back.
    const stored = (await client.allEvents(own, id)).filter((e) => e.seq >= 9 && e.seq <= 10).map((e) => e.data.message.parts[0]);
    expect(stored.map((p: { output: string }) => p.output)).toEqual([output(2), output(2)]);
    const read = await client.request('GET', `/v1/tool-outputs/${stored[0].outputRef.id}/raw`, { key: own });
    expect([read.status, read.text]).toEqual([200, output(2)]);
    // Tenant settings changed behind this process's back: the statement's condition refuses, and the ordinary path
    // builds the views from the new settings (the outputs no longer fit the event's view, so they are stored).
    const patched = await client.request('PATCH', `/v1/admin/tenants/${tenantId}`, { key: ADMIN_TOKEN, body: { config: { toolOutput: { maxLines: 10 } } } });
    expect(patched.status).toBe(200);
    const fourth = await append(turn(4));
    expect(fourth.body.events.map((e: { seq: number }) => e.seq)).toEqual([12, 13, 14, 15, 16]);
    const results = (await client.allEvents(own, id)).filter((e) => e.seq === 14 || e.seq === 15).map((e) => e.data.message.parts[0]);
    expect(results.map((p: { truncated: boolean; output: string }) => [p.truncated, p.output.length < output(4).length])).toEqual([
      [true, true],
      [true, true],
    ]);
    expect((await client.allEvents(own, id)).map((e) => e.seq)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
  });

  it('outputs for the tool-output tables go in the same round trip: content once per sha256, chunks once, a ref each, read back whole', async () => {
    const { key: own } = await client.createTenant('one-trip-stored');
    const { id } = await client.createSession(own, { model: 'gpt-4.1' });
    const big = (tag: string) => Array.from({ length: 4_000 }, (_, i) => `${tag} line ${i}: ${'x'.repeat(20)}`).join('\n');
    const turn = (n: number, output: string) => [
      { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId: `s${n}`, name: 'bash', input: {} }] } } },
      { type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId: `s${n}`, output }] } } },
    ];
    const append = (events: unknown[]) => client.append(own, id, { events });
    expect((await append([userMessage('start')])).body.headSeq).toBe(2);
    // The same output twice (one content, two refs), then another one.
    for (const [n, output] of [[1, big('a')], [2, big('a')], [3, big('b')]] as const) expect((await append(turn(n, output))).status).toBe(201);
    const results = (await client.allEvents(own, id)).filter((e) => e.data.message?.role === 'tool').map((e) => e.data.message.parts[0]);
    expect(results.map((p: { truncated: boolean }) => p.truncated)).toEqual([true, true, true]);
    const refs = results.map((p: { outputRef: { id: string; sha256: string } }) => p.outputRef);
    expect(new Set(refs.map((r: { id: string }) => r.id)).size).toBe(3);
    expect(refs[0].sha256).toBe(refs[1].sha256);
    for (const [i, expected] of [big('a'), big('a'), big('b')].entries()) {
      const raw = await client.request('GET', `/v1/tool-outputs/${refs[i].id}/raw`, { key: own });
      expect([raw.status, raw.text === expected]).toEqual([200, true]);
    }
    const grep = await client.request('GET', `/v1/tool-outputs/${refs[2].id}/grep?pattern=${encodeURIComponent('b line 3999:')}`, { key: own });
    expect([grep.status, grep.body.matches?.length]).toEqual([200, 1]);
  });

  it('a result answering a call of an earlier batch goes in one round trip while the call is open; one another API answered fails its statement and the ordinary path refuses it', async () => {
    const port = await freePort();
    const other = await startReady('api', { ...service.env, PORT: String(port) }, `http://127.0.0.1:${port}/healthz`);
    try {
      const { key: own } = await client.createTenant('one-trip-answers');
      const { id } = await client.createSession(own, { model: 'gpt-4.1' });
      const calls = (ids: string[]) => ({ type: 'message.added', data: { message: { role: 'assistant', parts: ids.map((callId) => ({ type: 'tool_call', callId, name: 'grep', input: {} })) } } });
      // No name: the ledger's fills it in, as a provider's tool message carries none.
      const result = (callId: string) => ({ type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId, output: `${callId}: 3 matches` }] } } });
      const append = (api: Client, events: unknown[]) => api.append(own, id, { events });
      // This process learns the session, then the calls it issues; their results go in one round trip each.
      expect((await append(client, [userMessage('find it')])).body.headSeq).toBe(2);
      expect((await append(client, [calls(['a', 'b', 'c'])])).body.headSeq).toBe(3);
      expect((await append(client, [result('a')])).body.events).toEqual([expect.objectContaining({ seq: 4 })]);
      expect((await append(client, [result('b')])).body.events).toEqual([expect.objectContaining({ seq: 5 })]);
      expectProblem(await append(client, [result('a')]), 400, 'duplicate_tool_result');
      // The other API answers c: this process still holds it open, its statement fails, and nothing is written.
      expect((await append(new Client(`http://127.0.0.1:${port}`), [result('c')])).body.events).toEqual([expect.objectContaining({ seq: 6 })]);
      expectProblem(await append(client, [result('c')]), 400, 'duplicate_tool_result');
      // A named result is assumed to answer an open call; for one never issued the statement fails, and the ordinary path refuses it.
      const named = (callId: string) => ({ type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId, name: 'grep', output: 'none' }] } } });
      expectProblem(await append(client, [named('never')]), 400, 'unknown_tool_call');
      // The other API issued d: this process never saw it, and its named result goes through.
      expect((await append(new Client(`http://127.0.0.1:${port}`), [calls(['d'])])).body.headSeq).toBe(7);
      expect((await append(client, [named('d')])).body.events).toEqual([expect.objectContaining({ seq: 8 })]);
      const events = await client.allEvents(own, id);
      expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(events.slice(3).map((e) => e.data.message.parts[0].name)).toEqual(['grep', 'grep', 'grep', 'grep', 'grep']);
    } finally {
      await other.stop();
    }
  });
});

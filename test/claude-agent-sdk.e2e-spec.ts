/** @jest-environment ./test/support/claude-agent-sdk-environment.ts */
import {
  deleteSession,
  getSessionMessages,
  importSessionToStore,
  InMemorySessionStore,
  listSessions,
  query,
  type SessionKey,
  type SessionStore,
  type SessionStoreEntry,
} from '@anthropic-ai/claude-agent-sdk';
import { ServiceSessionStore, type ServiceSessionStoreOptions } from '@session-store/claude-agent-sdk';
import { isProblem, SessionStoreClient } from '@session-store/client';
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from './support/client';
import { send, startStubServer, StubServer } from './support/provider-wire';
import { startService, TestService } from './support/service';

/**
 * The Claude Agent SDK's SessionStore over the service
 * (packages/claude-agent-sdk), checked against the SDK's own
 * InMemorySessionStore on the same operations, with the SDK's
 * importSessionToStore reading a local transcript as Claude Code writes it,
 * and for the conversation it keeps beside the transcript.
 */

/** What the SDK requires of a store: entries that survive a JSON round trip. */
const json = <T>(value: T): T => JSON.parse(JSON.stringify(value));

const PROJECTS = ['-work-alpha', '-work-beta'];
const SESSIONS = [randomUUID(), randomUUID()];
const SUBPATHS = [undefined, 'subagents/agent-a1', 'subagents/workflows/run-1/agent-b2'];

const keyArb = fc
  .record({ projectKey: fc.constantFrom(...PROJECTS), sessionId: fc.constantFrom(...SESSIONS), subpath: fc.constantFrom(...SUBPATHS) })
  .map(({ subpath, ...key }): SessionKey => (subpath === undefined ? key : { ...key, subpath }));

/** Entries of the kinds the summary folds (prompts, titles, tags, cwd, branch) with arbitrary JSON besides; uuids are drawn when the batch runs. */
const entryArb = fc.record({
  type: fc.constantFrom('user', 'assistant', 'custom-title', 'ai-title', 'tag', 'summary', 'system', 'file-history-snapshot'),
  uuid: fc.boolean(),
  text: fc.string({ maxLength: 40 }),
  cwd: fc.option(fc.constantFrom('/work/alpha', '/work/beta'), { nil: undefined }),
  gitBranch: fc.option(fc.constantFrom('main', 'fix/login'), { nil: undefined }),
  isSidechain: fc.option(fc.boolean(), { nil: undefined }),
  payload: fc.option(fc.jsonValue({ maxDepth: 3 }), { nil: undefined }),
});
type EntrySpec = typeof entryArb extends fc.Arbitrary<infer T> ? T : never;

function entryOf(spec: EntrySpec, index: number): SessionStoreEntry {
  const base = {
    type: spec.type,
    ...(spec.uuid ? { uuid: randomUUID() } : {}),
    timestamp: new Date(Date.UTC(2026, 10, 1, 0, 0, index)).toISOString(),
    ...(spec.cwd === undefined ? {} : { cwd: spec.cwd }),
    ...(spec.gitBranch === undefined ? {} : { gitBranch: spec.gitBranch }),
    ...(spec.isSidechain === undefined ? {} : { isSidechain: spec.isSidechain }),
    ...(spec.payload === undefined ? {} : { payload: spec.payload }),
  };
  switch (spec.type) {
    case 'user':
    case 'assistant':
      return { ...base, message: { role: spec.type, content: spec.text || 'ok' } };
    case 'custom-title':
      return { ...base, customTitle: spec.text };
    case 'ai-title':
      return { ...base, aiTitle: spec.text };
    case 'tag':
      return { ...base, tag: spec.text };
    case 'summary':
      return { ...base, summary: spec.text, leafUuid: randomUUID() };
    default:
      return { ...base, content: spec.text };
  }
}

const opArb = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('append' as const), key: keyArb, entries: fc.array(entryArb, { minLength: 1, maxLength: 4 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('appendEmpty' as const), key: keyArb }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('load' as const), key: keyArb }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('delete' as const), key: keyArb }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('listSessions' as const), projectKey: fc.constantFrom(...PROJECTS) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('listSessionSummaries' as const), projectKey: fc.constantFrom(...PROJECTS) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('listSubkeys' as const), key: keyArb }) },
);
type Op = typeof opArb extends fc.Arbitrary<infer T> ? T : never;

const keyString = (key: SessionKey) => JSON.stringify([key.projectKey, key.sessionId, key.subpath ?? null]);
const sorted = (values: string[]) => [...values].sort();

/**
 * The Messages API as Claude Code calls it (streamed), scripted: a request
 * offering the Read tool gets a call reading `file`, one ending with its
 * result gets `finalText`, any other (a title, a summary) a short text.
 */
async function startClaudeStub(file: string, finalText: string): Promise<StubServer & { requests: any[] }> {
  const requests: any[] = [];
  const server = await startStubServer((req, res, path, body) => {
    if (req.method !== 'POST' || path !== '/v1/messages') return send(res, 404, { type: 'error', error: { type: 'not_found_error', message: path } });
    requests.push(body);
    const last = body.messages.at(-1);
    const answered = Array.isArray(last.content) && last.content.some((block: any) => block.type === 'tool_result');
    const offersRead = (body.tools ?? []).some((tool: any) => tool.name === 'Read');
    const call = !answered && offersRead;
    const id = `msg_stub_${requests.length}`;
    const block = call ? { type: 'tool_use', id: `toolu_stub_${requests.length}`, name: 'Read', input: {} } : { type: 'text', text: '' };
    const delta = call ? { type: 'input_json_delta', partial_json: JSON.stringify({ file_path: file }) } : { type: 'text_delta', text: answered ? finalText : 'Stub' };
    const events: Array<[string, object]> = [
      ['message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 20, output_tokens: 1 } } }],
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: block }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta }],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: call ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 8 } }],
      ['message_stop', { type: 'message_stop' }],
    ];
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join(''));
  });
  return { ...server, requests };
}

/** Passes each append to both stores, so the same calls of the SDK reach both. */
function teeStore(ours: SessionStore, memory: InMemorySessionStore) {
  const keys = new Map<string, SessionKey>();
  const pending: Array<Promise<unknown>> = [];
  const store: SessionStore = {
    append: async (key, entries) => {
      keys.set(JSON.stringify(key), key);
      const both = Promise.all([memory.append(key, entries), ours.append(key, entries)]);
      pending.push(both);
      await both;
    },
    load: (key) => ours.load(key),
  };
  return { store, keys: () => [...keys.values()], settled: () => Promise.all(pending) };
}

describe('@session-store/claude-agent-sdk', () => {
  let service: TestService;
  let http: Client;
  const tempDirs: string[] = [];

  /** A directory of its own under the system's temp dir, by its real path (the SDK keys projects by it), removed after the spec. */
  function tempDir(prefix: string): string {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
    tempDirs.push(dir);
    return dir;
  }

  /** A store over a tenant of its own: every run starts from nothing. */
  async function freshStore(options: Omit<ServiceSessionStoreOptions, 'client'> = {}) {
    const tenant = await http.createTenant('claude-agent-sdk');
    const client = new SessionStoreClient({ baseUrl: service.baseUrl, apiKey: tenant.key });
    return { client, store: new ServiceSessionStore({ client, ...options }) };
  }

  beforeAll(async () => {
    service = await startService({ worker: false });
    http = new Client(service.baseUrl);
  });

  afterAll(async () => {
    await service?.stop();
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  });

  it('answers every operation of a random sequence as InMemorySessionStore does', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 25 }), async (ops) => {
        const { store } = await freshStore();
        const memory = new InMemorySessionStore();
        // The service stamps mtime when it writes, so it moves on appends that write events (and on creation):
        // this clock orders those writes, against which the listed mtimes are checked.
        const writes = new Map<string, number>();
        let clock = 0;
        for (const op of ops) await step(op);

        async function step(op: Op): Promise<void> {
          switch (op.op) {
            case 'append': {
              const entries = op.entries.map(entryOf);
              await Promise.all([memory.append(op.key, entries), store.append(op.key, entries)]);
              writes.set(keyString(op.key), ++clock);
              return;
            }
            case 'appendEmpty':
              if (!writes.has(keyString(op.key))) writes.set(keyString(op.key), ++clock);
              await Promise.all([memory.append(op.key, []), store.append(op.key, [])]);
              return;
            case 'load':
              expect(await store.load(op.key)).toEqual(json(await memory.load(op.key)));
              return;
            case 'delete':
              await Promise.all([memory.delete(op.key), store.delete(op.key)]);
              for (const key of writes.keys()) {
                const [projectKey, sessionId, subpath] = JSON.parse(key);
                if (projectKey === op.key.projectKey && sessionId === op.key.sessionId && (op.key.subpath === undefined || subpath === op.key.subpath)) writes.delete(key);
              }
              return;
            case 'listSessions': {
              const [ours, theirs] = await Promise.all([store.listSessions(op.projectKey), memory.listSessions(op.projectKey)]);
              expect(sorted(ours.map((s) => s.sessionId))).toEqual(sorted(theirs.map((s) => s.sessionId)));
              for (const a of ours) {
                expect(Number.isInteger(a.mtime)).toBe(true);
                for (const b of ours) {
                  const [writeA, writeB] = [a, b].map((s) => writes.get(keyString({ projectKey: op.projectKey, sessionId: s.sessionId }))!);
                  if (writeA < writeB) expect(a.mtime).toBeLessThanOrEqual(b.mtime);
                }
              }
              return;
            }
            case 'listSessionSummaries': {
              const [ours, theirs, listed] = await Promise.all([
                store.listSessionSummaries(op.projectKey),
                memory.listSessionSummaries(op.projectKey),
                store.listSessions(op.projectKey),
              ]);
              const data = (summaries: typeof ours) => Object.fromEntries(summaries.map((s) => [s.sessionId, json(s.data)]));
              expect(data(ours)).toEqual(data(theirs));
              // The summaries' mtime is the listing's: the SDK compares them to tell a stale summary.
              const mtimes = new Map(listed.map((s) => [s.sessionId, s.mtime]));
              for (const summary of ours) expect(summary.mtime).toBe(mtimes.get(summary.sessionId));
              return;
            }
            case 'listSubkeys': {
              const key = { projectKey: op.key.projectKey, sessionId: op.key.sessionId };
              expect(sorted(await store.listSubkeys(key))).toEqual(sorted(await memory.listSubkeys(key)));
              return;
            }
          }
        }
      }),
      { numRuns: 30 },
    );
  });

  it('keeps entries the service refuses as JSON (NUL, lone surrogates, __proto__ keys, deep nesting) exactly', async () => {
    // given entries a binary tool output or a deep structure could produce
    const refused: string[] = [];
    const { store, client } = await freshStore({ onMessagesError: (error) => refused.push(isProblem(error) ? error.code : String(error)) });
    const key = { projectKey: PROJECTS[0], sessionId: randomUUID() };
    let deep: unknown = 'bottom';
    for (let i = 0; i < 80; i++) deep = { next: deep };
    const entries: SessionStoreEntry[] = [
      { type: 'user', uuid: randomUUID(), message: { role: 'user', content: 'binary: \u0000\u0001' } },
      { type: 'system', uuid: randomUUID(), content: 'half a pair: \ud83d' },
      { type: 'system', uuid: randomUUID(), ...JSON.parse('{"__proto__": {"polluted": true}}') },
      { type: 'system', uuid: randomUUID(), deep },
      { type: 'system', uuid: randomUUID(), plain: { nested: [1, 2.5, null, true, 'x'] } },
    ];
    // when
    await store.append(key, entries);
    // then they load back as appended, and the log holds the plain one as JSON, the others as their JSON text
    expect(await store.load(key)).toEqual(json(entries));
    const sessions = (await client.api.GET('/v1/sessions', { params: { query: { metadata: JSON.stringify({ claudeAgentSdk: key }) } } })).data!.sessions;
    const { data: page } = await client.api.GET('/v1/sessions/{sessionId}/events', { params: { path: { sessionId: sessions[0].id }, query: { types: ['record.added'] } } });
    const kinds = page!.events.map((event) => (event.type === 'record.added' ? event.data.kind : event.type));
    expect(kinds).toEqual(['claude.entry.json', 'claude.entry.json', 'claude.entry.json', 'claude.entry.json', 'claude.entry']);
    // and the user message, which the conversation cannot hold with its NUL, was reported, not thrown
    expect(refused).toEqual(['nul_character']);
  });

  it('treats uuid as an idempotency key: a replayed batch, whole or in part, stores nothing twice; entries without uuid are appended again', async () => {
    // given a stored batch
    const { store } = await freshStore();
    const key = { projectKey: PROJECTS[0], sessionId: randomUUID() };
    const first: SessionStoreEntry[] = [
      { type: 'user', uuid: randomUUID(), message: { role: 'user', content: 'Fix the login bug' } },
      { type: 'assistant', uuid: randomUUID(), message: { role: 'assistant', content: 'Looking.' } },
    ];
    const tag = { type: 'tag', tag: 'urgent' };
    await store.append(key, [...first, tag]);
    // when the batch is retried, then replayed with a new entry, and an entry repeats inside a batch
    await store.append(key, [...first, tag]);
    const next = { type: 'user', uuid: randomUUID(), message: { role: 'user', content: 'Thanks' } };
    await store.append(key, [first[1], next, next]);
    // then each uuid is stored once, in first-append order; the uuid-less tag each time
    expect(await store.load(key)).toEqual([...first, tag, tag, next]);
    // and a uuid sent again with another body is ignored too (ignore-duplicate), the rest of its batch stored
    const last = { type: 'assistant', uuid: randomUUID(), message: { role: 'assistant', content: 'Welcome.' } };
    await store.append(key, [{ ...first[0], message: { role: 'user', content: 'Edited' } }, last]);
    expect(await store.load(key)).toEqual([...first, tag, tag, next, last]);
  });

  it('importSessionToStore copies a local transcript and its subagents as InMemorySessionStore receives them; a second import adds nothing', async () => {
    // given a session as Claude Code writes it under CLAUDE_CONFIG_DIR/projects/<sanitized cwd>/
    const cwd = tempDir('claude-project-');
    const sessionId = randomUUID();
    const projectDir = join(process.env.CLAUDE_CONFIG_DIR!, 'projects', cwd.replace(/[^a-zA-Z0-9]/g, '-'));
    mkdirSync(join(projectDir, sessionId, 'subagents'), { recursive: true });
    const line = (entry: object) => `${JSON.stringify(entry)}\n`;
    const common = { sessionId, cwd, version: '2.1.332', gitBranch: 'main', userType: 'external' };
    const [u1, a1, u2, a2] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const main = [
      { ...common, type: 'user', uuid: u1, parentUuid: null, isSidechain: false, timestamp: '2026-11-27T10:00:00.000Z', message: { role: 'user', content: 'List the files' } },
      {
        ...common,
        type: 'assistant',
        uuid: a1,
        parentUuid: u1,
        isSidechain: false,
        timestamp: '2026-11-27T10:00:01.000Z',
        message: { id: 'msg_01', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'tool_use', id: 'toolu_01', name: 'Bash', input: { command: 'ls' } }], stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 12, output_tokens: 8 } },
      },
      { ...common, type: 'user', uuid: u2, parentUuid: a1, isSidechain: false, timestamp: '2026-11-27T10:00:02.000Z', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'a.ts\nb.ts' }] }, toolUseResult: { stdout: 'a.ts\nb.ts', stderr: '' } },
      {
        ...common,
        type: 'assistant',
        uuid: a2,
        parentUuid: u2,
        isSidechain: false,
        timestamp: '2026-11-27T10:00:03.000Z',
        message: { id: 'msg_02', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: 'Two files: a.ts and b.ts.' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 30, output_tokens: 9 } },
      },
      { type: 'custom-title', customTitle: 'File listing', sessionId },
    ];
    const agent = [
      { ...common, type: 'user', uuid: randomUUID(), parentUuid: null, isSidechain: true, agentId: 'a1', timestamp: '2026-11-27T10:00:01.500Z', message: { role: 'user', content: 'Count the files' } },
      { ...common, type: 'assistant', uuid: randomUUID(), parentUuid: null, isSidechain: true, agentId: 'a1', timestamp: '2026-11-27T10:00:01.600Z', message: { id: 'msg_a', type: 'message', role: 'assistant', model: 'claude-haiku-4-5', content: [{ type: 'text', text: '2' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } },
    ];
    writeFileSync(join(projectDir, `${sessionId}.jsonl`), main.map(line).join(''));
    writeFileSync(join(projectDir, sessionId, 'subagents', 'agent-a1.jsonl'), agent.map(line).join(''));
    writeFileSync(join(projectDir, sessionId, 'subagents', 'agent-a1.meta.json'), JSON.stringify({ agentType: 'general-purpose', description: 'Count files' }));
    const { store } = await freshStore();
    const memory = new InMemorySessionStore();
    const keys: SessionKey[] = [];
    const recording: SessionStore = { append: (key, entries) => (keys.push(key), memory.append(key, entries)), load: (key) => memory.load(key) };

    // when both import it, in batches of two entries
    await importSessionToStore(sessionId, recording, { dir: cwd, batchSize: 2 });
    await importSessionToStore(sessionId, store, { dir: cwd, batchSize: 2 });

    // then every key the SDK wrote loads the same from both, the subagent's with its metadata entry
    const [mainKey] = keys;
    expect(mainKey).toEqual({ projectKey: cwd.replace(/[^a-zA-Z0-9]/g, '-'), sessionId });
    expect(await memory.load(mainKey)).toEqual(main);
    const subKey = { ...mainKey, subpath: 'subagents/agent-a1' };
    expect(await memory.load(subKey)).toEqual([...agent, { type: 'agent_metadata', agentType: 'general-purpose', description: 'Count files' }]);
    for (const key of [mainKey, subKey]) expect(await store.load(key)).toEqual(json(await memory.load(key)));
    expect(await store.listSubkeys(mainKey)).toEqual(['subagents/agent-a1']);
    const [summary] = await store.listSessionSummaries(mainKey.projectKey);
    expect(summary.data).toEqual(json((await memory.listSessionSummaries(mainKey.projectKey))[0].data));
    expect(summary.data).toMatchObject({ customTitle: 'File listing', firstPrompt: 'List the files', cwd, gitBranch: 'main' });

    // when it is imported again (InMemorySessionStore, which does not dedup, would now hold everything twice)
    await importSessionToStore(sessionId, store, { dir: cwd, batchSize: 3 });
    // then only the uuid-less entries (the title, the subagent's metadata) are appended again
    expect(await store.load(mainKey)).toEqual([...main, main[4]]);
    expect(await store.load(subKey)).toEqual([...agent, { type: 'agent_metadata', agentType: 'general-purpose', description: 'Count files' }, { type: 'agent_metadata', agentType: 'general-purpose', description: 'Count files' }]);
  });

  it('keeps the conversation beside the transcript: the context shows its messages, load() only its entries', async () => {
    // given a transcript turn as Claude Code writes it: each assistant content block its own entry
    const { store, client } = await freshStore();
    const key = { projectKey: PROJECTS[1], sessionId: randomUUID() };
    const message = (id: string, content: unknown[]) => ({ id, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content, stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5 } });
    const turn: SessionStoreEntry[] = [
      { type: 'user', uuid: randomUUID(), message: { role: 'user', content: 'What is in a.ts?' } },
      { type: 'assistant', uuid: randomUUID(), message: message('msg_1', [{ type: 'text', text: 'Reading it.' }]) },
      { type: 'assistant', uuid: randomUUID(), message: message('msg_1', [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: 'a.ts' } }]) },
      { type: 'system', uuid: randomUUID(), subtype: 'informational', content: 'not a message' },
    ];
    const answer: SessionStoreEntry[] = [
      { type: 'user', uuid: randomUUID(), message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'export const a = 1;' }] } },
      { type: 'assistant', uuid: randomUUID(), message: message('msg_2', [{ type: 'text', text: 'It exports a = 1.' }]) },
    ];
    // when the SDK mirrors it in two batches, the first retried
    await store.append(key, turn);
    await store.append(key, turn);
    await store.append(key, answer);
    // then the session's context is the conversation, each message once
    const [session] = (await client.api.GET('/v1/sessions', { params: { query: { metadata: JSON.stringify({ claudeAgentSdk: key }) } } })).data!.sessions;
    const context = await client.context(session.id, { format: 'anthropic' });
    expect(context.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'What is in a.ts?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Reading it.' },
          { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: 'a.ts' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'export const a = 1;' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'It exports a = 1.' }] },
    ]);
    // and the transcript loads exactly as appended
    expect(await store.load(key)).toEqual([...turn, ...answer]);
  });

  it('keeps the other messages of a batch out of which the conversation refuses one', async () => {
    // given a batch whose middle message holds a server tool call, which the service's log cannot hold
    const refused: string[] = [];
    const { store, client } = await freshStore({ onMessagesError: (error) => refused.push(isProblem(error) ? error.code : String(error)) });
    const key = { projectKey: PROJECTS[1], sessionId: randomUUID() };
    const entries: SessionStoreEntry[] = [
      { type: 'user', uuid: randomUUID(), message: { role: 'user', content: 'Search the web for the release date' } },
      { type: 'assistant', uuid: randomUUID(), message: { role: 'assistant', content: [{ type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'release date' } }] } },
      { type: 'assistant', uuid: randomUUID(), message: { role: 'assistant', content: [{ type: 'text', text: 'Nothing found.' }] } },
    ];
    // when
    await store.append(key, entries);
    // then the other two are in the conversation, the refusal reported, the transcript whole
    const [session] = (await client.api.GET('/v1/sessions', { params: { query: { metadata: JSON.stringify({ claudeAgentSdk: key }) } } })).data!.sessions;
    expect((await client.context(session.id, { format: 'anthropic' })).messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Search the web for the release date' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Nothing found.' }] },
    ]);
    expect(refused).toEqual(['unsupported_native_item']);
    expect(await store.load(key)).toEqual(entries);
  });

  it('with messages: false keeps the transcript only', async () => {
    const { store, client } = await freshStore({ messages: false });
    const key = { projectKey: PROJECTS[1], sessionId: randomUUID() };
    await store.append(key, [{ type: 'user', uuid: randomUUID(), message: { role: 'user', content: 'Hello' } }]);
    const [session] = (await client.api.GET('/v1/sessions', { params: { query: { metadata: JSON.stringify({ claudeAgentSdk: key }) } } })).data!.sessions;
    const { data: page } = await client.api.GET('/v1/sessions/{sessionId}/events', { params: { path: { sessionId: session.id } } });
    expect(page!.events.map((event) => event.type)).toEqual(['session.created', 'record.added']);
    expect(await store.load(key)).toHaveLength(1);
  });

  it('is the sessionStore of a real query(): mirrors what InMemorySessionStore receives, resumes, lists, reads and deletes through it, and its context is the conversation', async () => {
    // given Claude Code (the SDK's bundled binary) against a local Messages API, a project with a file to read
    const cwd = tempDir('claude-query-');
    writeFileSync(join(cwd, 'a.txt'), 'alpha\n');
    const stub = await startClaudeStub(join(cwd, 'a.txt'), 'The file says alpha.');
    const refused: string[] = [];
    const { store, client } = await freshStore({ onMessagesError: (error) => refused.push(String(error)) });
    const memory = new InMemorySessionStore();
    const tee = teeStore(store, memory);
    const env = (configDir: string) => ({
      PATH: process.env.PATH,
      HOME: configDir,
      CLAUDE_CONFIG_DIR: configDir,
      ANTHROPIC_BASE_URL: stub.url,
      ANTHROPIC_API_KEY: 'sk-ant-test',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    });
    const run = async (prompt: string, options: { resume?: string; sessionStore: SessionStore }) => {
      const configDir = tempDir('claude-config-');
      let result: { session_id: string; subtype: string } | undefined;
      for await (const message of query({ prompt, options: { cwd, model: 'claude-sonnet-4-5', maxTurns: 4, settingSources: [], env: env(configDir), ...options } })) {
        if (message.type === 'result') result = message;
      }
      return result!;
    };
    try {
      // when a turn runs with the tee as its sessionStore (Read, then an answer)
      const first = await run('What does a.txt say?', { sessionStore: tee.store });
      await tee.settled();
      expect(first.subtype).toBe('success');

      // then every transcript the SDK mirrored loads from the service as from InMemorySessionStore
      const mainKey = tee.keys().find((key) => key.subpath === undefined)!;
      expect(mainKey).toEqual({ projectKey: cwd.replace(/[^a-zA-Z0-9]/g, '-'), sessionId: first.session_id });
      for (const key of tee.keys()) expect(await store.load(key)).toEqual(json(await memory.load(key)));
      expect(sorted(await store.listSubkeys(mainKey))).toEqual(sorted(await memory.listSubkeys(mainKey)));
      // and the SDK lists the session from the store's summaries
      const [listed] = await listSessions({ dir: cwd, sessionStore: store });
      expect(listed).toMatchObject({ sessionId: first.session_id, firstPrompt: 'What does a.txt say?' });

      // and the service's context holds the conversation: the prompt, the call, its result, the answer
      const [session] = (await client.api.GET('/v1/sessions', { params: { query: { metadata: JSON.stringify({ claudeAgentSdk: mainKey }) } } })).data!.sessions;
      const context = await client.context(session.id, { format: 'anthropic' });
      const blocks = context.messages.flatMap((message) => (typeof message.content === 'string' ? [] : message.content.map((block) => ({ role: message.role, block }))));
      expect(blocks).toEqual(
        expect.arrayContaining([
          { role: 'user', block: expect.objectContaining({ type: 'text', text: 'What does a.txt say?' }) },
          { role: 'assistant', block: expect.objectContaining({ type: 'tool_use', name: 'Read', input: { file_path: join(cwd, 'a.txt') } }) },
          { role: 'user', block: expect.objectContaining({ type: 'tool_result' }) },
          { role: 'assistant', block: { type: 'text', text: 'The file says alpha.' } },
        ]),
      );
      expect(refused).toEqual([]);

      // when the session is resumed from the service alone (a fresh CLAUDE_CONFIG_DIR: no local transcript)
      const before = stub.requests.length;
      const second = await run('Thanks. Again?', { resume: first.session_id, sessionStore: store });
      expect(second.subtype).toBe('success');
      // then the model is sent the first turn, read back through load()
      const resumed = JSON.stringify(stub.requests.slice(before).find((request) => JSON.stringify(request.messages).includes('Thanks. Again?'))!.messages);
      expect(resumed).toContain('What does a.txt say?');
      expect(resumed).toContain('The file says alpha.');
      // and the transcript in the service grew by the new turn, which the SDK reads from it
      const messages = await getSessionMessages(first.session_id, { dir: cwd, sessionStore: store });
      expect(JSON.stringify(messages.filter((message) => message.type === 'user'))).toContain('Thanks. Again?');

      // when the SDK deletes the session, then it is gone from the service, subagents included
      await deleteSession(first.session_id, { dir: cwd, sessionStore: store });
      expect(await store.load(mainKey)).toBeNull();
      expect(await store.listSessions(mainKey.projectKey)).toEqual([]);
      expect(await store.listSubkeys(mainKey)).toEqual([]);
    } finally {
      await stub.close();
    }
  });
});

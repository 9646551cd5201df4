import fc from 'fast-check';
import { Client } from './support/client';
import { startService, TestService } from './support/service';

/**
 * A property of POST /v1/sessions/import, against the real service: for any
 * JSON Lines document (a real export, one mutated, cut at a byte, or spliced
 * from pieces of several exports) the import either
 *  (a) answers 4xx with a problem naming the line (`line`) and leaves no
 *      session behind, or
 *  (b) answers 201 with a session every read of which answers 2xx (the
 *      session, every page of its events, its context in every format at the
 *      head and at every seq, its export, a fork, its SSE stream), whose log
 *      is the document's, whose context reports tokens in proportion to its
 *      size, and whose export imports again into the same log.
 *
 * The valid corpus is exports of a few sessions built through the real API
 * in beforeAll (outputs stored aside, truncated views, reasoning, files,
 * steps, pins, a manual compaction, a prune and an archive); the rest is
 * derived from them, so a run is an import and its reads, not a session
 * built turn by turn.
 *
 * Fixed seed and a bounded run count by default (about a minute); a long run:
 *   PROPERTY_RUNS=2000 PROPERTY_SEED=7 npm run test:import-property
 * (it builds first; after a build, `npx jest test/import-property.e2e-spec.ts`).
 * Tests may read process.env; the service's code may not.
 */
const SEED = Number(process.env.PROPERTY_SEED ?? 42);
const RUNS = Number(process.env.PROPERTY_RUNS ?? 100);
/** Minutes the property may take: a long run sets PROPERTY_RUNS, and this grows with it. */
const TIME_LIMIT_MS = Number(process.env.PROPERTY_TIME_LIMIT_MS ?? Math.max(240_000, RUNS * 4_000));

const FORMATS = ['neutral', 'openai', 'openai-responses', 'anthropic', 'ai-sdk'] as const;
/** Every format at every seq up to this head; beyond it, neutral and one format in turn per seq. */
const ALL_FORMATS_UP_TO = 14;
/** A context's JSON bytes / 4 may exceed its reported tokens by this factor, plus a fixed allowance for the JSON's keys. */
const TOKEN_FACTOR = 2;
const TOKEN_ALLOWANCE = 1_000;
const SSE_TIMEOUT_MS = 5_000;

type Json = any;
type Line = string;

interface Seed {
  name: string;
  lines: Line[];
}

// ---------- the document: lines, parsed where a mutation needs them ----------

const parse = (line: Line): Json => {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
};
const isEvent = (v: Json) => v?.kind === 'event';
const messageParts = (v: Json): Json[] => (isEvent(v) && v.type === 'message.added' && Array.isArray(v.data?.message?.parts) ? v.data.message.parts : []);

/** Seqs from 1 in order and the header's head, after lines were added, dropped or moved. */
function renumber(lines: Line[]): Line[] {
  let seq = 0;
  const out = lines.map((line) => {
    const v = parse(line);
    if (!isEvent(v)) return line;
    return JSON.stringify({ ...v, seq: ++seq });
  });
  const header = parse(out[0]);
  if (header?.kind === 'session' && header.session && typeof header.session === 'object') out[0] = JSON.stringify({ ...header, session: { ...header.session, headSeq: seq } });
  return out;
}

/** The document up to its k-th event (k >= 1): what an export at that head would have been. */
function prefix(lines: Line[], k: number): Line[] {
  const out: Line[] = [];
  let events = 0;
  for (const line of lines) {
    if (isEvent(parse(line)) && ++events > k) break;
    out.push(line);
  }
  return renumber(out);
}

/** Paths of every value in a JSON tree (object keys and array indices), the root excluded. */
function paths(value: Json, at: Array<string | number> = [], out: Array<Array<string | number>> = []) {
  if (value && typeof value === 'object') {
    for (const key of Array.isArray(value) ? value.keys() : Object.keys(value)) {
      const path = [...at, key];
      out.push(path);
      paths(value[key as any], path, out);
    }
  }
  return out;
}
const getAt = (root: Json, path: Array<string | number>) => path.reduce((v, k) => v?.[k], root);

const typeOf = (v: Json) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

// ---------- mutations ----------

type Op =
  | { op: 'retype'; line: number; path: number; value: Json }
  | { op: 'addKey'; line: number; path: number; key: string; value: Json }
  | { op: 'removeKey'; line: number; path: number }
  | { op: 'seq'; line: number; delta: number }
  | { op: 'drop'; line: number }
  | { op: 'dup'; line: number }
  | { op: 'swap'; line: number }
  | { op: 'outputFrom'; part: number; from: Json; keepOutput: boolean; anyResult: boolean }
  | { op: 'forge'; kind: 'compaction' | 'pruned' | 'archived'; at: number; covered: number; pick: number[]; breakPrefix: boolean }
  | { op: 'textNumber'; part: number; value: number }
  | { op: 'fileNoMediaType'; part: number }
  | { op: 'malformedPart'; part: number; value: Json };

const OTHER_VALUES: Json[] = [null, 0, -1, 1.5, 2 ** 53, '', 'x', true, false, [], {}, [1, 'a'], { a: 1 }];
const COMMON_KEYS = ['outputFrom', 'output', 'text', 'type', 'mediaType', 'callId', 'seq', 'id', 'parts', 'role', 'message', 'coveredThroughSeq', 'prefix', 'summary', 'extra', '__proto__'];

/** The [line, part index] of every part of a given kind in the document. */
function partsOf(lines: Line[], type: string): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  lines.forEach((line, i) => messageParts(parse(line)).forEach((p, j) => p?.type === type && found.push([i, j])));
  return found;
}

function withPart(lines: Line[], [i, j]: [number, number], change: (part: Json) => Json): Line[] {
  const v = parse(lines[i]);
  v.data.message.parts[j] = change(v.data.message.parts[j]);
  const out = [...lines];
  out[i] = JSON.stringify(v);
  return out;
}

/** The call ids and event seqs the document holds, for forged service events to name. */
function callIdsOf(lines: Line[]): string[] {
  return [...new Set(lines.flatMap((l) => messageParts(parse(l)).filter((p) => p?.type === 'tool_call').map((p) => p.callId)))];
}

function forge(lines: Line[], templates: Templates, op: Extract<Op, { op: 'forge' }>): Line[] {
  const events = lines.map((l, i) => [i, parse(l)] as const).filter(([, v]) => isEvent(v));
  if (events.length === 0) return lines;
  // Inserted after an event (never before session.created), seqs renumbered later by the case.
  const [after] = events[op.at % events.length];
  const seq = (events.findIndex(([i]) => i === after) ?? 0) + 2;
  const calls = callIdsOf(lines);
  const picked = calls.filter((_, i) => op.pick.includes(i % 8));
  let data: Json;
  let type: string;
  if (op.kind === 'compaction') {
    type = 'compaction.completed';
    const covered = op.covered % Math.max(1, seq - 1);
    data = { ...templates.compaction, markerSeq: Math.max(1, covered), coveredThroughSeq: covered };
    if (op.breakPrefix) data.prefix = [{ id: 'forged', role: 'user', parts: [{ type: 'text', text: 7 }] }];
  } else if (op.kind === 'pruned') {
    type = 'tool_outputs.pruned';
    data = { ...templates.pruned, callIds: op.breakPrefix ? [...picked, 'no-such-call'] : picked };
  } else {
    type = 'tool_results.archived';
    data = { ...templates.archived, callIds: op.breakPrefix ? [...picked, 'no-such-call'] : picked };
  }
  const event = { kind: 'event', seq, id: `forged-${op.kind}-${op.at}`, type, data, createdAt: parse(lines[after]).createdAt };
  // Renumbered: a forged event is meant to reach the checks behind the seq order.
  return renumber([...lines.slice(0, after + 1), JSON.stringify(event), ...lines.slice(after + 1)]);
}

function apply(lines: Line[], op: Op, templates: Templates): Line[] {
  const n = lines.length;
  const at = (k: number) => k % n;
  switch (op.op) {
    case 'retype':
    case 'addKey':
    case 'removeKey': {
      const i = at(op.line);
      const v = parse(lines[i]);
      if (v === undefined) return lines;
      const all = paths(v);
      if (op.op === 'addKey') {
        const objects = [[], ...all].filter((p) => typeOf(getAt(v, p)) === 'object');
        const target = getAt(v, objects[op.path % objects.length]);
        Object.defineProperty(target, op.key, { value: op.value, enumerable: true, writable: true, configurable: true });
      } else {
        if (all.length === 0) return lines;
        const path = all[op.path % all.length];
        const parent = getAt(v, path.slice(0, -1));
        const key = path[path.length - 1];
        if (op.op === 'removeKey') {
          if (Array.isArray(parent)) parent.splice(key as number, 1);
          else delete parent[key];
        } else {
          let value = op.value;
          if (typeOf(value) === typeOf(parent[key])) value = OTHER_VALUES.find((o) => typeOf(o) !== typeOf(parent[key]));
          parent[key] = value;
        }
      }
      const out = [...lines];
      out[i] = JSON.stringify(v);
      return out;
    }
    case 'seq': {
      const events = lines.flatMap((l, i) => (isEvent(parse(l)) ? [i] : []));
      if (events.length === 0) return lines;
      const i = events[op.line % events.length];
      const v = parse(lines[i]);
      const out = [...lines];
      out[i] = JSON.stringify({ ...v, seq: v.seq + op.delta });
      return out;
    }
    case 'drop':
      return n <= 1 ? lines : lines.filter((_, i) => i !== at(op.line));
    case 'dup':
      return [...lines.slice(0, at(op.line) + 1), lines[at(op.line)], ...lines.slice(at(op.line) + 1)];
    case 'swap': {
      const i = at(op.line);
      if (i + 1 >= n) return lines;
      const out = [...lines];
      [out[i], out[i + 1]] = [out[i + 1], out[i]];
      return out;
    }
    case 'outputFrom': {
      // Mostly a result with a stored output, whose ranges a read would slice.
      const all = partsOf(lines, 'tool_result');
      const stored = all.filter(([i, j]) => parse(lines[i]).data.message.parts[j].outputRef);
      const results = op.anyResult || stored.length === 0 ? all : stored;
      if (results.length === 0) return lines;
      return withPart(lines, results[op.part % results.length], (p) => {
        const { output: _output, ...rest } = p;
        return op.keepOutput ? { ...p, outputFrom: op.from } : { ...rest, outputFrom: op.from };
      });
    }
    case 'forge':
      return forge(lines, templates, op);
    case 'textNumber': {
      const texts = partsOf(lines, 'text');
      return texts.length === 0 ? lines : withPart(lines, texts[op.part % texts.length], (p) => ({ ...p, text: op.value }));
    }
    case 'fileNoMediaType': {
      const files = partsOf(lines, 'file');
      if (files.length > 0) return withPart(lines, files[op.part % files.length], ({ mediaType: _mediaType, ...rest }) => rest);
      const texts = partsOf(lines, 'text');
      return texts.length === 0 ? lines : withPart(lines, texts[op.part % texts.length], () => ({ type: 'file', url: 'https://example.com/a.png' }));
    }
    case 'malformedPart': {
      // Any part (of any kind) replaced by a value: a string, a number, an object missing what its type needs.
      const all = lines.flatMap((l, i) => messageParts(parse(l)).map((_, j) => [i, j] as [number, number]));
      return all.length === 0 ? lines : withPart(lines, all[op.part % all.length], () => op.value);
    }
  }
}

interface Templates {
  compaction: Json;
  pruned: Json;
  archived: Json;
}

// ---------- the generated case ----------

type Case =
  | { kind: 'valid'; seed: number; upTo: number | null }
  | { kind: 'mutated'; seed: number; upTo: number | null; ops: Op[]; renumber: boolean }
  | { kind: 'targeted'; seed: number; upTo: number | null; op: Op; pivot: Op | null }
  | { kind: 'truncated'; seed: number; at: number }
  | { kind: 'spliced'; a: number; b: number; cutA: number; fromB: number; countB: number; ops: Op[] };

const small = fc.nat({ max: 1_000 });
const anyJson = fc.oneof(fc.constantFrom(...OTHER_VALUES), fc.jsonValue({ maxDepth: 2 }));
const structuralOps: Array<fc.Arbitrary<Op>> = [
  fc.record({ op: fc.constant('retype' as const), line: small, path: small, value: anyJson }),
  fc.record({ op: fc.constant('addKey' as const), line: small, path: small, key: fc.oneof(fc.constantFrom(...COMMON_KEYS), fc.string({ maxLength: 6 })), value: anyJson }),
  fc.record({ op: fc.constant('removeKey' as const), line: small, path: small }),
  fc.record({ op: fc.constant('seq' as const), line: small, delta: fc.integer({ min: -3, max: 3 }).filter((d) => d !== 0) }),
  fc.record({ op: fc.constant('drop' as const), line: small }),
  fc.record({ op: fc.constant('dup' as const), line: small }),
  fc.record({ op: fc.constant('swap' as const), line: small }),
];
const forgeArb = fc.record({
  op: fc.constant('forge' as const),
  kind: fc.constantFrom('compaction' as const, 'pruned' as const, 'archived' as const),
  at: small,
  covered: small,
  pick: fc.array(fc.nat({ max: 7 }), { maxLength: 4 }),
  breakPrefix: fc.boolean(),
});
/** Changes that keep the lines in order and the seqs gap-free: they reach the checks behind the reader's. */
const semanticOps: Array<fc.Arbitrary<Op>> = [
  fc.record({
    op: fc.constant('outputFrom' as const),
    part: small,
    from: fc.oneof(
      fc.constant(true),
      fc.array(fc.oneof(fc.string({ maxLength: 8 }), fc.tuple(fc.integer({ min: -10, max: 50_000_000 }), fc.integer({ min: -10, max: 50_000_000 }))), { maxLength: 4 }),
      anyJson,
    ),
    keepOutput: fc.boolean(),
    anyResult: fc.boolean(),
  }),
  forgeArb,
  fc.record({ op: fc.constant('textNumber' as const), part: small, value: fc.integer() }),
  fc.record({ op: fc.constant('fileNoMediaType' as const), part: small }),
  fc.record({
    op: fc.constant('malformedPart' as const),
    part: small,
    value: fc.oneof(
      anyJson,
      fc.constantFrom({ type: 'text' }, { type: 'reasoning', text: 1 }, { type: 'file' }, { type: 'tool_call', callId: 'c-x' }, { type: 'image', url: 'x' }, { type: 'text', text: 'x', extra: 1 }),
    ),
  }),
];
const opArb: fc.Arbitrary<Op> = fc.oneof(...structuralOps, ...semanticOps);
const semanticArb: fc.Arbitrary<Op> = fc.oneof(...semanticOps);

function caseArb(seeds: number): fc.Arbitrary<Case> {
  const seed = fc.nat({ max: seeds - 1 });
  const upTo = fc.option(fc.integer({ min: 1, max: 40 }), { freq: 2 });
  return fc.oneof(
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('valid' as const), seed, upTo }) },
    { weight: 6, arbitrary: fc.record({ kind: fc.constant('mutated' as const), seed, upTo, ops: fc.array(opArb, { minLength: 1, maxLength: 3 }), renumber: fc.boolean() }) },
    // One change past the reader's checks, and maybe a forged pivot that hides it from the head's view.
    { weight: 6, arbitrary: fc.record({ kind: fc.constant('targeted' as const), seed, upTo, op: semanticArb, pivot: fc.option(forgeArb.map((f) => ({ ...f, kind: 'compaction' as const }))) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('truncated' as const), seed, at: fc.nat({ max: 1_000_000 }) }) },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('spliced' as const),
        a: seed,
        b: seed,
        cutA: fc.integer({ min: 1, max: 30 }),
        fromB: fc.integer({ min: 2, max: 30 }),
        countB: fc.integer({ min: 1, max: 10 }),
        ops: fc.array(opArb, { maxLength: 1 }),
      }),
    },
  );
}

/** The events of B from its event `from`, each with the tool outputs it cites (declared before it in B). */
function eventsWithOutputs(lines: Line[], from: number, count: number): Line[] {
  const out: Line[] = [];
  let pending: Line[] = [];
  let events = 0;
  for (const line of lines.slice(1)) {
    const v = parse(line);
    if (!isEvent(v)) {
      pending.push(line);
      continue;
    }
    events++;
    if (events >= from && events < from + count) out.push(...pending, line);
    pending = [];
  }
  return out;
}

function build(c: Case, seeds: Seed[], templates: Templates): string {
  const lines = (i: number) => seeds[i % seeds.length].lines;
  switch (c.kind) {
    case 'valid':
      return join(c.upTo === null ? lines(c.seed) : prefix(lines(c.seed), c.upTo));
    case 'mutated': {
      let doc = c.upTo === null ? lines(c.seed) : prefix(lines(c.seed), c.upTo);
      for (const op of c.ops) doc = apply(doc, op, templates);
      return join(c.renumber ? renumber(doc) : doc);
    }
    case 'targeted': {
      let doc = apply(c.upTo === null ? lines(c.seed) : prefix(lines(c.seed), c.upTo), c.op, templates);
      if (c.pivot) doc = apply(doc, c.pivot, templates);
      return join(renumber(doc));
    }
    case 'truncated': {
      const bytes = Buffer.from(join(lines(c.seed)));
      return bytes.subarray(0, c.at % bytes.length).toString('latin1');
    }
    case 'spliced': {
      // A's header and first events, then a run of B's events with their outputs (a ref both cite is declared twice).
      let doc = [...prefix(lines(c.a), c.cutA), ...eventsWithOutputs(lines(c.b), c.fromB, c.countB)];
      for (const op of c.ops) doc = apply(doc, op, templates);
      return join(renumber(doc));
    }
  }
}
const join = (lines: Line[]) => `${lines.join('\n')}\n`;

// ---------- the service ----------

describe('import property: 4xx naming a line and nothing stored, or a session every read of which works', () => {
  let service: TestService;
  let client: Client;
  let key: string;
  let seeds: Seed[];
  let templates: Templates;
  let counter = 0;

  const url = (path: string) => `${service.baseUrl}${path}`;
  const auth = () => ({ authorization: `Bearer ${key}` });
  const path = (id: string) => `/v1/sessions/${encodeURIComponent(id)}`;
  async function get(p: string): Promise<{ status: number; text: string; body: Json }> {
    const res = await fetch(url(p), { headers: auth() });
    const text = await res.text();
    return { status: res.status, text, body: parse(text) };
  }
  /** An answer in a failure message: status and code, and for a 5xx the error the API logged for its request. */
  function answer(res: { status: number; text: string; body?: Json }): string {
    const body = res.body ?? parse(res.text);
    if (res.status < 500 || !body?.requestId) return `${res.status} ${body?.code ?? ''} ${(body?.detail ?? res.text).slice(0, 200)}`;
    const logged = service.api
      .output()
      .split('\n')
      .filter((l) => l.includes(body.requestId))
      .map(parse)
      .find((l) => l?.msg);
    const frame = /\n\s+at (.*(?:libs|apps)\/.*)/.exec(logged?.stack ?? '')?.[1]?.replace(/\(.*?\/(libs|apps)\//, '($1/') ?? '';
    return `${res.status} ${body.code}: ${logged?.msg ?? '(not logged)'}${frame ? ` at ${frame}` : ''}`;
  }
  async function send(method: string, p: string, body: unknown) {
    const res = await fetch(url(p), { method, headers: { ...auth(), 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, text, body: parse(text) };
  }
  async function importDoc(doc: string | Buffer, id: string) {
    const res = await fetch(url(`/v1/sessions/import?id=${encodeURIComponent(id)}`), {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/x-ndjson' },
      body: doc,
    });
    const text = await res.text();
    return { status: res.status, text, body: parse(text), contentType: res.headers.get('content-type') ?? '' };
  }
  const remove = (id: string) => fetch(url(path(id)), { method: 'DELETE', headers: auth() }).then((r) => r.arrayBuffer());

  async function exportOf(id: string): Promise<{ status: number; text: string }> {
    const res = await fetch(url(`${path(id)}/export`), { headers: auth() });
    return { status: res.status, text: await res.text() };
  }

  async function allEvents(id: string): Promise<{ events: Json[]; failures: string[] }> {
    const events: Json[] = [];
    for (let after = 0; ; ) {
      // Small pages: the paging path is exercised too.
      const res = await get(`${path(id)}/events?afterSeq=${after}&limit=7`);
      if (res.status !== 200) return { events, failures: [`GET events?afterSeq=${after} → ${answer(res)}`] };
      events.push(...res.body.events);
      if (res.body.nextAfterSeq === null) return { events, failures: [] };
      after = res.body.nextAfterSeq;
    }
  }

  /** Opens the SSE stream, reads until it delivered seq `head`, then closes it. */
  async function streamReaches(id: string, head: number): Promise<string | null> {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), SSE_TIMEOUT_MS);
    let last = 0;
    try {
      const res = await fetch(url(`${path(id)}/events/stream?afterSeq=0`), { headers: auth(), signal: abort.signal });
      if (res.status !== 200) return `GET events/stream → ${answer({ status: res.status, text: await res.text() })}`;
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      while (last < head) {
        const { value, done } = await reader.read();
        if (done) return `GET events/stream ended after seq ${last} of ${head}`;
        buffer += value;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const idLine = /^id: ?(\d+)$/m.exec(block);
          if (idLine) last = Number(idLine[1]);
        }
      }
      return null;
    } catch (error) {
      return `GET events/stream: ${abort.signal.aborted ? `no seq ${head} within ${SSE_TIMEOUT_MS} ms (last ${last})` : (error as Error).message}`;
    } finally {
      clearTimeout(timer);
      abort.abort();
    }
  }

  /** The context's JSON size against its reported tokens: a large context reported as a few tokens is a lie. */
  function tokenFailure(what: string, body: Json): string | null {
    const estimated = body?.tokens?.estimated;
    if (typeof estimated !== 'number') return `${what}: tokens.estimated is ${JSON.stringify(estimated)} (tokens ${JSON.stringify(body?.tokens)})`;
    // Inline file data is counted per file, not per byte: left out of the size.
    const size = Buffer.byteLength(JSON.stringify({ system: body.system, messages: body.messages }, (k, v) => (k === 'data' || k === 'url' || k === 'image_url' ? '' : v)));
    return size / 4 > TOKEN_FACTOR * estimated + TOKEN_ALLOWANCE ? `${what}: ${size} bytes reported as ${estimated} tokens` : null;
  }

  /** Every read of an imported session; the failures found. */
  async function readsOf(id: string, doc: string): Promise<string[]> {
    const failures: string[] = [];
    const session = await get(path(id));
    if (session.status !== 200) return [`GET session → ${answer(session)}`];
    const head: number = session.body.headSeq;

    const { events, failures: paging } = await allEvents(id);
    failures.push(...paging);
    if (paging.length === 0) {
      if (events.length !== head || events.some((e, i) => e.seq !== i + 1)) failures.push(`GET events: ${events.length} events, head ${head}`);
      // The log is the document's (its events, seqs, ids, types, data and times), refs aside (an import may rename them).
      const docEvents = doc.split('\n').map(parse).filter(isEvent);
      const differs = docEvents.findIndex((d, i) => !sameEvent(d, events[i], true));
      if (differs >= 0) failures.push(`the log differs from the document at seq ${docEvents[differs].seq}: ${JSON.stringify(events[differs]).slice(0, 400)}`);
    }

    const reads: Array<() => Promise<string | null>> = [];
    const context = (format: string, atSeq?: number) => async () => {
      const what = `GET context?format=${format}${atSeq ? `&atSeq=${atSeq}` : ''}`;
      const res = await get(`${path(id)}/context?format=${format}${atSeq ? `&atSeq=${atSeq}` : ''}`);
      if (res.status !== 200) return `${what} → ${answer(res)}`;
      return tokenFailure(what, res.body);
    };
    for (const format of FORMATS) reads.push(context(format));
    for (let seq = 1; seq <= head; seq++) {
      const formats = head <= ALL_FORMATS_UP_TO ? FORMATS : ['neutral', FORMATS[1 + (seq % (FORMATS.length - 1))]];
      for (const format of formats) reads.push(context(format, seq));
    }
    reads.push(() => streamReaches(id, head));
    failures.push(...(await pool(reads, 6)).filter((f): f is string => f !== null));

    // Forks at the first seq, the middle and the head.
    for (const atSeq of [...new Set([1, Math.ceil(head / 2), head])]) {
      const forkId = `${id}-fork-${atSeq}`;
      const fork = await send('POST', `${path(id)}/forks`, { atSeq, id: forkId });
      if (fork.status !== 201) failures.push(`POST forks {atSeq: ${atSeq}} → ${answer(fork)}`);
      else {
        const forked = await get(`${path(forkId)}/context?format=anthropic`);
        if (forked.status !== 200) failures.push(`GET context?format=anthropic of the fork at ${atSeq} → ${answer(forked)}`);
        await remove(forkId);
      }
    }

    // The export imports again into the same log.
    const exported = await exportOf(id);
    if (exported.status !== 200) failures.push(`GET export → ${answer(exported)}`);
    else if (paging.length === 0) {
      const again = `${id}-re`;
      const reimported = await importDoc(exported.text, again);
      if (reimported.status !== 201) failures.push(`re-import of the export → ${answer(reimported)}`);
      else {
        const { events: copy, failures: copyPaging } = await allEvents(again);
        failures.push(...copyPaging.map((f) => `re-imported: ${f}`));
        const differs = events.findIndex((e, i) => !sameEvent(e, copy[i], true));
        if (copyPaging.length === 0 && (differs >= 0 || copy.length !== events.length)) {
          failures.push(`re-imported log differs at seq ${differs + 1}: ${JSON.stringify(copy[differs]).slice(0, 300)}`);
        }
      }
      await remove(again);
    }
    return failures;
  }

  /** One case: the import's answer and what it left. */
  async function check(doc: string, outcomes: Record<string, number>): Promise<string[]> {
    const id = `prop-${++counter}`;
    const res = await importDoc(doc, id);
    const outcome = res.status === 201 ? 'imported' : `${res.status} ${res.body?.code}`;
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    try {
      if (res.status >= 400 && res.status < 500) {
        const failures: string[] = [];
        if (!res.contentType.startsWith('application/problem+json')) failures.push(`import ${res.status} is not problem+json: ${res.contentType}`);
        // Every refusal of a line names it; an empty body has no line to name.
        const line = res.body?.line;
        if (res.body?.code !== 'empty_import' && !(Number.isSafeInteger(line) && line >= 1)) failures.push(`import ${res.status} ${res.body?.code} names no line: ${res.text.slice(0, 300)}`);
        const left = await get(path(id));
        if (left.status !== 404) failures.push(`after import ${res.status}, GET session → ${left.status}`);
        return failures;
      }
      if (res.status !== 201) return [`import → ${answer(res)}`];
      return await readsOf(id, doc);
    } finally {
      if (res.status < 300) await remove(id);
    }
  }

  beforeAll(async () => {
    // Imports are charged to the tenant's byte rate; a long run would wait on it.
    service = await startService({ env: { TENANT_BYTE_RATE: '0' } });
    client = new Client(service.baseUrl);
    ({ key } = await client.createTenant('import-property'));
    seeds = [];
    for (const [name, build] of Object.entries(SESSIONS)) {
      await build(client, key, name);
      const exported = await exportOf(name);
      expect(exported.status).toBe(200);
      seeds.push({ name, lines: exported.text.trimEnd().split('\n') });
    }
    const first = (type: string) => seeds.flatMap((s) => s.lines.map(parse)).find((v) => isEvent(v) && v.type === type)?.data;
    templates = { compaction: first('compaction.completed'), pruned: first('tool_outputs.pruned'), archived: first('tool_results.archived') };
    // The corpus holds what the generators need: real service events.
    expect(templates).toEqual({ compaction: expect.any(Object), pruned: expect.any(Object), archived: expect.any(Object) });
    const results = seeds.flatMap((s) => s.lines.flatMap((l) => messageParts(parse(l)))).filter((p) => p.type === 'tool_result');
    expect(results.some((p) => p.outputRef && p.truncated)).toBe(true);
  }, 120_000);
  afterAll(() => service?.stop());

  it(
    `holds for ${RUNS} generated documents (seed ${SEED})`,
    async () => {
      const outcomes: Record<string, number> = {};
      await fc.assert(
        fc.asyncProperty(caseArb(seeds.length), async (c) => {
          const doc = build(c, seeds, templates);
          const failures = await check(doc, outcomes);
          if (failures.length > 0) throw new Error(`${failures.join('\n')}\n--- document (${doc.length} chars) ---\n${abbreviate(doc)}`);
        }),
        { seed: SEED, numRuns: RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS, markInterruptAsFailure: true },
      );
      // Both sides of the property were exercised: documents imported and read, documents refused.
      const refused = Object.entries(outcomes).filter(([outcome]) => outcome !== 'imported');
      expect({ imported: outcomes.imported > 0, refused: refused.length > 0 }).toEqual({ imported: true, refused: true });
      if (process.env.PROPERTY_REPORT) console.log(`seed ${SEED}, ${RUNS} documents:`, JSON.stringify(outcomes));
    },
    TIME_LIMIT_MS + 60_000,
  );
});

/** Event equality as the import promises it: seq, id, type, data (ref ids aside when `refsAside`), createdAt to the millisecond. */
function sameEvent(a: Json, b: Json, refsAside: boolean): boolean {
  if (!a || !b) return false;
  const norm = (v: Json) => {
    const text = canonical(v);
    return refsAside ? text.replace(/out_[A-Za-z0-9_-]{22}/g, 'out_') : text;
  };
  return a.seq === b.seq && a.id === b.id && a.type === b.type && norm(a.data) === norm(b.data) && Math.abs(Date.parse(a.createdAt) - Date.parse(b.createdAt)) < 1;
}

/** JSON with sorted keys. */
function canonical(v: Json): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/** The document with long strings (chunks, outputs) cut, for a failure message. */
function abbreviate(doc: string): string {
  return doc
    .split('\n')
    .map((line) => line.replace(/"((?:[^"\\]|\\.){120})(?:[^"\\]|\\.){40,}"/g, (_, head) => `"${head}…"`))
    .join('\n')
    .slice(0, 20_000);
}

/** Runs the tasks, at most `width` at a time, in order of their results. */
async function pool<T>(tasks: Array<() => Promise<T>>, width: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < tasks.length) {
        const i = next++;
        results[i] = await tasks[i]();
      }
    }),
  );
  return results;
}

// ---------- the sessions the corpus is exported from ----------

const user = (text: string) => ({ type: 'message.added', data: { message: { role: 'user', parts: [{ type: 'text', text }] } } });
const assistant = (...parts: Json[]) => ({ type: 'message.added', data: { message: { role: 'assistant', parts } } });
const call = (callId: string, command: string) => ({ type: 'tool_call', callId, name: 'bash', input: { command } });
const result = (callId: string, output: string, isError = false) => ({
  type: 'message.added',
  data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId, name: 'bash', output, ...(isError ? { isError } : {}) }] } },
});
const stepFinished = (input: number, output = 100) => ({ type: 'step.finished', data: { usage: { input_tokens: input, output_tokens: output }, finishReason: 'stop' } });
const logLines = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `  at check${i} (src/${tag}.ts:${i + 1}:${(i * 7) % 80}) value=${(i * 7919) % 100003}`).join('\n');

async function append(client: Client, key: string, id: string, events: unknown[]) {
  const res = await client.append(key, id, { events });
  if (res.status !== 201) throw new Error(`append to ${id}: ${res.status} ${res.text}`);
}
async function expectStatus(res: Promise<{ status: number; text: string }>, status: number, what: string) {
  const r = await res;
  if (r.status !== status) throw new Error(`${what}: ${r.status} ${r.text}`);
  return r as any;
}

/** Each builds a session of at most ~25 events with the given id through the real API. */
const SESSIONS: Record<string, (client: Client, key: string, id: string) => Promise<void>> = {
  // Outputs stored aside (one whole, one truncated to head and tail), reasoning, files, steps, pins, a manual compaction, a config change.
  'seed-rich': async (client, key, id) => {
    // Few lines kept in context, so a 400-line output is stored with a head-and-tail view.
    const config = { limits: { context: 16_000, output: 2_000 }, toolOutput: { maxLines: 60 } };
    await client.createSession(key, { id, model: 'gpt-4.1', system: 'You are a careful coding agent.', config });
    await append(client, key, id, [
      user('Fix the failing test in src/a.ts; keep Node 20.'),
      assistant({ type: 'reasoning', text: 'The test output will tell which check fails.' }, { type: 'text', text: 'Running the tests.' }, call('c-1', 'npm test')),
      result('c-1', `FAIL src/a.spec.ts\n${logLines(150, 'a')}`, true),
      assistant({ type: 'text', text: 'Now the full log.' }, call('c-2', 'cat build.log')),
      result('c-2', `BUILD LOG\n${logLines(2_000, 'build')}`),
      stepFinished(9_000),
    ]);
    await expectStatus(client.request('POST', `/v1/sessions/${id}/pins`, { key, body: { text: 'PIN: deploy only to eu-west-1.' } }), 201, 'pin');
    await append(client, key, id, [
      {
        type: 'message.added',
        data: {
          message: {
            role: 'user',
            parts: [
              { type: 'text', text: 'Here is the screenshot and the spec.' },
              { type: 'file', mediaType: 'image/png', url: 'https://example.com/screen.png', filename: 'screen.png' },
              { type: 'file', mediaType: 'text/plain', data: Buffer.from('spec: the check must pass').toString('base64'), filename: 'spec.txt' },
            ],
          },
        },
      },
      assistant({ type: 'text', text: 'Fixed the off-by-one in check3.' }),
      stepFinished(9_500),
    ]);
    await expectStatus(client.request('POST', `/v1/sessions/${id}/compactions`, { key, body: { wait: true } }), 200, 'compaction');
    const pinned = await client.request('POST', `/v1/sessions/${id}/pins`, { key, body: { text: 'PIN: temporary.' } });
    await append(client, key, id, [user('Run the suite again.'), assistant(call('c-3', 'npm test')), result('c-3', 'ok 12 tests'), assistant({ type: 'text', text: 'All green.' }), stepFinished(3_000)]);
    await expectStatus(client.request('DELETE', `/v1/sessions/${id}/pins/${pinned.body.pinId}`, { key }), 204, 'unpin');
    await expectStatus(client.request('PATCH', `/v1/sessions/${id}`, { key, body: { config: { compaction: { retainLastTurns: 1 } } } }), 200, 'config change');
  },
  // A prune and an archive by the service: tool_outputs.pruned and tool_results.archived.
  'seed-prune': async (client, key, id) => {
    await client.createSession(key, {
      id,
      model: 'gpt-4.1',
      config: { preset: 'opencode', toolOutput: { enabled: false }, prune: { protectTokens: 200, minimumTokens: 200 }, archive: { enabled: true, toolCallCutoff: 3, strategy: 'heuristic' } },
    });
    await append(client, key, id, [
      user('Find the failing module.'),
      ...[1, 2, 3, 4, 5].flatMap((n) => [assistant(call(`p-${n}`, `run ${n}`)), result(`p-${n}`, `result of p-${n}: src/module${n}.ts\n${logLines(n === 3 ? 400 : 5, `m${n}`)}`)]),
      assistant({ type: 'text', text: 'Module 1 fails.' }),
      user('Turn 2'),
      assistant({ type: 'text', text: 'Done.' }),
      user('Turn 3'),
      assistant({ type: 'text', text: 'Done again.' }),
    ]);
    const report = await expectStatus(client.request('POST', `/v1/sessions/${id}/prune`, { key, body: { wait: true } }), 200, 'prune');
    if (report.body.prune.status !== 'pruned' || report.body.archive.status !== 'archived') throw new Error(`prune: ${report.text}`);
  },
  // Small: an aborted turn with a call left unanswered, an overflow.
  'seed-small': async (client, key, id) => {
    await client.createSession(key, { id, model: 'claude-haiku-4-5', system: 'Be brief.' });
    await append(client, key, id, [
      user('List the files.'),
      assistant({ type: 'text', text: 'Listing.' }, call('s-1', 'ls')),
      { type: 'turn.aborted', data: { reason: 'user' } },
      user('Never mind.'),
      { type: 'context.overflowed', data: { error: 'prompt is too long' } },
    ]);
  },
};

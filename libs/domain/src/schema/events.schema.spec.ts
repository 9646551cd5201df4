import fc from 'fast-check';
import { parseClientEvent } from '../append-validation';
import { resolveSessionConfig } from '../config';
import { buildCompletedData, decideAfterFailure, decideCompletion, nothingToCompactEvent } from '../compaction/decide';
import { planCompaction } from '../compaction/plan';
import { buildPrefix } from '../compaction/strategies';
import { eventLog } from '../compaction/testing/event-log';
import { markerEvent } from '../compaction/trigger';
import { DomainError } from '../errors';
import { CLIENT_EVENT_TYPES, EVENT_TYPES, NewEvent, Role, ROLES } from '../events';
import { pinAddedEvent, pinRemovedEvent } from '../pins/pins';
import { archivedEvent, prunedEvent } from '../prune/maintenance';
import { selectPrune } from '../prune/select-prune';
import { opencodeOptions, outputOf } from '../prune/testing/session-log';
import { errorOf } from '../testing/expect-domain-error';
import { API_SCHEMAS } from './api-schemas';
import { ID_PATTERN } from './ids';
import { createApiValidator } from './validator';

const validators = createApiValidator();
const validateNewEvent = validators.get('NewEvent');
const validateEvent = validators.get('Event');

/** A stored event as GET .../events and the event stream write it. */
const onTheWire = (event: NewEvent, seq: number) =>
  JSON.parse(JSON.stringify({ seq, id: event.id, type: event.type, data: event.data, createdAt: new Date(Date.UTC(2026, 0, 1)) })) as unknown;

const eventErrors = (value: unknown) => (validateEvent(value) ? [] : validateEvent.errors);

// ---- valid client events, shaped after the domain types

const id = fc.stringMatching(ID_PATTERN);
const text = fc.string({ maxLength: 12 });
const count = fc.maxSafeNat();
const file = fc
  .record({ type: fc.constant('file'), mediaType: fc.constantFrom('image/png', 'application/pdf'), filename: text }, { requiredKeys: ['type', 'mediaType'] })
  .chain((part) => fc.oneof(fc.record({ url: fc.webUrl() }), fc.record({ data: fc.base64String({ maxLength: 12 }) })).map((source) => ({ ...part, ...source })));
const textPart = fc.record({ type: fc.constant('text'), text });
const reasoningPart = fc.record({ type: fc.constant('reasoning'), text });
const toolCall = fc.record({ type: fc.constant('tool_call'), callId: id, name: fc.string({ minLength: 1, maxLength: 20 }), input: fc.jsonValue({ maxDepth: 2 }) });
const toolResult = fc
  .record({ type: fc.constant('tool_result'), callId: id, name: text, isError: fc.boolean(), attachments: fc.array(file, { maxLength: 2 }) }, { requiredKeys: ['type', 'callId'] })
  .chain((part) => fc.oneof(fc.record({ output: text }), fc.record({ outputRef: fc.record({ id }) })).map((output) => ({ ...part, ...output })));
const partsOf: Record<Role, fc.Arbitrary<object>[]> = {
  system: [textPart],
  user: [textPart, file],
  assistant: [textPart, reasoningPart, file, toolCall],
  tool: [toolResult],
};
const metadata = fc.record({ agentVisible: fc.boolean(), userVisible: fc.boolean(), kind: fc.string({ maxLength: 64 }), trace: text }, { requiredKeys: [] });
const message = fc
  .constantFrom(...ROLES)
  .chain((role) =>
    fc.record({ id, role: fc.constant(role), parts: fc.array(fc.oneof(...partsOf[role]), { minLength: 1, maxLength: 3 }), metadata }, { requiredKeys: ['role', 'parts'] }),
  );
const usage = fc.record(
  { input_tokens: count, output_tokens: count, cache_creation_tokens: count, cache_read_tokens: count },
  { requiredKeys: ['input_tokens', 'output_tokens'] },
);
const envelope = (type: string, data: fc.Arbitrary<object>, dataRequired: boolean) =>
  fc.record({ id, type: fc.constant(type), data }, { requiredKeys: dataRequired ? ['type', 'data'] : ['type'] });
const clientEvent = fc.oneof(
  envelope('message.added', fc.record({ message }), true),
  envelope('step.finished', fc.record({ usage, finishReason: fc.string({ maxLength: 64 }), contextSeq: count }, { requiredKeys: ['usage'] }), true),
  envelope('turn.aborted', fc.record({ reason: text }, { requiredKeys: [] }), false),
  envelope('context.overflowed', fc.record({ error: text }, { requiredKeys: [] }), false),
  envelope('compaction.requested', fc.record({ instructions: text }, { requiredKeys: [] }), false),
);

/** Every path into a JSON value, as keys from the root. */
function pathsOf(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value)) return [at, ...value.flatMap((item, i) => pathsOf(item, [...at, i]))];
  if (value !== null && typeof value === 'object') return [at, ...Object.entries(value).flatMap(([key, child]) => pathsOf(child, [...at, key]))];
  return [at];
}

/** `value` with the node at `path` replaced (undefined deletes it); the input is left as it was. */
function replaced(value: unknown, path: (string | number)[], next: unknown): unknown {
  if (path.length === 0) return next;
  const copy = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<string | number, unknown>;
  const [key, ...rest] = path;
  const child = replaced(copy[key], rest, next);
  if (child === undefined) delete copy[key];
  else copy[key] = child;
  return copy;
}

const PROBLEM_CODES = ['invalid_field', 'unknown_field', 'field_too_long', 'invalid_id', 'unknown_role', 'invalid_part', 'unknown_event_type', 'reserved_event_type'];

describe('NewEvent: the append schema and parseClientEvent', () => {
  it('accepts every valid client event, and what parseClientEvent makes of it is a documented stored Event (property)', () => {
    fc.assert(
      fc.property(clientEvent, (raw) => {
        // given a client event shaped like the domain types
        // when the schema checks it and the parser normalizes it
        expect(validateNewEvent(raw)).toBe(true);
        const parsed = parseClientEvent(raw, '$.e', () => 'generated');
        // then once stored, it is what the Event schema documents
        expect(eventErrors(onTheWire(parsed, 1))).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('agrees with the parser on broken events: a refusal is a DomainError with a known code and a path inside the event (property)', () => {
    const junk = fc.oneof(fc.constant(null), fc.constant(undefined), fc.boolean(), fc.integer(), fc.string({ maxLength: 3 }), fc.constant([]), fc.constant({}));
    const broken = clientEvent.chain((event) =>
      fc.tuple(fc.constant(event), fc.constantFrom(...pathsOf(event)), junk, fc.boolean()).map(([e, path, value, addKey]) =>
        // Either the node at `path` becomes junk (or goes), or an object there gains an unknown key.
        addKey ? replaced(e, [...path, 'extra'], 1) : replaced(e, path, value),
      ),
    );
    const verdicts = new Set<boolean>();
    fc.assert(
      fc.property(broken, (raw) => {
        const accepted = validateNewEvent(raw);
        verdicts.add(accepted);
        try {
          parseClientEvent(raw, '$.e', () => 'generated');
          expect(accepted).toBe(true);
        } catch (error) {
          expect(accepted).toBe(false);
          expect(error).toBeInstanceOf(DomainError);
          expect(PROBLEM_CODES).toContain((error as DomainError).code);
          expect((error as DomainError).details?.path).toMatch(/^\$\.e(\.|\[|$)/);
        }
      }),
      { numRuns: 500 },
    );
    // both answers came up: some mutations are harmless (a dropped optional field)
    expect(verdicts).toEqual(new Set([true, false]));
  });

  it.each([
    ['an unknown type', { type: 'session.hacked' }, 'unknown_event_type', '$.e.type'],
    ['a service type', { type: 'compaction.completed', data: {} }, 'reserved_event_type', '$.e.type'],
    ['a server-assigned field', { type: 'turn.aborted', seq: 3 }, 'unknown_field', '$.e.seq'],
    ['an unknown role', { type: 'message.added', data: { message: { role: 'developer', parts: [] } } }, 'unknown_role', '$.e.data.message.role'],
    [
      'a part the role may not send',
      { type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'text', text: 'x' }] } } },
      'invalid_part',
      '$.e.data.message.parts[0].type',
    ],
    [
      'a tool result with both output and outputRef',
      { type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId: 'c', output: 'o', outputRef: { id: 'r' } }] } } },
      'invalid_part',
      '$.e.data.message.parts[0]',
    ],
    [
      'a tool call without input',
      { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId: 'c', name: 'n' }] } } },
      'invalid_part',
      '$.e.data.message.parts[0].input',
    ],
    [
      'a bad call id',
      { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId: 'a b', name: 'n', input: 1 }] } } },
      'invalid_id',
      '$.e.data.message.parts[0].callId',
    ],
    ['a negative token count', { type: 'step.finished', data: { usage: { input_tokens: -1, output_tokens: 0 } } }, 'invalid_field', '$.e.data.usage.input_tokens'],
    [
      'a finish reason over 64 characters',
      { type: 'step.finished', data: { usage: { input_tokens: 1, output_tokens: 0 }, finishReason: 'r'.repeat(65) } },
      'field_too_long',
      '$.e.data.finishReason',
    ],
    ['an automatic compaction from a client', { type: 'compaction.requested', data: { auto: true } }, 'unknown_field', '$.e.data.auto'],
  ])('refuses %s in the schema, and the parser answers its code and path', (_, raw, code, path) => {
    expect(validateNewEvent(raw)).toBe(false);
    const error = errorOf(() => parseClientEvent(raw, '$.e', () => 'generated'));
    expect({ code: error.code, path: error.details?.path }).toEqual({ code, path });
  });
});

describe('Event: the stored events the service writes', () => {
  const log = eventLog();
  log.user('Set up the repo.');
  const callIds = [log.tool('bash', { output: outputOf(30_000) }), log.tool('read', { output: outputOf(30_000), refId: 'out_1' })];
  log.assistant('Done.').user('Next.').assistant('Ok.').user('More.').assistant('Sure.').step(90_000, 'stop');

  function completion() {
    const { compaction } = resolveSessionConfig('opencode');
    const markerSeq = log.head + 1;
    const plan = planCompaction({ events: log.events, pivot: null, markerSeq, config: compaction, usable: 100_000 });
    if (plan.kind !== 'plan') throw new Error(plan.reason);
    const prefix = buildPrefix({ plan, summary: '## Goal\n- set up the repo', retain: null, config: compaction });
    const data = buildCompletedData({
      marker: { seq: markerSeq, auto: true, reason: 'threshold' },
      plan,
      prefix,
      strategy: compaction.strategy,
      summary: 'S',
      retain: null,
      model: 'heuristic',
      durationMs: 3,
      evicted: [{ section: 'values', text: 'tmp/batch-1.csv' }],
    });
    return decideCompletion({ latestCompletedMarkerSeq: null }, data, { ...compaction, autoContinue: true });
  }

  const serviceEvents = (): [string, NewEvent][] => [
    ['session.created', { id: 'session-created', type: 'session.created', data: { model: 'gpt-4.1', system: 'Be brief.', config: { preset: 'codex' }, metadata: { team: 'a' } } }],
    ['the automatic marker', markerEvent(12, 'threshold')],
    ['a manual marker with instructions', markerEvent(12, 'manual', 'keep the plan')],
    ...completion().map((event): [string, NewEvent] => [`the completion's ${event.type}`, event]),
    [
      'a failed summary',
      decideAfterFailure({
        markerSeq: 12,
        attempt: 1,
        source: 'llm',
        sourceAttempt: 1,
        failure: { kind: 'timeout', message: 'no answer' },
        config: resolveSessionConfig('opencode').compaction,
        canTrim: false,
      }).event,
    ],
    ['nothing to compact', nothingToCompactEvent({ kind: 'nothing', markerSeq: 12, reason: 'empty_window' })],
    ['a prune', prunedEvent(20, selectPrune(log.events, opencodeOptions({ protectTurns: 0 }))!)],
    ['an archive with its digest', archivedEvent(21, callIds, '- bash: ok', { strategy: 'heuristic', digestBy: 'heuristic' })],
    ['a config change', { id: 'config-changed-22', type: 'session.config_changed', data: { patch: { limits: { context: null }, compaction: { thresholdRatio: 0.7 } } } }],
    ['a pin', pinAddedEvent('pin-1', 'Never touch prod.')],
    ['an unpin', pinRemovedEvent('pin-1')],
  ];

  it.each(serviceEvents())('documents %s', (_, event) => {
    expect(eventErrors(onTheWire(event, 1))).toEqual([]);
  });

  it('documents every stored client event of a session log, and inherited ones with their origin', () => {
    for (const event of log.events) expect(eventErrors(JSON.parse(JSON.stringify(event, (key, v: unknown) => (key === 'tokens' ? undefined : v))))).toEqual([]);
    expect(eventErrors({ ...(onTheWire(pinRemovedEvent('p'), 3) as object), origin: { sessionId: 'source', seq: 3 } })).toEqual([]);
  });

  it.each([
    ['an unknown type', { type: 'session.hacked', data: {} }],
    ['a prune without its call ids', { type: 'tool_outputs.pruned', data: { tokensFreed: 1, policy: {} } }],
    ['a completion without its prefix', { type: 'compaction.completed', data: { markerSeq: 1, coveredThroughSeq: 1, summary: 's' } }],
    ['a pin with an extra field', { type: 'pin.removed', data: { pinId: 'p', text: 'x' } }],
  ])('does not document %s', (_, event) => {
    expect(validateEvent({ seq: 1, id: 'e1', createdAt: '2026-01-01T00:00:00.000Z', ...event })).toBe(false);
  });
});

describe('API_SCHEMAS: the components as one document', () => {
  const refsOf = (value: unknown): string[] =>
    Array.isArray(value)
      ? value.flatMap(refsOf)
      : value !== null && typeof value === 'object'
        ? Object.entries(value).flatMap(([key, child]) => (key === '$ref' ? [child as string] : refsOf(child)))
        : [];

  it('has every example valid against its own schema', () => {
    const withExamples = Object.entries(API_SCHEMAS).filter(([, schema]) => 'examples' in schema);
    expect(withExamples.map(([name]) => name)).toContain('AppendRequest');
    for (const [name, schema] of withExamples) {
      for (const example of schema.examples as unknown[]) expect({ name, valid: validators.get(name)(example) }).toEqual({ name, valid: true });
    }
  });

  it('has every $ref resolve to a component', () => {
    const missing = refsOf(API_SCHEMAS).filter((ref) => !(ref.replace('#/components/schemas/', '') in API_SCHEMAS));
    expect(missing).toEqual([]);
  });

  it('discriminates NewEvent on each client type and Event on every event type, each mapping to a branch of its oneOf', () => {
    const mapping = (name: string) => (API_SCHEMAS[name] as { discriminator: { mapping: Record<string, string> } }).discriminator.mapping;
    expect(Object.keys(mapping('NewEvent'))).toEqual([...CLIENT_EVENT_TYPES]);
    expect(Object.keys(mapping('Event'))).toEqual([...EVENT_TYPES]);
    for (const name of ['NewEvent', 'Event', 'NewMessage', 'Part']) {
      expect(Object.values(mapping(name))).toEqual((API_SCHEMAS[name] as { oneOf: { $ref: string }[] }).oneOf.map((branch) => branch.$ref));
    }
  });
});

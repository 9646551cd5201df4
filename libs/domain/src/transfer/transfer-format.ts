import { assertStoredEventData, ID_PATTERN } from '../append-validation';
import { invalid } from '../errors';
import { EVENT_TYPES, EventType, NewEvent, ToolOutputRef } from '../events';
import { assertInlineOutput } from '../tool-output/inline-output';
import { ImportedEvent, ImportedLogCheck } from './imported-log';

/**
 * The session export format (JSON Lines), version 1:
 *
 * 1. `{"kind":"session","format":"session-store.session","version":1,"session":{id, model, system, config, metadata, headSeq, createdAt}}`
 * 2. then every event in seq order, `{"kind":"event","seq","id","type","data","createdAt"}`,
 *    each preceded by the tool outputs it references that no earlier line
 *    carried: `{"kind":"tool_output","ref","byteSize","lineCount","sha256"}`
 *    followed by its bytes in order, `{"kind":"tool_output.chunk","ref","offset","data"}`
 *    (base64, at most IMPORT_CHUNK_MAX_BYTES each; none for an empty output).
 *    An output its event keeps inline (`outputPlacement`) has no such lines:
 *    the first event citing its ref holds it whole, with the ref's figures.
 *
 * Outputs come before the events that use them, as an upload comes before
 * the append that cites it, so an import can check every ref when it reads
 * the event, holding nothing but the figures of the outputs seen.
 */
export const TRANSFER_FORMAT = 'session-store.session';
export const TRANSFER_VERSION = 1;
/** Bytes per chunk line the export writes. */
export const EXPORT_CHUNK_BYTES = 48 * 1024;
/** Bytes per chunk line an import accepts. */
export const IMPORT_CHUNK_MAX_BYTES = 1024 * 1024;
/** Ref ids as this service mints them (`out_` + 128 bits, base64url): an import may rename one, rewriting it wherever the log cites it. */
export const REF_ID_PATTERN = /^out_[A-Za-z0-9_-]{22}$/;
const REF_IDS = /out_[A-Za-z0-9_-]{22}/g;

export interface ExportedSession {
  id: string;
  model: string;
  system: string | null;
  config: Record<string, unknown>;
  metadata: Record<string, unknown>;
  headSeq: number;
  createdAt: string;
}

export interface DeclaredOutput {
  ref: string;
  byteSize: number;
  lineCount: number;
  /** Hex. */
  sha256: string;
}

export interface TransferEvent {
  seq: number;
  id: string;
  type: EventType;
  data: Record<string, unknown>;
  createdAt: string;
}

const line = (value: object) => `${JSON.stringify(value)}\n`;

export const sessionLine = (session: ExportedSession) => line({ kind: 'session', format: TRANSFER_FORMAT, version: TRANSFER_VERSION, session });
export const outputLine = (output: DeclaredOutput) => line({ kind: 'tool_output', ...output });
export const chunkLine = (ref: string, offset: number, base64: string) => line({ kind: 'tool_output.chunk', ref, offset, data: base64 });
export const eventLine = (event: TransferEvent) => line({ kind: 'event', ...event });

/** The output refs an event's tool results cite, in order. */
export function eventOutputRefs(event: NewEvent): ToolOutputRef[] {
  if (event.type !== 'message.added') return [];
  const refs: ToolOutputRef[] = [];
  for (const part of event.data.message.parts) if (part.type === 'tool_result' && part.outputRef) refs.push(part.outputRef);
  return refs;
}

/**
 * Rewrites every mention of a renamed ref id in a value (refs, in-context
 * views, placeholders, summaries, a model's tool-call input): ids are 128
 * random bits, so a mention is never anything else.
 */
export function renameRefs<T>(value: T, renamed: ReadonlyMap<string, string>): T {
  if (renamed.size === 0) return value;
  const text = JSON.stringify(value);
  const rewritten = text.replace(REF_IDS, (id) => renamed.get(id) ?? id);
  return rewritten === text ? value : (JSON.parse(rewritten) as T);
}

type Json = Record<string, unknown>;

/**
 * renameRefs for an imported event, except the outputs its results hold
 * inline (`inline`: their refs' ids as exported): those texts are the
 * outputs' bytes, which their sha256 names and which a stored output's
 * chunks keep unrenamed too.
 */
export function renameEventRefs(event: TransferEvent, renamed: ReadonlyMap<string, string>, inline: ReadonlySet<string>): TransferEvent {
  const result = renameRefs(event, renamed);
  if (result === event || event.type !== 'message.added') return result;
  const sent = (event.data.message as { parts: Json[] }).parts;
  (result.data.message as { parts: Json[] }).parts.forEach((part, i) => {
    if (part.type === 'tool_result' && part.truncated !== true && inline.has((sent[i].outputRef as Json | undefined)?.id as string)) part.output = sent[i].output;
  });
  return result;
}
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function exactKeys(value: Json, keys: readonly string[], what: string): void {
  for (const key of Object.keys(value)) if (!keys.includes(key)) throw invalid('unknown_field', `${what} has an unknown field ${JSON.stringify(key)}`);
}
function count(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw invalid('invalid_field', `${what} must be a non-negative integer`);
  return value;
}
function text(value: unknown, what: string): string {
  if (typeof value !== 'string') throw invalid('invalid_field', `${what} must be a string`);
  return value;
}
function id(value: unknown, what: string): string {
  if (typeof value !== 'string' || !ID_PATTERN.test(value)) throw invalid('invalid_id', `${what} must match ${ID_PATTERN.source}`);
  return value;
}
function timestamp(value: unknown, what: string): string {
  // ISO 8601 with an offset, as the export writes; a date that does not exist fails Date.parse.
  if (typeof value !== 'string' || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(value) || Number.isNaN(Date.parse(value))) {
    throw invalid('invalid_field', `${what} must be an ISO 8601 date-time with an offset`);
  }
  return value;
}
function object(value: unknown, what: string): Json {
  if (!isObject(value)) throw invalid('invalid_field', `${what} must be an object`);
  return value;
}

/** What the next line of an import holds, once the reader accepted it. */
export type ImportStep =
  | { kind: 'output'; output: DeclaredOutput }
  | { kind: 'chunk'; ref: string; base64: string; last: boolean }
  /** `inlineRefs`: the refs this event is the first to cite, holding their outputs inline. */
  | { kind: 'event'; event: TransferEvent; inlineRefs: string[] };

/**
 * Checks an import line by line, in order, holding only the figures of the
 * outputs seen: the header first (format and version), events gap-free from
 * seq 1 (`session.created`) to the header's head, each output whole (chunks
 * in order, exactly its declared size) before the next line, and every ref an
 * event cites declared earlier with the same figures. Byte contents (sha256,
 * line count) are the store's to check as they stream by. Every refusal is
 * an `invalid` DomainError; the caller adds the line number.
 */
export class ImportReader {
  private session: ExportedSession | undefined;
  private lastSeq = 0;
  private open: { output: DeclaredOutput; received: number } | undefined;
  private readonly outputs = new Map<string, DeclaredOutput>();
  /** Refs of outputs held inline by their events (no tool_output line), by their ids as exported. */
  readonly inline = new Set<string>();
  /** The latest compaction.completed: the imported session's pivot. */
  pivot: { seq: number; coveredThroughSeq: number } | null = null;
  private readonly log = new ImportedLogCheck();

  header(value: unknown): ExportedSession {
    const raw = object(value, 'the first line');
    if (raw.kind !== 'session' || raw.format !== TRANSFER_FORMAT) {
      throw invalid('not_a_session_export', `the first line must be {"kind":"session","format":"${TRANSFER_FORMAT}",...}`);
    }
    if (raw.version !== TRANSFER_VERSION) {
      throw invalid('unsupported_version', `format version ${JSON.stringify(raw.version)} is not supported (this service reads version ${TRANSFER_VERSION})`, {
        supported: [TRANSFER_VERSION],
      });
    }
    exactKeys(raw, ['kind', 'format', 'version', 'session'], 'the header');
    const s = object(raw.session, 'session');
    exactKeys(s, ['id', 'model', 'system', 'config', 'metadata', 'headSeq', 'createdAt'], 'session');
    this.session = {
      id: id(s.id, 'session.id'),
      model: text(s.model, 'session.model'),
      system: s.system === null ? null : text(s.system, 'session.system'),
      config: object(s.config, 'session.config'),
      metadata: object(s.metadata, 'session.metadata'),
      headSeq: count(s.headSeq, 'session.headSeq'),
      createdAt: timestamp(s.createdAt, 'session.createdAt'),
    };
    if (this.session.headSeq < 1) throw invalid('invalid_field', 'session.headSeq must be at least 1 (session.created)');
    return this.session;
  }

  next(value: unknown): ImportStep {
    if (!this.session) throw new Error('header() first');
    const raw = object(value, 'a line');
    if (this.open && raw.kind !== 'tool_output.chunk') throw this.cutShort();
    switch (raw.kind) {
      case 'tool_output':
        return { kind: 'output', output: this.declare(raw) };
      case 'tool_output.chunk':
        return this.chunk(raw);
      case 'event': {
        const known = this.inline.size;
        const event = this.event(raw);
        return { kind: 'event', event, inlineRefs: [...this.inline].slice(known) };
      }
      default:
        throw invalid('unknown_line_kind', `kind ${JSON.stringify(raw.kind)} is not session, tool_output, tool_output.chunk or event`);
    }
  }

  /** After the last line: nothing cut short, every event present. */
  finish(): void {
    if (this.open) throw this.cutShort();
    if (this.lastSeq !== this.session!.headSeq) {
      throw invalid('missing_events', `the import ends at seq ${this.lastSeq}; the header says the session's head is ${this.session!.headSeq}`, {
        lastSeq: this.lastSeq,
        headSeq: this.session!.headSeq,
      });
    }
  }

  private cutShort() {
    const { output, received } = this.open!;
    return invalid('output_cut_short', `tool output ${output.ref} ends after ${received} of its ${output.byteSize} bytes`, { ref: output.ref });
  }

  private declare(raw: Json): DeclaredOutput {
    exactKeys(raw, ['kind', 'ref', 'byteSize', 'lineCount', 'sha256'], 'tool_output');
    const ref = text(raw.ref, 'ref');
    if (!REF_ID_PATTERN.test(ref)) throw invalid('invalid_id', `ref must match ${REF_ID_PATTERN.source}`);
    if (this.outputs.has(ref)) throw invalid('duplicate_output', `tool output ${ref} was given before`);
    const sha256 = text(raw.sha256, 'sha256');
    if (!/^[0-9a-f]{64}$/.test(sha256)) throw invalid('invalid_field', 'sha256 must be 64 lowercase hex digits');
    const output = { ref, byteSize: count(raw.byteSize, 'byteSize'), lineCount: count(raw.lineCount, 'lineCount'), sha256 };
    this.outputs.set(ref, output);
    if (output.byteSize > 0) this.open = { output, received: 0 };
    return output;
  }

  private chunk(raw: Json): ImportStep {
    exactKeys(raw, ['kind', 'ref', 'offset', 'data'], 'tool_output.chunk');
    if (!this.open || raw.ref !== this.open.output.ref) {
      throw invalid('unexpected_chunk', 'a tool_output.chunk must follow its tool_output line or the previous chunk of the same ref');
    }
    const offset = count(raw.offset, 'offset');
    if (offset !== this.open.received) throw invalid('chunk_out_of_order', `chunk at offset ${offset}; expected offset ${this.open.received}`);
    const base64 = text(raw.data, 'data');
    if (base64.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(base64) || base64.length === 0) {
      throw invalid('invalid_field', 'data must be non-empty padded base64');
    }
    const bytes = (base64.length / 4) * 3 - (base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0);
    if (bytes > IMPORT_CHUNK_MAX_BYTES) throw invalid('chunk_too_large', `a chunk holds at most ${IMPORT_CHUNK_MAX_BYTES} bytes`);
    this.open.received += bytes;
    const { output } = this.open;
    if (this.open.received > output.byteSize) {
      throw invalid('output_size_mismatch', `tool output ${output.ref} holds more than its declared ${output.byteSize} bytes`, { ref: output.ref });
    }
    const last = this.open.received === output.byteSize;
    if (last) this.open = undefined;
    return { kind: 'chunk', ref: output.ref, base64, last };
  }

  private event(raw: Json): TransferEvent {
    exactKeys(raw, ['kind', 'seq', 'id', 'type', 'data', 'createdAt'], 'event');
    const seq = count(raw.seq, 'seq');
    if (seq !== this.lastSeq + 1) throw invalid('event_out_of_order', `event seq ${seq}; expected seq ${this.lastSeq + 1} (events come gap-free in seq order)`);
    if (seq > this.session!.headSeq) throw invalid('event_out_of_order', `event seq ${seq} is beyond the header's head ${this.session!.headSeq}`);
    const type = raw.type as EventType;
    if (!EVENT_TYPES.includes(type)) throw invalid('unknown_event_type', `type ${JSON.stringify(raw.type)} is not an event type`);
    if ((seq === 1) !== (type === 'session.created')) throw invalid('invalid_event', 'seq 1, and only seq 1, is session.created');
    const event: TransferEvent = { seq, id: id(raw.id, 'id'), type, data: object(raw.data, 'data'), createdAt: timestamp(raw.createdAt, 'createdAt') };
    if (type === 'session.created' && event.data.model !== this.session!.model) throw invalid('invalid_event', 'session.created names another model than the header');
    // The published schema of the type's data, then the log's own rules: what every read relies on.
    assertStoredEventData(type, event.data, 'data');
    if (type === 'message.added') this.checkRefs(event.data);
    this.log.check(event as unknown as ImportedEvent);
    if (type === 'compaction.completed') this.pivot = { seq, coveredThroughSeq: event.data.coveredThroughSeq as number };
    this.lastSeq = seq;
    return event;
  }

  /**
   * Every ref a tool result cites was declared earlier in the import, with
   * the same figures, or the first result citing it holds its output inline.
   */
  private checkRefs(data: Json): void {
    const parts = (data.message as { parts: Json[] }).parts;
    parts.forEach((part, i) => {
      if (part.type !== 'tool_result' || part.outputRef === undefined) return;
      const ref = part.outputRef as Json;
      if (!this.outputs.has(ref.id as string)) {
        assertInlineOutput(part, `data.message.parts[${i}]`);
        if (!REF_ID_PATTERN.test(ref.id as string)) throw invalid('invalid_id', `data.message.parts[${i}].outputRef.id must match ${REF_ID_PATTERN.source}`);
        const { id, byte_size: byteSize, line_count: lineCount, sha256 } = ref as { id: string; byte_size: number; line_count: number; sha256: string };
        this.outputs.set(id, { ref: id, byteSize, lineCount, sha256 });
        this.inline.add(id);
        return;
      }
      const declared = this.outputs.get(ref.id as string)!;
      const same = ref.byte_size === declared.byteSize && ref.line_count === declared.lineCount && (ref.sha256 === undefined || ref.sha256 === declared.sha256);
      if (!same) throw invalid('output_ref_mismatch', `data.message.parts[${i}].outputRef does not match the figures of tool output ${declared.ref}`);
    });
  }
}

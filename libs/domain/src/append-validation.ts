import { invalid } from './errors';
import {
  CLIENT_EVENT_TYPES,
  EVENT_TYPES,
  EventType,
  FilePart,
  Message,
  NewEvent,
  Part,
  Role,
  ROLES,
  Usage,
} from './events';

/** Client-chosen ids (events, messages, tool calls, sessions) share one safe alphabet. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:~-]{0,127}$/;

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function objectAt(value: unknown, path: string): Json {
  if (!isObject(value)) throw invalid('invalid_field', `${path} must be an object`, { path });
  return value;
}

function onlyKeys(value: Json, allowed: readonly string[], path: string): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) throw invalid('unknown_field', `${path}.${key} is not allowed`, { path: `${path}.${key}` });
  }
}

function stringAt(value: unknown, path: string, opts: { optional?: boolean; max?: number; nonEmpty?: boolean } = {}) {
  if (value === undefined && opts.optional) return undefined;
  if (typeof value !== 'string') throw invalid('invalid_field', `${path} must be a string`, { path });
  if (opts.nonEmpty && value.length === 0) throw invalid('invalid_field', `${path} must not be empty`, { path });
  if (opts.max !== undefined && value.length > opts.max) {
    throw invalid('field_too_long', `${path} exceeds ${opts.max} characters`, { path, max: opts.max });
  }
  return value;
}

function idAt(value: unknown, path: string): string {
  const id = stringAt(value, path)!;
  if (!ID_PATTERN.test(id)) {
    throw invalid('invalid_id', `${path} must match ${ID_PATTERN.source}`, { path });
  }
  return id;
}

function optionalId(value: unknown, path: string): string | undefined {
  return value === undefined ? undefined : idAt(value, path);
}

function boolAt(value: unknown, path: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw invalid('invalid_field', `${path} must be a boolean`, { path });
  return value;
}

function countAt(value: unknown, path: string, optional = false): number | undefined {
  if (value === undefined && optional) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw invalid('invalid_field', `${path} must be a non-negative integer`, { path });
  }
  return value;
}

const ALLOWED_PARTS: Record<Role, readonly Part['type'][]> = {
  system: ['text'],
  user: ['text', 'file'],
  assistant: ['text', 'reasoning', 'file', 'tool_call'],
  tool: ['tool_result'],
};

function parseFile(raw: Json, path: string): FilePart {
  onlyKeys(raw, ['type', 'mediaType', 'url', 'data', 'filename'], path);
  const part: FilePart = { type: 'file', mediaType: stringAt(raw.mediaType, `${path}.mediaType`, { max: 255, nonEmpty: true })! };
  const url = stringAt(raw.url, `${path}.url`, { optional: true, max: 8192 });
  const data = stringAt(raw.data, `${path}.data`, { optional: true });
  if ((url === undefined) === (data === undefined)) {
    throw invalid('invalid_part', `${path} needs exactly one of url or data`, { path });
  }
  if (url !== undefined) part.url = url;
  if (data !== undefined) part.data = data;
  const filename = stringAt(raw.filename, `${path}.filename`, { optional: true, max: 1024 });
  if (filename !== undefined) part.filename = filename;
  return part;
}

function parsePart(rawValue: unknown, role: Role, path: string): Part {
  const raw = objectAt(rawValue, path);
  const type = raw.type;
  if (typeof type !== 'string' || !ALLOWED_PARTS[role].includes(type as Part['type'])) {
    throw invalid('invalid_part', `${path}.type ${JSON.stringify(type)} is not allowed in a ${role} message`, {
      path: `${path}.type`,
      allowed: ALLOWED_PARTS[role],
    });
  }
  switch (type as Part['type']) {
    case 'text':
    case 'reasoning':
      onlyKeys(raw, ['type', 'text'], path);
      return { type: type as 'text' | 'reasoning', text: stringAt(raw.text, `${path}.text`)! };
    case 'file':
      return parseFile(raw, path);
    case 'tool_call':
      onlyKeys(raw, ['type', 'callId', 'name', 'input'], path);
      if (raw.input === undefined) throw invalid('invalid_part', `${path}.input is required`, { path: `${path}.input` });
      return {
        type: 'tool_call',
        callId: idAt(raw.callId, `${path}.callId`),
        name: stringAt(raw.name, `${path}.name`, { max: 256, nonEmpty: true })!,
        input: raw.input,
      };
    case 'tool_result': {
      onlyKeys(raw, ['type', 'callId', 'name', 'output', 'outputRef', 'isError', 'attachments'], path);
      const output = stringAt(raw.output, `${path}.output`, { optional: true });
      const ref = raw.outputRef === undefined ? undefined : objectAt(raw.outputRef, `${path}.outputRef`);
      if (ref) onlyKeys(ref, ['id'], `${path}.outputRef`);
      if ((output === undefined) === (ref === undefined)) {
        throw invalid('invalid_part', `${path} needs exactly one of output or outputRef`, { path });
      }
      const attachments = raw.attachments === undefined ? undefined : raw.attachments;
      if (attachments !== undefined && !Array.isArray(attachments)) {
        throw invalid('invalid_field', `${path}.attachments must be an array`, { path: `${path}.attachments` });
      }
      return {
        type: 'tool_result',
        callId: idAt(raw.callId, `${path}.callId`),
        // Filled from the call at append time when the client leaves it out.
        name: stringAt(raw.name, `${path}.name`, { optional: true, max: 256 }) ?? '',
        output: output ?? '',
        ...(ref ? { outputRef: { id: idAt(ref.id, `${path}.outputRef.id`), byte_size: 0, line_count: 0 } } : {}),
        ...(raw.isError !== undefined ? { isError: boolAt(raw.isError, `${path}.isError`) } : {}),
        ...(attachments
          ? { attachments: attachments.map((a, i) => parseFile(objectAt(a, `${path}.attachments[${i}]`), `${path}.attachments[${i}]`)) }
          : {}),
      };
    }
  }
}

function parseMessage(rawValue: unknown, path: string, fallbackId: string): Message {
  const raw = objectAt(rawValue, path);
  onlyKeys(raw, ['id', 'role', 'parts', 'metadata'], path);
  if (typeof raw.role !== 'string' || !ROLES.includes(raw.role as Role)) {
    throw invalid('unknown_role', `${path}.role must be one of ${ROLES.join(', ')}`, { path: `${path}.role` });
  }
  const role = raw.role as Role;
  if (!Array.isArray(raw.parts) || raw.parts.length === 0) {
    throw invalid('invalid_field', `${path}.parts must be a non-empty array`, { path: `${path}.parts` });
  }
  const message: Message = {
    id: optionalId(raw.id, `${path}.id`) ?? fallbackId,
    role,
    parts: raw.parts.map((p, i) => parsePart(p, role, `${path}.parts[${i}]`)),
  };
  if (raw.metadata !== undefined) {
    const metadata = objectAt(raw.metadata, `${path}.metadata`);
    boolAt(metadata.agentVisible, `${path}.metadata.agentVisible`);
    boolAt(metadata.userVisible, `${path}.metadata.userVisible`);
    stringAt(metadata.kind, `${path}.metadata.kind`, { optional: true, max: 64 });
    message.metadata = metadata;
  }
  return message;
}

function parseUsage(rawValue: unknown, path: string): Usage {
  const raw = objectAt(rawValue, path);
  onlyKeys(raw, ['input_tokens', 'output_tokens', 'cache_creation_tokens', 'cache_read_tokens'], path);
  const usage: Usage = {
    input_tokens: countAt(raw.input_tokens, `${path}.input_tokens`)!,
    output_tokens: countAt(raw.output_tokens, `${path}.output_tokens`)!,
  };
  const creation = countAt(raw.cache_creation_tokens, `${path}.cache_creation_tokens`, true);
  const read = countAt(raw.cache_read_tokens, `${path}.cache_read_tokens`, true);
  if (creation !== undefined) usage.cache_creation_tokens = creation;
  if (read !== undefined) usage.cache_read_tokens = read;
  return usage;
}

/** Parses one client event strictly; `newId` supplies ids the client left out. */
export function parseClientEvent(rawValue: unknown, path: string, newId: () => string): NewEvent {
  const raw = objectAt(rawValue, path);
  onlyKeys(raw, ['id', 'type', 'data'], path);
  const type = raw.type;
  if (typeof type !== 'string' || !EVENT_TYPES.includes(type as EventType)) {
    throw invalid('unknown_event_type', `${path}.type ${JSON.stringify(type)} is not an event type`, { path: `${path}.type` });
  }
  if (!CLIENT_EVENT_TYPES.includes(type as EventType)) {
    throw invalid('reserved_event_type', `${path}.type ${type} is appended by the service only`, { path: `${path}.type` });
  }
  const id = optionalId(raw.id, `${path}.id`) ?? newId();
  const data = objectAt(raw.data ?? {}, `${path}.data`);
  switch (type as EventType) {
    case 'message.added':
      onlyKeys(data, ['message'], `${path}.data`);
      return { id, type: 'message.added', data: { message: parseMessage(data.message, `${path}.data.message`, id) } };
    case 'step.finished': {
      onlyKeys(data, ['usage', 'finishReason', 'contextSeq'], `${path}.data`);
      const contextSeq = countAt(data.contextSeq, `${path}.data.contextSeq`, true);
      return {
        id,
        type: 'step.finished',
        data: {
          usage: parseUsage(data.usage, `${path}.data.usage`),
          ...(data.finishReason !== undefined
            ? { finishReason: stringAt(data.finishReason, `${path}.data.finishReason`, { max: 64 }) }
            : {}),
          ...(contextSeq !== undefined ? { contextSeq } : {}),
        },
      };
    }
    case 'turn.aborted':
      onlyKeys(data, ['reason'], `${path}.data`);
      return { id, type: 'turn.aborted', data: { reason: stringAt(data.reason, `${path}.data.reason`, { optional: true, max: 4096 }) } };
    case 'context.overflowed':
      onlyKeys(data, ['error'], `${path}.data`);
      return { id, type: 'context.overflowed', data: { error: stringAt(data.error, `${path}.data.error`, { optional: true, max: 65536 }) } };
    case 'compaction.requested': {
      onlyKeys(data, ['instructions'], `${path}.data`);
      const instructions = stringAt(data.instructions, `${path}.data.instructions`, { optional: true, max: 65536 });
      return { id, type: 'compaction.requested', data: { auto: false, reason: 'manual', ...(instructions ? { instructions } : {}) } };
    }
    default:
      throw invalid('reserved_event_type', `${path}.type ${type} is appended by the service only`, { path: `${path}.type` });
  }
}

export interface AppendBatch {
  expectedSeq?: number;
  events: NewEvent[];
}

/** Validates `{expectedSeq?, events}`; nothing is written unless every event passes. */
export function parseAppendBatch(body: unknown, newId: () => string, maxEvents: number): AppendBatch {
  const raw = objectAt(body, '$');
  onlyKeys(raw, ['expectedSeq', 'events'], '$');
  const expectedSeq = countAt(raw.expectedSeq, '$.expectedSeq', true);
  if (!Array.isArray(raw.events) || raw.events.length === 0) {
    throw invalid('invalid_field', '$.events must be a non-empty array', { path: '$.events' });
  }
  if (raw.events.length > maxEvents) {
    throw invalid('too_many_events', `$.events holds more than ${maxEvents} events`, { path: '$.events', max: maxEvents });
  }
  const events = raw.events.map((e, i) => parseClientEvent(e, `$.events[${i}]`, newId));
  const ids = new Set<string>();
  for (const [i, e] of events.entries()) {
    if (ids.has(e.id)) throw invalid('duplicate_event_id', `$.events[${i}].id repeats an id of this batch`, { path: `$.events[${i}].id` });
    ids.add(e.id);
  }
  return expectedSeq === undefined ? { events } : { expectedSeq, events };
}

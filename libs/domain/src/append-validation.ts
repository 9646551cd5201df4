import type { ErrorObject, ValidateFunction } from 'ajv';
import { invalid } from './errors';
import { normalizeUsage, type ProviderUsage, type UsageDialect, usageDialect } from './usage';
import {
  CompactionCompletedData,
  ContextOverflowedData,
  EVENT_TYPES,
  EventType,
  FilePart,
  Message,
  MessageAddedData,
  NewEvent,
  Part,
  RecordAddedData,
  Role,
  ROLES,
  StepFinishedData,
  ToolResultPart,
  ToolResultsArchivedData,
  TurnAbortedData,
  Usage,
} from './events';
import { ALLOWED_PARTS, dataName } from './schema/events.schema';
import { pointerKeys } from './schema/json-pointer';
import { createApiValidator } from './schema/validator';

export { ID_PATTERN } from './schema/ids';

/*
 * Append validation runs on the API's own schemas (NewEvent, AppendRequest:
 * the ones the OpenAPI document shows), compiled once here; a valid body is
 * then normalized (ids and defaults the client may leave out).
 */
const validators = createApiValidator();
const validateNewEvent = validators.get('NewEvent');
const validateAppendRequest = validators.get('AppendRequest');

// ---- ajv errors → the API's problem codes and `$.a.b[0]` paths

/** `/events/0/data` → `.events[0].data` */
const toPath = (pointer: string) => pointerKeys(pointer).map((key) => (/^\d+$/.test(key) ? `[${key}]` : `.${key}`)).join('');

const valueAt = (root: unknown, pointer: string): unknown =>
  pointerKeys(pointer).reduce<unknown>((value, key) => (value as Record<string, unknown>)[key], root);

/**
 * With allErrors off, ajv stops at the first failure: the last error is it
 * (earlier ones are the failed branches of a oneOf it reports).
 */
function problemOf(error: ErrorObject, root: unknown, base: string) {
  const path = `${base}${toPath(error.instancePath)}`;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties': {
      const at = `${path}.${String(params.additionalProperty)}`;
      return invalid('unknown_field', `${at} is not allowed`, { path: at });
    }
    case 'required': {
      const at = `${path}.${String(params.missingProperty)}`;
      // A tool call without input (any JSON value, so only its absence is wrong) is a malformed part.
      const code = params.missingProperty === 'input' ? 'invalid_part' : 'invalid_field';
      return invalid(code, `${at} is required`, { path: at });
    }
    case 'discriminator':
      return discriminatorProblem(params, path, root, error.instancePath);
    case 'oneOf': {
      // The exactly-one-of rules (url | data, output | outputRef): each branch requires one key.
      const keys = (error.schema as { required: string[] }[]).flatMap((branch) => branch.required);
      return invalid('invalid_part', `${path} needs exactly one of ${keys.join(' or ')}`, { path });
    }
    case 'maxLength':
      return invalid('field_too_long', `${path} exceeds ${String(params.limit)} characters`, { path, max: params.limit });
    case 'pattern':
      return invalid('invalid_id', `${path} must match ${String(params.pattern)}`, { path });
    default:
      return invalid('invalid_field', `${path} ${error.message ?? 'is invalid'}`, { path });
  }
}

function discriminatorProblem(params: Record<string, unknown>, path: string, root: unknown, pointer: string) {
  const value = JSON.stringify(params.tagValue);
  if (params.tag === 'role') {
    return invalid('unknown_role', `${path}.role ${value} must be one of ${ROLES.join(', ')}`, { path: `${path}.role` });
  }
  const part = /^(.*)\/parts\/\d+$/.exec(pointer);
  if (part) {
    const role = (valueAt(root, part[1]) as { role: Role }).role;
    return invalid('invalid_part', `${path}.type ${value} is not allowed in a ${role} message`, {
      path: `${path}.type`,
      allowed: ALLOWED_PARTS[role],
    });
  }
  return EVENT_TYPES.includes(params.tagValue as EventType)
    ? invalid('reserved_event_type', `${path}.type ${String(params.tagValue)} is appended by the service only`, { path: `${path}.type` })
    : invalid('unknown_event_type', `${path}.type ${value} is not an event type`, { path: `${path}.type` });
}

/** The component each usage shape is validated with (usageDialect tells them apart by their own fields). */
const USAGE_SCHEMAS: Record<UsageDialect, string> = {
  neutral: 'Usage',
  openai: 'OpenAIChatUsage',
  'openai-responses': 'OpenAIResponsesUsage',
  anthropic: 'AnthropicUsage',
  'ai-sdk': 'AiSdkUsage',
};

function assertValid(validate: ValidateFunction, value: unknown, path: string): void {
  if (validate(value)) return;
  const error = validate.errors![validate.errors!.length - 1];
  // A usage matching none of its shapes: the error of the shape its fields name (an unknown field, a negative count), not "none matched".
  if (error.keyword === 'oneOf' && error.instancePath.endsWith('/usage')) {
    const usage = valueAt(value, error.instancePath);
    if (usage !== null && typeof usage === 'object' && !Array.isArray(usage)) {
      assertValid(validators.get(USAGE_SCHEMAS[usageDialect(usage as Usage)]), usage, `${path}${toPath(error.instancePath)}`);
    }
  }
  throw problemOf(error, value, path);
}

// ---- normalization of a valid event: the service's defaults, in a fixed key order (the payload hash depends on it)

type NewToolResult = Omit<ToolResultPart, 'name' | 'output' | 'outputRef' | 'truncated'> & {
  name?: string;
  output?: string;
  outputRef?: { id: string };
};
type NewPart = Exclude<Part, ToolResultPart> | NewToolResult;
type NewMessage = Omit<Message, 'id' | 'parts'> & { id?: string; parts: NewPart[] };
/** An event as the NewEvent schema admits it. */
type ClientEvent = { id?: string } & (
  | { type: 'message.added'; data: { message: NewMessage } }
  | { type: 'step.finished'; data: Omit<StepFinishedData, 'usage'> & { usage: Usage | ProviderUsage } }
  | { type: 'turn.aborted'; data?: TurnAbortedData }
  | { type: 'context.overflowed'; data?: ContextOverflowedData }
  | { type: 'compaction.requested'; data?: { instructions?: string } }
  | { type: 'record.added'; data: RecordAddedData }
);

function normalizeFile(raw: FilePart): FilePart {
  const part: FilePart = { type: 'file', mediaType: raw.mediaType };
  if (raw.url !== undefined) part.url = raw.url;
  if (raw.data !== undefined) part.data = raw.data;
  if (raw.filename !== undefined) part.filename = raw.filename;
  return part;
}

function normalizePart(raw: NewPart): Part {
  switch (raw.type) {
    case 'text':
    case 'reasoning':
      return { type: raw.type, text: raw.text };
    case 'file':
      return normalizeFile(raw);
    case 'tool_call':
      return { type: 'tool_call', callId: raw.callId, name: raw.name, input: raw.input };
    case 'tool_result':
      return {
        type: 'tool_result',
        callId: raw.callId,
        // Filled from the call at append time when the client leaves it out.
        name: raw.name ?? '',
        output: raw.output ?? '',
        // Sizes are the store's to fill (prepareAppend).
        ...(raw.outputRef ? { outputRef: { id: raw.outputRef.id, byte_size: 0, line_count: 0 } } : {}),
        ...(raw.isError !== undefined ? { isError: raw.isError } : {}),
        ...(raw.attachments ? { attachments: raw.attachments.map(normalizeFile) } : {}),
      };
  }
}

function normalizeMessage(raw: NewMessage, fallbackId: string): Message {
  const message: Message = { id: raw.id ?? fallbackId, role: raw.role, parts: raw.parts.map(normalizePart) };
  if (raw.metadata !== undefined) message.metadata = raw.metadata;
  return message;
}

function normalizeEvent(raw: ClientEvent, newId: () => string, path: string): NewEvent {
  const id = raw.id ?? newId();
  switch (raw.type) {
    case 'message.added':
      return { id, type: raw.type, data: { message: normalizeMessage(raw.data.message, id) } };
    case 'step.finished': {
      const { usage, finishReason, contextSeq } = raw.data;
      return {
        id,
        type: raw.type,
        data: {
          // A provider's usage object, passed whole, in the service's fields.
          usage: normalizeUsage(usage, `${path}.data.usage`),
          ...(finishReason !== undefined ? { finishReason } : {}),
          ...(contextSeq !== undefined ? { contextSeq } : {}),
        },
      };
    }
    case 'turn.aborted':
      return { id, type: raw.type, data: { reason: raw.data?.reason } };
    case 'context.overflowed':
      return { id, type: raw.type, data: { error: raw.data?.error } };
    case 'record.added':
      return { id, type: raw.type, data: { kind: raw.data.kind, value: raw.data.value } };
    case 'compaction.requested': {
      // Always manual from a client: it cannot pose as the service's automatic trigger.
      const instructions = raw.data?.instructions;
      return { id, type: raw.type, data: { auto: false, reason: 'manual', ...(instructions ? { instructions } : {}) } };
    }
  }
}

/** Parses one client event strictly (the NewEvent schema); `newId` supplies ids the client left out. */
export function parseClientEvent(rawValue: unknown, path: string, newId: () => string): NewEvent {
  assertValid(validateNewEvent, rawValue, path);
  return normalizeEvent(rawValue as ClientEvent, newId, path);
}

/**
 * Checks a message's parts against what its role may carry (ALLOWED_PARTS,
 * as the append's schemas require): the stored Message schema admits any
 * part in any role, the views do not (only the assistant calls tools).
 */
export function assertPartsAllowed(message: Pick<Message, 'role' | 'parts'>, path: string): void {
  const allowed = ALLOWED_PARTS[message.role];
  message.parts.forEach((part, i) => {
    if (!allowed.includes(part.type)) {
      throw invalid('invalid_part', `${path}.parts[${i}].type "${part.type}" is not allowed in a ${message.role} message`, {
        path: `${path}.parts[${i}].type`,
        allowed,
      });
    }
  });
}

/**
 * Validates an event's data as the service stores it (the published
 * `<Type>Data` schemas, the ones GET .../events is described with), with the
 * role rule for every message it carries. Imports run every line through it,
 * and the event store every event the service writes itself, so nothing
 * enters a log that a reader could not read.
 */
export function assertStoredEventData(type: EventType, data: unknown, path: string): void {
  assertValid(validators.get(dataName(type)), data, path);
  const messages: Array<[Message, string]> = [];
  if (type === 'message.added') messages.push([(data as MessageAddedData).message, `${path}.message`]);
  if (type === 'compaction.completed') (data as CompactionCompletedData).prefix.forEach((m, i) => messages.push([m, `${path}.prefix[${i}]`]));
  if (type === 'tool_results.archived' && (data as ToolResultsArchivedData).digest) messages.push([(data as ToolResultsArchivedData).digest!, `${path}.digest`]);
  for (const [message, at] of messages) assertPartsAllowed(message, at);
}

export interface AppendBatch {
  expectedSeq?: number;
  events: NewEvent[];
}

/** A batch names each event id once (400 duplicate_event_id at the first repeat). */
export function assertUniqueEventIds(ids: readonly string[]): void {
  const seen = new Set<string>();
  for (const [i, id] of ids.entries()) {
    if (seen.has(id)) throw invalid('duplicate_event_id', `$.events[${i}].id repeats an id of this batch`, { path: `$.events[${i}].id` });
    seen.add(id);
  }
}

/** Validates `{expectedSeq?, events}` (the AppendRequest schema); nothing is written unless every event passes. */
export function parseAppendBatch(body: unknown, newId: () => string, maxEvents: number): AppendBatch {
  // The limit is configuration, not schema; checked first so an oversized batch is refused before its events are walked.
  const events = (body as { events?: unknown } | null)?.events;
  if (Array.isArray(events) && events.length > maxEvents) {
    throw invalid('too_many_events', `$.events holds more than ${maxEvents} events`, { path: '$.events', max: maxEvents });
  }
  assertValid(validateAppendRequest, body, '$');
  const raw = body as { expectedSeq?: number; events: ClientEvent[] };
  const parsed = raw.events.map((event, i) => normalizeEvent(event, newId, `$.events[${i}]`));
  assertUniqueEventIds(parsed.map((e) => e.id));
  return raw.expectedSeq === undefined ? { events: parsed } : { expectedSeq: raw.expectedSeq, events: parsed };
}

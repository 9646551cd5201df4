/**
 * What the saver keeps in a thread's session: `record.added` events of three
 * kinds (checkpoints, pending writes, parts of large values), their `value`
 * plain JSON. Serialized values stay the serializer's
 * bytes: JSON text as a string (readable in the inspector, and never nested
 * deeper than the service's JSON depth limit), anything else as base64.
 */

export const CHECKPOINT_KIND = 'langgraph.checkpoint';
export const WRITES_KIND = 'langgraph.writes';
export const PART_KIND = 'langgraph.part';

/**
 * A serializer's output (`dumpsTyped`): its type tag and its bytes, inline or,
 * when too large for one append, in `count` part records of id `parts`.
 */
export type Blob = { type: string; text: string } | { type: string; base64: string } | { type: string; parts: string; count: number };
export type InlineBlob = Exclude<Blob, { parts: string }>;

/** One part of a large value's base64, appended before the record that cites it. */
export interface PartRecord {
  blobId: string;
  index: number;
  base64: string;
}

/** A channel's value at the version a checkpoint introduced. */
export interface ChannelValueRecord {
  channel: string;
  version: string | number;
  value: Blob;
}

/**
 * A checkpoint without its channel values; `values` holds those of the
 * channels whose version this checkpoint introduced (its `newVersions`), so a
 * value is stored once however many checkpoints carry it; the others are
 * found by (channel, version) in the thread's earlier checkpoints.
 */
export interface CheckpointRecord {
  ns: string;
  id: string;
  parentId?: string;
  checkpoint: Blob;
  metadata: Blob;
  values: ChannelValueRecord[];
}

export interface WriteRecord {
  /** WRITES_IDX_MAP's negative index for a special channel, else the write's position. */
  idx: number;
  channel: string;
  value: Blob;
}

/** One putWrites call. */
export interface WritesRecord {
  ns: string;
  checkpointId: string;
  taskId: string;
  taskPath: string;
  writes: WriteRecord[];
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function toBlob([type, bytes]: [string, Uint8Array]): InlineBlob {
  if (type === 'json') {
    try {
      return { type, text: utf8.decode(bytes) };
    } catch {
      // not UTF-8 after all: kept byte for byte below
    }
  }
  return { type, base64: Buffer.from(bytes).toString('base64') };
}

export function blobBytes(blob: InlineBlob): Uint8Array {
  return 'text' in blob ? new TextEncoder().encode(blob.text) : new Uint8Array(Buffer.from(blob.base64, 'base64'));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isBlob(value: unknown): value is Blob {
  return (
    isObject(value) &&
    typeof value.type === 'string' &&
    (typeof value.text === 'string' || typeof value.base64 === 'string' || (typeof value.parts === 'string' && typeof value.count === 'number'))
  );
}

function isChannelValueRecord(value: unknown): value is ChannelValueRecord {
  return isObject(value) && typeof value.channel === 'string' && (typeof value.version === 'string' || typeof value.version === 'number') && isBlob(value.value);
}

/** A record another writer (or an older saver) left in the log is skipped, not trusted. */
export function isCheckpointRecord(value: unknown): value is CheckpointRecord {
  return (
    isObject(value) &&
    typeof value.ns === 'string' &&
    typeof value.id === 'string' &&
    (value.parentId === undefined || typeof value.parentId === 'string') &&
    isBlob(value.checkpoint) &&
    isBlob(value.metadata) &&
    Array.isArray(value.values) &&
    value.values.every(isChannelValueRecord)
  );
}

function isWriteRecord(value: unknown): value is WriteRecord {
  return isObject(value) && typeof value.idx === 'number' && typeof value.channel === 'string' && isBlob(value.value);
}

export function isWritesRecord(value: unknown): value is WritesRecord {
  return (
    isObject(value) &&
    typeof value.ns === 'string' &&
    typeof value.checkpointId === 'string' &&
    typeof value.taskId === 'string' &&
    typeof value.taskPath === 'string' &&
    Array.isArray(value.writes) &&
    value.writes.every(isWriteRecord)
  );
}

export function isPartRecord(value: unknown): value is PartRecord {
  return isObject(value) && typeof value.blobId === 'string' && typeof value.index === 'number' && typeof value.base64 === 'string';
}

import { createHash, randomUUID } from 'node:crypto';
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  ChannelVersions,
  Checkpoint,
  CheckpointListOptions,
  CheckpointMetadata,
  CheckpointPendingWrite,
  CheckpointTuple,
  copyCheckpoint,
  getCheckpointId,
  maxChannelVersion,
  PendingWrite,
  SerializerProtocol,
  TASKS,
  WRITES_IDX_MAP,
} from '@langchain/langgraph-checkpoint';
import { AppendResult, isProblem, ProblemError, SessionStoreClient } from '@session-store/client';
import { Blob, blobBytes, CHECKPOINT_KIND, CheckpointRecord, InlineBlob, PART_KIND, PartRecord, toBlob, WRITES_KIND, WritesRecord } from './records';
import { NamespaceIndex, ThreadLog } from './thread-log';

export interface SessionStoreSaverOptions {
  client: SessionStoreClient;
  /**
   * A thread's session id is this prefix and its thread_id (a thread_id the
   * service's ids cannot hold, or one with `~`, is hashed instead). `list()`
   * without a thread_id lists the threads saved under this prefix. Default
   * `langgraph:`; `''` puts a thread in the session of the same id, next to
   * the messages an agent appends there.
   */
  sessionIdPrefix?: string;
  /** The `model` of the sessions this saver creates (the service requires one). Default `gpt-4.1`. */
  model?: string;
  /**
   * The largest record appended, in bytes of JSON: the values of a record
   * over it, largest first, go in parts of about this size appended before
   * it. Keep it under the service's MAX_BODY_BYTES. Default 4 MiB.
   */
  maxRecordBytes?: number;
  /**
   * How much of the threads' logs this process keeps indexed, in characters
   * of their records' JSON; the least recently read threads go first (the
   * thread being read stays, whatever its size). Default 64 MiB.
   */
  cacheSize?: number;
  serde?: SerializerProtocol;
}

/** The service's session and event ids: see ID_PATTERN in libs/domain. */
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:~-]{0,127}$/;
const PREFIX_PATTERN = /^([A-Za-z0-9][A-Za-z0-9._:~-]{0,61})?$/;
const PAGE = 1000;
/** Room in a record for what is not a value: ids, namespace, task path. */
const RECORD_HEADROOM = 16 * 1024;
const MISSING_THREAD_ID =
  'The config has no configurable.thread_id: a checkpointer saves a thread, e.g. graph.invoke(input, { configurable: { thread_id: "my-thread" } })';

function threadConfig(threadId: string, ns: string, checkpointId: string): RunnableConfig {
  return { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpointId } };
}

function stringField(config: RunnableConfig | undefined, field: string): string | undefined {
  const value: unknown = config?.configurable?.[field];
  return typeof value === 'string' ? value : undefined;
}

/** JSON containment, as a metadata filter reads: every field of `expected` is in `actual`, objects recursively. */
function contains(actual: unknown, expected: unknown): boolean {
  if (typeof expected !== 'object' || expected === null) return actual === expected;
  if (Array.isArray(expected)) return JSON.stringify(actual) === JSON.stringify(expected);
  if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return false;
  return Object.entries(expected).every(([key, value]) => contains(Object.getOwnPropertyDescriptor(actual, key)?.value, value));
}

/**
 * A LangGraph checkpointer that keeps each thread in a session of the
 * session store: checkpoints and pending writes are `record.added` events in
 * the session's log (kinds `langgraph.checkpoint`, `langgraph.writes`), so the
 * log is the thread's history, exported, forked and rewound with it.
 * A checkpoint stores only the channel values whose version it introduced;
 * the others are read from its ancestors.
 * Reads index the log once per process and then ask only for its new events.
 */
export class SessionStoreSaver extends BaseCheckpointSaver {
  private readonly client: SessionStoreClient;
  private readonly prefix: string;
  private readonly model: string;
  private readonly cacheSize: number;
  private readonly maxRecordBytes: number;
  private readonly logs = new Map<string, ThreadLog>();

  constructor(options: SessionStoreSaverOptions) {
    super(options.serde);
    this.client = options.client;
    this.prefix = options.sessionIdPrefix ?? 'langgraph:';
    if (!PREFIX_PATTERN.test(this.prefix)) throw new Error(`sessionIdPrefix ${JSON.stringify(this.prefix)}: up to 62 of A-Z a-z 0-9 . _ : ~ -, starting with a letter or digit`);
    this.model = options.model ?? 'gpt-4.1';
    this.cacheSize = options.cacheSize ?? 64 * 1024 * 1024;
    this.maxRecordBytes = options.maxRecordBytes ?? 4 * 1024 * 1024;
    if (this.maxRecordBytes < 2 * RECORD_HEADROOM) throw new Error(`maxRecordBytes ${this.maxRecordBytes}: at least ${2 * RECORD_HEADROOM}`);
  }

  /** The session that holds a thread. */
  sessionIdOf(threadId: string): string {
    const id = `${this.prefix}${threadId}`;
    if (ID_PATTERN.test(id) && !threadId.includes('~')) return id;
    return `${this.prefix}h~${createHash('sha256').update(threadId).digest('hex')}`;
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = stringField(config, 'thread_id');
    if (threadId === undefined) return undefined;
    const ns = stringField(config, 'checkpoint_ns') ?? '';
    const log = await this.read(threadId);
    const namespace = log?.namespace(ns);
    if (!log || !namespace) return undefined;
    const checkpointId = getCheckpointId(config) || namespace.idsNewestFirst()[0];
    const record = checkpointId === undefined ? undefined : namespace.checkpoints.get(checkpointId);
    return record && this.tuple(threadId, log, namespace, record);
  }

  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { filter, before } = options;
    const threadId = stringField(config, 'thread_id');
    const ns = stringField(config, 'checkpoint_ns');
    const checkpointId = getCheckpointId(config) || undefined;
    const beforeId = stringField(before, 'checkpoint_id');
    let remaining = options.limit;
    for await (const thread of threadId === undefined ? this.threadIds() : [threadId]) {
      const log = await this.read(thread);
      for (const name of log?.namespaceNames() ?? []) {
        const namespace = log?.namespace(name);
        if (!log || !namespace || (ns !== undefined && name !== ns)) continue;
        for (const id of namespace.idsNewestFirst()) {
          const record = namespace.checkpoints.get(id);
          if (!record || (checkpointId !== undefined && id !== checkpointId) || (beforeId !== undefined && id >= beforeId)) continue;
          if (filter && !contains(await this.load(log, record.metadata), filter)) continue;
          if (remaining !== undefined && remaining-- <= 0) return;
          yield await this.tuple(thread, log, namespace, record);
        }
      }
    }
  }

  async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    const threadId = stringField(config, 'thread_id');
    if (threadId === undefined) throw new Error(`Cannot put a checkpoint. ${MISSING_THREAD_ID}`);
    const ns = stringField(config, 'checkpoint_ns') ?? '';
    const { channel_values, ...rest } = copyCheckpoint(checkpoint);
    const values = await Promise.all(
      Object.entries(newVersions)
        .filter(([channel]) => channel in channel_values)
        .map(async ([channel, version]) => ({ channel, version, value: await this.dump(channel_values[channel]) })),
    );
    const parentId = stringField(config, 'checkpoint_id');
    const [stored, storedMetadata, ...storedValues] = await this.fit(threadId, [
      await this.dump({ ...rest, channel_values: {} }),
      await this.dump(metadata),
      ...values.map(({ value }) => value),
    ]);
    const record: CheckpointRecord = {
      ns,
      id: checkpoint.id,
      ...(parentId === undefined ? {} : { parentId }),
      checkpoint: stored,
      metadata: storedMetadata,
      values: values.map((value, i) => ({ ...value, value: storedValues[i] })),
    };
    await this.append(threadId, CHECKPOINT_KIND, record);
    return threadConfig(threadId, ns, checkpoint.id);
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ''): Promise<void> {
    const threadId = stringField(config, 'thread_id');
    if (threadId === undefined) throw new Error(`Cannot put writes. ${MISSING_THREAD_ID}`);
    const checkpointId = stringField(config, 'checkpoint_id');
    if (checkpointId === undefined) throw new Error('Cannot put writes: the config has no configurable.checkpoint_id (the checkpoint they were made against)');
    const values = await this.fit(threadId, await Promise.all(writes.map(([, value]) => this.dump(value))));
    const record: WritesRecord = {
      ns: stringField(config, 'checkpoint_ns') ?? '',
      checkpointId,
      taskId,
      taskPath,
      writes: writes.map(([channel], idx) => ({ idx: WRITES_IDX_MAP[channel] ?? idx, channel, value: values[idx] })),
    };
    await this.append(threadId, WRITES_KIND, record);
  }

  /** Deletes the thread's session, with everything in it. */
  async deleteThread(threadId: string): Promise<void> {
    const sessionId = this.sessionIdOf(threadId);
    this.logs.delete(sessionId);
    const { error, response } = await this.client.api.DELETE('/v1/sessions/{sessionId}', { params: { path: { sessionId } } });
    if (error !== undefined && response.status !== 404) throw new ProblemError(error, response.headers);
  }

  private async tuple(threadId: string, log: ThreadLog, namespace: NamespaceIndex, record: CheckpointRecord): Promise<CheckpointTuple> {
    const checkpoint: Checkpoint = await this.load(log, record.checkpoint);
    for (const [channel, value] of namespace.channelValues(record.id, checkpoint.channel_versions)) {
      checkpoint.channel_values[channel] = await this.load(log, value);
    }
    // Checkpoints before v4 kept the parent's pending sends in its writes; LangGraph reads them as the TASKS channel.
    if (checkpoint.v < 4 && record.parentId !== undefined) {
      const sends = namespace.orderedWrites(record.parentId).filter((write) => write.channel === TASKS);
      checkpoint.channel_values[TASKS] = await Promise.all(sends.map((write) => this.load(log, write.value)));
      const versions = Object.values(checkpoint.channel_versions);
      checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
    }
    const metadata: CheckpointMetadata = await this.load(log, record.metadata);
    const pendingWrites = await Promise.all(
      namespace.orderedWrites(record.id).map(async (write): Promise<CheckpointPendingWrite> => [write.taskId, write.channel, await this.load(log, write.value)]),
    );
    return {
      config: threadConfig(threadId, record.ns, record.id),
      checkpoint,
      metadata,
      pendingWrites,
      ...(record.parentId === undefined ? {} : { parentConfig: threadConfig(threadId, record.ns, record.parentId) }),
    };
  }

  private async dump(value: unknown): Promise<InlineBlob> {
    return toBlob(await this.serde.dumpsTyped(value));
  }

  private load(log: ThreadLog, blob: Blob): Promise<any> {
    return this.serde.loadsTyped(blob.type, log.bytes(blob));
  }

  /** The values of a record, the largest moved to parts until the record fits in maxRecordBytes. */
  private async fit(threadId: string, blobs: InlineBlob[]): Promise<Blob[]> {
    const sizes = blobs.map((blob) => Buffer.byteLength(JSON.stringify(blob)));
    let total = sizes.reduce((sum, size) => sum + size, 0);
    const fitted: Blob[] = [...blobs];
    for (const i of sizes.map((_, i) => i).sort((a, b) => sizes[b] - sizes[a])) {
      if (total <= this.maxRecordBytes - RECORD_HEADROOM) break;
      fitted[i] = await this.appendParts(threadId, blobs[i]);
      total -= sizes[i];
    }
    return fitted;
  }

  /** A value's base64 in part records, one append each: a crash midway leaves parts no record cites, never a record without its parts. */
  private async appendParts(threadId: string, blob: InlineBlob): Promise<Blob> {
    const base64 = 'base64' in blob ? blob.base64 : Buffer.from(blobBytes(blob)).toString('base64');
    const blobId = randomUUID();
    const size = this.maxRecordBytes - RECORD_HEADROOM;
    const count = Math.ceil(base64.length / size);
    for (let index = 0; index < count; index++) {
      await this.append(threadId, PART_KIND, { blobId, index, base64: base64.slice(index * size, (index + 1) * size) });
    }
    return { type: blob.type, parts: blobId, count };
  }

  /** Appends a record to the thread's session, creating the session the first time. */
  private async append(threadId: string, kind: string, value: CheckpointRecord | WritesRecord | PartRecord): Promise<void> {
    const sessionId = this.sessionIdOf(threadId);
    // The event's own id makes a retry after a lost answer return the first append, whichever request carries it.
    const events = [{ id: randomUUID(), type: 'record.added' as const, data: { kind, value } }];
    let appended: AppendResult;
    try {
      appended = await this.client.append(sessionId, events);
    } catch (error) {
      if (!isProblem(error, 'session_not_found')) throw error;
      await this.createSession(sessionId, threadId);
      appended = await this.client.append(sessionId, events);
    }
    // Right after what this process has read: indexed now rather than read back.
    const log = this.logs.get(sessionId);
    const seq = appended.events[0]?.seq;
    if (log && seq === log.readThrough + 1) {
      log.addRecord(seq, kind, value);
      log.readThrough = seq;
    }
  }

  private async createSession(sessionId: string, threadId: string): Promise<void> {
    try {
      await this.client.createSession({ id: sessionId, model: this.model, metadata: { langgraph: { saver: this.prefix, threadId } } });
    } catch (error) {
      // Another writer created it first.
      if (!isProblem(error, 'session_exists')) throw error;
    }
  }

  /** The thread ids of this saver's sessions, most recently active first. */
  private async *threadIds(): AsyncGenerator<string> {
    const metadata = JSON.stringify({ langgraph: { saver: this.prefix } });
    for (let cursor: string | undefined; ; ) {
      const { data, error, response } = await this.client.api.GET('/v1/sessions', { params: { query: { metadata, limit: 100, ...(cursor === undefined ? {} : { cursor }) } } });
      if (error !== undefined || !data) throw new ProblemError(error, response.headers);
      for (const session of data.sessions) {
        const { langgraph } = session.metadata;
        const threadId = typeof langgraph === 'object' && langgraph !== null && 'threadId' in langgraph ? langgraph.threadId : undefined;
        // A fork of a thread's session keeps its metadata unless given another: only the thread's own session counts.
        if (typeof threadId === 'string' && session.id === this.sessionIdOf(threadId)) yield threadId;
      }
      if (data.nextCursor === null) return;
      cursor = data.nextCursor;
    }
  }

  /**
   * The thread's log, brought up to date: the session's head says whether
   * anything was appended since the last read, and only what was is read.
   * Undefined when the thread has no session.
   */
  private async read(threadId: string): Promise<ThreadLog | undefined> {
    const sessionId = this.sessionIdOf(threadId);
    const cached = this.logs.get(sessionId);
    this.logs.delete(sessionId);
    const session = await this.head(sessionId, threadId);
    if (!session) return undefined;
    const log = cached?.createdAt === session.createdAt ? cached : new ThreadLog(session.createdAt);
    for (let afterSeq = log.readThrough; afterSeq < session.headSeq; ) {
      const { data, error, response } = await this.client.api.GET('/v1/sessions/{sessionId}/events', {
        // minSeq: a read replica behind the head just looked up on the primary is not read from.
        params: { path: { sessionId }, query: { afterSeq, limit: PAGE, minSeq: session.headSeq, types: ['record.added', 'session.rewound'] } },
      });
      if (response.status === 404) return undefined;
      if (error !== undefined || !data) throw new ProblemError(error, response.headers);
      for (const event of data.events) {
        // A read or an append of this process may have indexed it already.
        if (event.seq <= log.readThrough) continue;
        if (event.type === 'record.added') log.addRecord(event.seq, event.data.kind, event.data.value);
        else if (event.type === 'session.rewound') log.rewind(event.data.toSeq);
        log.readThrough = event.seq;
      }
      // The last page has covered the log up to its head; a full one up to its last event.
      if (data.nextAfterSeq === null) log.readThrough = Math.max(log.readThrough, data.headSeq);
      afterSeq = data.nextAfterSeq ?? Number.MAX_SAFE_INTEGER;
    }
    this.cache(sessionId, log);
    return log;
  }

  /**
   * The session's `createdAt` and `headSeq`. A session this saver made is
   * found by its metadata in the tenant's sessions (an index look-up), since
   * GET /v1/sessions/{id} composes the session's model view, whose cost grows
   * with the log; any other (a prefix of '') is asked for by id.
   */
  private async head(sessionId: string, threadId: string): Promise<{ createdAt: string; headSeq: number } | undefined> {
    const metadata = JSON.stringify({ langgraph: { saver: this.prefix, threadId } });
    const listed = await this.client.api.GET('/v1/sessions', { params: { query: { metadata, limit: 10 } } });
    if (listed.error !== undefined || !listed.data) throw new ProblemError(listed.error, listed.response.headers);
    // A fork of the session keeps its metadata unless given another: the id tells them apart.
    const found = listed.data.sessions.find((session) => session.id === sessionId);
    if (found) return found;
    const { data, error, response } = await this.client.api.GET('/v1/sessions/{sessionId}', { params: { path: { sessionId } } });
    if (response.status === 404) return undefined;
    if (error !== undefined || !data) throw new ProblemError(error, response.headers);
    return data;
  }

  /** Keeps the log as the most recently read, and drops the least recently read ones over the cache's size. */
  private cache(sessionId: string, log: ThreadLog): void {
    this.logs.set(sessionId, log);
    let size = 0;
    for (const cached of this.logs.values()) size += cached.size;
    // Map order is read order: the first are the least recently read.
    for (const [id, cached] of this.logs) {
      if (size <= this.cacheSize || id === sessionId) break;
      this.logs.delete(id);
      size -= cached.size;
    }
  }
}

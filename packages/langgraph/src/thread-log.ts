import { compareWritesSortKeys, writesSortKey } from '@langchain/langgraph-checkpoint';
import { Blob, blobBytes, CHECKPOINT_KIND, CheckpointRecord, isCheckpointRecord, isPartRecord, isWritesRecord, PART_KIND, WRITES_KIND } from './records';

export interface IndexedWrite {
  taskId: string;
  taskPath: string;
  idx: number;
  channel: string;
  value: Blob;
}

/** One checkpoint namespace of a thread: its checkpoints (with the channel values they introduced) and the writes against each. */
export class NamespaceIndex {
  readonly checkpoints = new Map<string, CheckpointRecord>();
  /** Sorted when next asked for, not on each of a long log's records. */
  private sortedIds: string[] | undefined;
  private readonly writes = new Map<string, Map<string, IndexedWrite>>();

  addCheckpoint(record: CheckpointRecord): void {
    // The first record of an id wins, as a database's primary key would keep it.
    if (this.checkpoints.has(record.id)) return;
    this.checkpoints.set(record.id, record);
    this.sortedIds = undefined;
  }

  addWrite(checkpointId: string, write: IndexedWrite): void {
    const writes = this.writes.get(checkpointId) ?? new Map<string, IndexedWrite>();
    this.writes.set(checkpointId, writes);
    const key = `${write.taskId},${write.idx}`;
    // A task's regular writes are kept as first written (a retried task writes them again); special channels (idx < 0) are replaced.
    if (write.idx >= 0 && writes.has(key)) return;
    writes.set(key, write);
  }

  /** Newest first: checkpoint ids are uuid6, ordered by time. */
  idsNewestFirst(): string[] {
    this.sortedIds ??= [...this.checkpoints.keys()].sort().reverse();
    return this.sortedIds;
  }

  /**
   * The value of each channel at its version in `versions`, from the
   * checkpoint that introduced it: this one or its nearest ancestor with that
   * version. Versions count up along one line of checkpoints only (a branch
   * taken from an earlier checkpoint reuses its numbers), so the search
   * follows the parents rather than the whole namespace.
   */
  channelValues(checkpointId: string, versions: Record<string, string | number>): Map<string, Blob> {
    const found = new Map<string, Blob>();
    const wanted = new Map(Object.entries(versions));
    // Bounded by the number of checkpoints: a log whose parents loop must not hang a read.
    for (let id: string | undefined = checkpointId, depth = 0; id !== undefined && wanted.size > 0 && depth <= this.checkpoints.size; depth++) {
      const record = this.checkpoints.get(id);
      for (const { channel, version, value } of record?.values ?? []) {
        if (wanted.get(channel) !== version) continue;
        found.set(channel, value);
        wanted.delete(channel);
      }
      id = record?.parentId;
    }
    return found;
  }

  /** In the order LangGraph applies them (writesSortKey). */
  orderedWrites(checkpointId: string): IndexedWrite[] {
    const writes = [...(this.writes.get(checkpointId)?.values() ?? [])];
    return writes.sort((a, b) => compareWritesSortKeys(writesSortKey(a.taskPath, a.taskId, a.idx), writesSortKey(b.taskPath, b.taskId, b.idx)));
  }
}

interface LoggedRecord {
  seq: number;
  kind: string;
  value: unknown;
}

/**
 * What this process has read of one thread's session log, indexed; the log
 * is append-only, so a later read only asks for the events after `readThrough`.
 */
export class ThreadLog {
  /** Every event up to this seq has been read (those of the types the saver reads). */
  readThrough = 0;
  /** About what the records hold, in characters of JSON: the saver's cache is bounded by the sum. */
  size = 0;
  private records: LoggedRecord[] = [];
  private namespaces = new Map<string, NamespaceIndex>();
  private parts = new Map<string, string[]>();

  /** `createdAt` of the session read: a session deleted and made again under its id is another log. */
  constructor(readonly createdAt: string) {}

  addRecord(seq: number, kind: string, value: unknown): void {
    this.records.push({ seq, kind, value });
    this.size += JSON.stringify(value).length;
    this.index({ seq, kind, value });
  }

  /** POST …/rewind: what clients appended after `toSeq` leaves the session's state, and so the thread's. */
  rewind(toSeq: number): void {
    this.records = this.records.filter((record) => record.seq <= toSeq);
    this.size = this.records.reduce((sum, record) => sum + JSON.stringify(record.value).length, 0);
    this.namespaces = new Map();
    this.parts = new Map();
    for (const record of this.records) this.index(record);
  }

  /** A value's bytes, joined from its parts when it has some. */
  bytes(blob: Blob): Uint8Array {
    if (!('parts' in blob)) return blobBytes(blob);
    const parts = this.parts.get(blob.parts) ?? [];
    const found = parts.filter((part) => part !== undefined).length;
    if (found !== blob.count) throw new Error(`The log holds ${found} of the ${blob.count} parts of value ${blob.parts}`);
    return new Uint8Array(Buffer.from(parts.join(''), 'base64'));
  }

  namespace(ns: string): NamespaceIndex | undefined {
    return this.namespaces.get(ns);
  }

  namespaceNames(): string[] {
    return [...this.namespaces.keys()];
  }

  private index({ kind, value }: LoggedRecord): void {
    if (kind === PART_KIND && isPartRecord(value)) {
      const parts = this.parts.get(value.blobId) ?? [];
      parts[value.index] = value.base64;
      this.parts.set(value.blobId, parts);
    } else if (kind === CHECKPOINT_KIND && isCheckpointRecord(value)) this.namespaceFor(value.ns).addCheckpoint(value);
    else if (kind === WRITES_KIND && isWritesRecord(value)) {
      const namespace = this.namespaceFor(value.ns);
      for (const { idx, channel, value: written } of value.writes) {
        namespace.addWrite(value.checkpointId, { taskId: value.taskId, taskPath: value.taskPath, idx, channel, value: written });
      }
    }
  }

  private namespaceFor(ns: string): NamespaceIndex {
    const namespace = this.namespaces.get(ns) ?? new NamespaceIndex();
    this.namespaces.set(ns, namespace);
    return namespace;
  }
}

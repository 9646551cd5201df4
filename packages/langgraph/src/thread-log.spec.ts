import { ERROR } from '@langchain/langgraph-checkpoint';
import { Blob, CHECKPOINT_KIND, CheckpointRecord, WRITES_KIND, WritesRecord } from './records';
import { ThreadLog } from './thread-log';

const text = (value: string): Blob => ({ type: 'json', text: JSON.stringify(value) });
const blank = text('');

function checkpoint(id: string, parentId: string | undefined, values: Array<[string, number, string]>): CheckpointRecord {
  return {
    ns: '',
    id,
    ...(parentId === undefined ? {} : { parentId }),
    checkpoint: blank,
    metadata: blank,
    values: values.map(([channel, version, value]) => ({ channel, version, value: text(value) })),
  };
}

function writes(checkpointId: string, taskId: string, channels: Array<[string, number, string]>): WritesRecord {
  return { ns: '', checkpointId, taskId, taskPath: '', writes: channels.map(([channel, idx, value]) => ({ idx, channel, value: text(value) })) };
}

const valuesOf = (found: Map<string, Blob>) => Object.fromEntries([...found].map(([channel, blob]) => [channel, 'text' in blob ? JSON.parse(blob.text) : undefined]));

describe('ThreadLog', () => {
  it('reads a channel from the nearest ancestor that introduced its version, not from another branch with the same version', () => {
    const log = new ThreadLog('2026-01-01T00:00:00Z');
    log.addRecord(2, CHECKPOINT_KIND, checkpoint('a', undefined, [['messages', 1, 'hi'], ['topic', 1, 'weather']]));
    log.addRecord(3, CHECKPOINT_KIND, checkpoint('b', 'a', [['messages', 2, 'hi, sunny']]));
    // A branch from a: LangGraph counts versions again from a's, so messages@2 exists twice.
    log.addRecord(4, CHECKPOINT_KIND, checkpoint('c', 'a', [['messages', 2, 'hi, rainy']]));
    const namespace = log.namespace('');
    expect(valuesOf(namespace!.channelValues('b', { messages: 2, topic: 1 }))).toEqual({ messages: 'hi, sunny', topic: 'weather' });
    expect(valuesOf(namespace!.channelValues('c', { messages: 2, topic: 1 }))).toEqual({ messages: 'hi, rainy', topic: 'weather' });
    expect(namespace!.idsNewestFirst()).toEqual(['c', 'b', 'a']);
  });

  it("keeps a task's first regular writes, replaces its special ones, and orders them as LangGraph applies them", () => {
    const log = new ThreadLog('2026-01-01T00:00:00Z');
    log.addRecord(2, CHECKPOINT_KIND, checkpoint('a', undefined, []));
    log.addRecord(3, WRITES_KIND, writes('a', 'task-b', [['animals', 0, 'dog'], [ERROR, -1, 'first error']]));
    log.addRecord(4, WRITES_KIND, writes('a', 'task-a', [['animals', 0, 'cat']]));
    // The retried task-b: its regular write stays the first one, its error is the latest.
    log.addRecord(5, WRITES_KIND, writes('a', 'task-b', [['animals', 0, 'fish'], [ERROR, -1, 'second error']]));
    const ordered = log.namespace('')!.orderedWrites('a').map((write) => [write.taskId, write.channel, 'text' in write.value ? JSON.parse(write.value.text) : '']);
    expect(ordered).toEqual([
      ['task-a', 'animals', 'cat'],
      ['task-b', ERROR, 'second error'],
      ['task-b', 'animals', 'dog'],
    ]);
  });

  it('forgets what was appended after a rewind’s toSeq, and keeps what comes after the rewind', () => {
    const log = new ThreadLog('2026-01-01T00:00:00Z');
    log.addRecord(2, CHECKPOINT_KIND, checkpoint('a', undefined, [['messages', 1, 'hi']]));
    log.addRecord(3, CHECKPOINT_KIND, checkpoint('b', 'a', [['messages', 2, 'hi, sunny']]));
    log.addRecord(4, WRITES_KIND, writes('b', 'task', [['messages', 0, 'more']]));
    log.rewind(2);
    log.addRecord(6, CHECKPOINT_KIND, checkpoint('c', 'a', [['messages', 2, 'hi, rainy']]));
    const namespace = log.namespace('')!;
    expect(namespace.idsNewestFirst()).toEqual(['c', 'a']);
    expect(namespace.orderedWrites('b')).toEqual([]);
    expect(valuesOf(namespace.channelValues('c', { messages: 2 }))).toEqual({ messages: 'hi, rainy' });
  });

  it('skips records that are not the saver’s shapes', () => {
    const log = new ThreadLog('2026-01-01T00:00:00Z');
    log.addRecord(2, CHECKPOINT_KIND, { id: 'a' });
    log.addRecord(3, 'claude.entry', checkpoint('b', undefined, []));
    expect(log.namespaceNames()).toEqual([]);
  });
});

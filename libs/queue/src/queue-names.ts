/** Every queue and job name, in one place. */
export enum QueueName {
  Maintenance = 'session-maintenance',
  Compaction = 'session-compaction',
  /** Search indexing alone, one job at a time per worker, paced to its share of wall time (SEARCH_INDEX_DUTY_PERCENT). */
  Search = 'session-search',
}

export enum JobName {
  /** Compacts a session's pending marker (payload: CompactJobData). */
  Compact = 'compact',
  /** Deletes expired tool outputs across tenants (repeatable, no payload). */
  ToolOutputGc = 'tool-output-gc',
  /** Prunes and archives a session's old tool results (payload: PruneJobData). */
  Prune = 'prune',
  /** Archives or deletes idle sessions of every tenant with a retention setting (repeatable, no payload). */
  SessionRetention = 'session-retention',
  /** Indexes a session's new events for search (payload: SessionJobData). */
  SearchIndex = 'search-index',
  /** Enqueues SearchIndex for every session whose log is ahead of its index (repeatable, no payload). */
  SearchSweep = 'search-sweep',
}

/** The queue each job runs on. */
export const JOB_QUEUE: Record<JobName, QueueName> = {
  [JobName.Compact]: QueueName.Compaction,
  [JobName.ToolOutputGc]: QueueName.Maintenance,
  [JobName.Prune]: QueueName.Maintenance,
  [JobName.SessionRetention]: QueueName.Maintenance,
  [JobName.SearchIndex]: QueueName.Search,
  [JobName.SearchSweep]: QueueName.Maintenance,
};

/** Job data carries ids only: BullMQ stores it in clear text. */
export interface SessionJobData {
  tenantId: string;
  sessionId: string;
}

export interface CompactJobData extends SessionJobData {
  /** The marker that caused the job; the job works the session's pending marker, which may be a newer one. */
  markerSeq: number;
}

export interface PruneJobData extends SessionJobData {
  /** The session's head when the trigger was written; a run that read the log through it settles the trigger. */
  headSeq: number;
}

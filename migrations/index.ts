import { Foundation1763700000000 } from './1763700000000-foundation';
import { ModelView1763800000000 } from './1763800000000-model-view';
import { ToolOutputs1763900000000 } from './1763900000000-tool-outputs';
import { Compaction1764000000000 } from './1764000000000-compaction';
import { ConfigChanges1764100000000 } from './1764100000000-config-changes';
import { JobReconciler1764300000000 } from './1764300000000-job-reconciler';
import { UploadStaging1764400000000 } from './1764400000000-upload-staging';
import { TenantLimits1764500000000 } from './1764500000000-tenant-limits';
import { JobFairness1764600000000 } from './1764600000000-job-fairness';
import { OutboxRetention1764700000000 } from './1764700000000-outbox-retention';
import { SessionSearch1764800000000 } from './1764800000000-session-search';
import { SessionForks1764900000000 } from './1764900000000-session-forks';
import { SessionRetention1765000000000 } from './1765000000000-session-retention';
import { PartitionedLog1765200000000 } from './1765200000000-partitioned-log';
import { ReconcilerForks1765300000000 } from './1765300000000-reconciler-forks';
import { UsageShardPerTransaction1765400000000 } from './1765400000000-usage-shard-per-transaction';
import { EventDataLz41765500000000 } from './1765500000000-event-data-lz4';
import { ToolOutputsStoredOnce1765600000000 } from './1765600000000-tool-outputs-stored-once';
import { LogSearch1765700000000 } from './1765700000000-log-search';
import { UsageCountersByRow1765800000000 } from './1765800000000-usage-counters-by-row';
import { InlineToolOutputs1765900000000 } from './1765900000000-inline-tool-outputs';
import { AppendExpectations1766000000000 } from './1766000000000-append-expectations';

/** Every migration, in order. Hand-written SQL; the schema is never synchronized from entities. */
export const MIGRATIONS = [
  Foundation1763700000000, ModelView1763800000000, ToolOutputs1763900000000, Compaction1764000000000,
  ConfigChanges1764100000000, JobReconciler1764300000000, UploadStaging1764400000000,
  TenantLimits1764500000000, JobFairness1764600000000, OutboxRetention1764700000000,
  SessionSearch1764800000000,
  SessionForks1764900000000,
  SessionRetention1765000000000,
  PartitionedLog1765200000000,
  ReconcilerForks1765300000000,
  UsageShardPerTransaction1765400000000,
  EventDataLz41765500000000,
  ToolOutputsStoredOnce1765600000000,
  LogSearch1765700000000,
  UsageCountersByRow1765800000000,
  InlineToolOutputs1765900000000,
  AppendExpectations1766000000000,
];

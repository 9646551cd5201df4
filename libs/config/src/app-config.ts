/** The typed configuration the rest of the code receives; nothing else reads process.env. */
export interface AppConfig {
  env: 'development' | 'production' | 'test';
  database: { ownerUrl: string; appUrl: string; readUrl: string | null; sweeperUrl: string; gcUrl: string; poolSize: number; citus: CitusSettings | null };
  redis: RedisSettings;
  http: { host: string; port: number; maxBodyBytes: number; maxJsonDepth: number; requestTimeoutMs: number; headersTimeoutMs: number };
  adminToken: string;
  /** `/metrics` (API and worker) requires it as a bearer token; null: open. */
  metricsToken: string | null;
  limits: { maxEventsPerAppend: number; maxPageSize: number };
  /** Per-tenant defaults; the admin API overrides them tenant by tenant. */
  tenants: { limits: TenantLimits; quotas: TenantQuotas; connectionWaitMs: number };
  auth: { apiKeyCacheTtlMs: number; failureLimit: number; failureWindowSeconds: number };
  idempotency: { ttlHours: number };
  outbox: { sweepIntervalMs: number; graceMs: number };
  worker: { concurrency: number; lockDurationMs: number; stalledIntervalMs: number; port: number };
  summarizer: SummarizerSettings;
  toolOutput: ToolOutputSettings;
  prune: { jobDelayMs: number };
  /**
   * Log search: the index job's fold delay after an append, the share of wall time indexing takes (0–1], the backstop sweep's interval, the matches a search ranks at most,
   * the events after a session's indexed seq that a search inside it reads from the log and matches.
   */
  search: { indexDelayMs: number; indexDuty: number; sweepIntervalMs: number; maxMatches: number; unindexedEvents: number };
  /** Session retention: the worker's job interval (each tenant's idle age and action are set through the admin API). */
  retention: { intervalMs: number };
  reconciler: { intervalMs: number; afterMs: number; maxAttempts: number; outboxRetentionHours: number };
  logLevel: string;
  logFormat: 'json' | 'pretty';
  shutdownTimeoutMs: number;
  /** The live event stream: heartbeat (and safety-net poll) interval, open streams per tenant per API process. */
  sse: { heartbeatMs: number; maxStreamsPerTenant: number };
}

export const APP_CONFIG = Symbol('APP_CONFIG');

/** DATABASE_DISTRIBUTION=citus: the database is a Citus coordinator (docs/scaling.md); null on plain PostgreSQL. */
export interface CitusSettings {
  /** Shards of each table distributed from now on. */
  shardCount: number;
}

/** Where Redis is and how keys are named there. */
export interface RedisSettings {
  /** A single server; with clusterNodes set, only its credentials and TLS (rediss:) apply, to every node. */
  url: string;
  /** Redis Cluster seed nodes (REDIS_CLUSTER_NODES); null for a single server. */
  clusterNodes: Array<{ host: string; port: number }> | null;
  /**
   * BullMQ's prefix and that of the keys kept beside its queues: QUEUE_PREFIX,
   * hash-tagged (`{sst}`) on a cluster so that every key of a queue (and of
   * its multi-key scripts) lives in one slot.
   */
  prefix: string;
  /** QUEUE_PREFIX as given, for keys that carry a hash tag of their own (a tenant's rate-limit buckets: `{tenantId}`). */
  namespace: string;
}

/** What one tenant may do; 0 = unlimited. */
export interface TenantLimits {
  requestsPerSecond: number;
  /** Request-body bytes per second. */
  bytesPerSecond: number;
  /** Pooled connections its transactions may hold at once, per process. */
  maxConnections: number;
}

/** What one tenant may store, in bytes; 0 = unlimited. */
export interface TenantQuotas {
  eventBytes: number;
  toolOutputBytes: number;
}

/** An LLM provider's endpoint; null when the provider is not configured. */
export interface ProviderEndpoint {
  apiKey: string | null;
  baseUrl: string | null;
}

export interface SummarizerSettings {
  timeoutMs: number;
  retryBackoffMs: number;
  openai: ProviderEndpoint | null;
  anthropic: ProviderEndpoint | null;
}

/** The tool-output cache's service-wide limits (per-session view settings live in the session config). */
export interface ToolOutputSettings {
  maxUploadBytes: number;
  retentionSeconds: number;
  gcIntervalMs: number;
  grepTimeLimitMs: number;
  grepMaxScanBytes: number;
  grepThreads: number;
  uploadIdleTimeoutMs: number;
  uploadsPerTenant: number;
  uploadStagingTtlSeconds: number;
}

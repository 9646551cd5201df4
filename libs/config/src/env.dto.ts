import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, MinLength } from 'class-validator';

const toInt = ({ value }: { value: unknown }) => (value === undefined || value === '' ? undefined : Number(value));

/** Every environment variable the service reads. Validated once at boot. */
export class EnvDto {
  @IsIn(['development', 'production', 'test'])
  NODE_ENV: 'development' | 'production' | 'test' = 'development';

  /** Owner connection: migrations and database creation. */
  @Matches(/^postgres(ql)?:\/\//)
  DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/session_store';

  /** Runtime connection (tenant-scoped, subject to RLS). Defaults to DATABASE_URL with user session_store_app. */
  @IsOptional() @Matches(/^postgres(ql)?:\/\//)
  APP_DATABASE_URL?: string;

  /**
   * Optional read replica for context and event reads, as the runtime role
   * (a streaming standby of DATABASE_URL). A read that asks for `minSeq` the
   * replica has not replayed yet, or finds no session there, goes to the primary.
   */
  @IsOptional() @Matches(/^postgres(ql)?:\/\//)
  APP_READ_DATABASE_URL?: string;

  /** Outbox sweeper connection (cross-tenant, outbox table only). Defaults to DATABASE_URL with user session_store_sweeper. */
  @IsOptional() @Matches(/^postgres(ql)?:\/\//)
  SWEEPER_DATABASE_URL?: string;

  /** Tool-output garbage collector's connection (cross-tenant, tool-output tables only). Defaults to DATABASE_URL with user session_store_gc. */
  @IsOptional() @Matches(/^postgres(ql)?:\/\//)
  GC_DATABASE_URL?: string;

  @Matches(/^rediss?:\/\//)
  REDIS_URL = 'redis://127.0.0.1:6379';

  /**
   * Redis Cluster seed nodes, `host:port` comma-separated; when set, every
   * Redis connection is a cluster client (REDIS_URL then gives only the
   * credentials and TLS) and the BullMQ prefix is hash-tagged (`{QUEUE_PREFIX}`).
   */
  @IsOptional() @Matches(/^[A-Za-z0-9.-]+:\d{1,5}(,[A-Za-z0-9.-]+:\d{1,5})*$/, { message: 'REDIS_CLUSTER_NODES must be host:port[,host:port…]' })
  REDIS_CLUSTER_NODES?: string;

  /** BullMQ key prefix; one per deployment (and per test run). No `:`. */
  @Matches(/^[A-Za-z0-9_-]{1,64}$/)
  QUEUE_PREFIX = 'sst';

  /** Bearer token of the admin routes. Required in production, at least 32 characters there. */
  @IsOptional() @IsString() @MinLength(16)
  ADMIN_TOKEN?: string;

  /** Bearer token `/metrics` of the API and the worker require; unset: open. */
  @IsOptional() @IsString() @MinLength(16)
  METRICS_TOKEN?: string;

  @Transform(toInt) @IsInt() @Min(0) @Max(65535)
  PORT = 3000;

  @IsString()
  HOST = '127.0.0.1';

  @IsIn(['fatal', 'error', 'warn', 'log', 'debug', 'verbose'])
  LOG_LEVEL = 'log';

  /** `json` (one object a line) or `pretty`; unset: pretty when stdout is a terminal, else JSON. */
  @IsOptional() @IsIn(['json', 'pretty'])
  LOG_FORMAT?: 'json' | 'pretty';

  /** How long a process may take to drain after SIGTERM/SIGINT before it is forced out (exit code 1). */
  @Transform(toInt) @IsInt() @Min(1000) @Max(600_000)
  SHUTDOWN_TIMEOUT_MS = 10_000;

  /**
   * The live event stream's heartbeat comment, which keeps proxies from closing an idle stream;
   * each stream also re-reads its session this often, in case a wake-up message was lost.
   */
  @Transform(toInt) @IsInt() @Min(100) @Max(300_000)
  SSE_HEARTBEAT_MS = 15_000;

  /** Live event streams one tenant may hold open at once, per API process (429 too_many_streams beyond). */
  @Transform(toInt) @IsInt() @Min(1) @Max(10_000)
  SSE_MAX_STREAMS_PER_TENANT = 20;

  /** The worker's own HTTP listener (/healthz, /readyz, /metrics) on HOST; 0 picks a free port. */
  @Transform(toInt) @IsInt() @Min(0) @Max(65535)
  WORKER_PORT = 3001;

  @Transform(toInt) @IsInt() @Min(1) @Max(200)
  DB_POOL_SIZE = 10;

  /**
   * `citus`: DATABASE_URL is a Citus coordinator. After the migrations, the per-tenant tables are distributed by
   * tenant_id (co-located), and tenant statements bind the tenant id so that Citus routes each to one worker.
   */
  @IsIn(['postgres', 'citus'])
  DATABASE_DISTRIBUTION: 'postgres' | 'citus' = 'postgres';

  /** Shards per distributed table on Citus (tables distributed earlier keep theirs); a few per worker core leaves room to rebalance. */
  @Transform(toInt) @IsInt() @Min(1) @Max(1024)
  CITUS_SHARD_COUNT = 32;

  /** JSON request bodies, measured after gzip/deflate inflation. */
  @Transform(toInt) @IsInt() @Min(1024)
  MAX_BODY_BYTES = 8 * 1024 * 1024;

  @Transform(toInt) @IsInt() @Min(8) @Max(512)
  MAX_JSON_DEPTH = 64;

  /** A whole request, body included, must arrive within this: long enough for a 200 MB upload. */
  @Transform(toInt) @IsInt() @Min(1000)
  HTTP_REQUEST_TIMEOUT_MS = 120_000;

  /** A request's headers must arrive within this (slow-loris guard). */
  @Transform(toInt) @IsInt() @Min(1000) @Max(120_000)
  HTTP_HEADERS_TIMEOUT_MS = 10_000;

  @Transform(toInt) @IsInt() @Min(1) @Max(10000)
  MAX_EVENTS_PER_APPEND = 1000;

  @Transform(toInt) @IsInt() @Min(1) @Max(10000)
  MAX_PAGE_SIZE = 1000;

  /** How long a verified API key is trusted without a database look-up (revocation in another replica takes up to this long). */
  @Transform(toInt) @IsInt() @Min(0) @Max(60000)
  API_KEY_CACHE_TTL_MS = 5000;

  @Transform(toInt) @IsInt() @Min(1)
  IDEMPOTENCY_TTL_HOURS = 24;

  /** How often the sweeper looks for outbox rows the API could not enqueue. */
  @Transform(toInt) @IsInt() @Min(50)
  OUTBOX_SWEEP_INTERVAL_MS = 1000;

  /** An undispatched outbox row younger than this is left to the API's own after-commit enqueue. */
  @Transform(toInt) @IsInt() @Min(0)
  OUTBOX_GRACE_MS = 2000;

  @Transform(toInt) @IsInt() @Min(1) @Max(256)
  WORKER_CONCURRENCY = 4;

  /** BullMQ lock of a running job; a crashed worker's job is retried after it lapses. Kept above SUMMARIZER_TIMEOUT_MS. */
  @Transform(toInt) @IsInt() @Min(1000)
  WORKER_LOCK_DURATION_MS = 90_000;

  /** How often workers look for jobs whose lock lapsed (stalled). */
  @Transform(toInt) @IsInt() @Min(100)
  WORKER_STALLED_INTERVAL_MS = 30_000;

  /** Upper bound of one summarizer call (a session's compaction.timeoutMs can only lower it). */
  @Transform(toInt) @IsInt() @Min(100)
  SUMMARIZER_TIMEOUT_MS = 60_000;

  /** Backoff before retrying a failed summarizer call, doubled per retry. */
  @Transform(toInt) @IsInt() @Min(0) @Max(60_000)
  SUMMARIZER_RETRY_BACKOFF_MS = 1000;

  /** The `openai` summarizer: any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, LiteLLM). */
  @IsOptional() @IsString() @MinLength(1)
  OPENAI_API_KEY?: string;

  @IsOptional() @Matches(/^https?:\/\//)
  OPENAI_BASE_URL?: string;

  /** The `anthropic` summarizer. */
  @IsOptional() @IsString() @MinLength(1)
  ANTHROPIC_API_KEY?: string;

  @IsOptional() @Matches(/^https?:\/\//)
  ANTHROPIC_BASE_URL?: string;

  /** Largest tool output accepted by the streamed upload (413 beyond). */
  @Transform(toInt) @IsInt() @Min(1024)
  MAX_TOOL_OUTPUT_BYTES = 256 * 1024 * 1024;

  /** Age after which an uploaded output never attached to an event, or content no ref points to, is garbage-collected. */
  @Transform(toInt) @IsInt() @Min(1)
  TOOL_OUTPUT_RETENTION_SECONDS = 24 * 3600;

  /** How often the worker runs the tool-output garbage collector. */
  @Transform(toInt) @IsInt() @Min(100)
  TOOL_OUTPUT_GC_INTERVAL_MS = 3600 * 1000;

  /** How often the worker runs session retention (archive or delete idle sessions of the tenants that set an idle age). */
  @Transform(toInt) @IsInt() @Min(100)
  RETENTION_INTERVAL_MS = 3600 * 1000;

  /** Wall-clock cap of one grep over a stored output (the result is then partial). */
  @Transform(toInt) @IsInt() @Min(10) @Max(120_000)
  GREP_TIME_LIMIT_MS = 5000;

  /** Bytes one grep scans at most (the result is then partial). */
  @Transform(toInt) @IsInt() @Min(1024)
  GREP_MAX_SCAN_BYTES = 256 * 1024 * 1024;

  /** Worker threads running greps, per API process (greps beyond wait for a free thread within their time cap). */
  @Transform(toInt) @IsInt() @Min(1) @Max(64)
  GREP_THREADS = 2;

  /**
   * An upload whose body sends nothing for this long is ended: 408 upload_idle_timeout, nothing stored.
   * A streaming tool sends continuously and TCP recovers a lost packet within seconds; 30 s is a hung
   * client, and it frees one of its tenant's UPLOADS_PER_TENANT slots no later than that.
   */
  @Transform(toInt) @IsInt() @Min(100) @Max(600_000)
  UPLOAD_IDLE_TIMEOUT_MS = 30_000;

  /** Uploads one tenant may have in progress at once, across every API replica (429 too_many_uploads beyond). */
  @Transform(toInt) @IsInt() @Min(1) @Max(1000)
  UPLOADS_PER_TENANT = 4;

  /** A staging upload its request stopped touching this long ago (client gone, process killed) is collected by the GC. */
  @Transform(toInt) @IsInt() @Min(1)
  UPLOAD_STAGING_TTL_S = 600;

  /** A session's prune/archive job runs this long after the first step.finished since its last run (later steps fold into it). */
  @Transform(toInt) @IsInt() @Min(0) @Max(3_600_000)
  PRUNE_JOB_DELAY_MS = 2000;

  /** Search indexes a session's new events this long after the append that followed its last run (later appends fold into it). */
  @Transform(toInt) @IsInt() @Min(0) @Max(600_000)
  SEARCH_INDEX_DELAY_MS = 1000;

  /**
   * The share of wall time a worker spends indexing, in percent: after a run of t ms the next waits
   * t × (100 − share) / share, so that indexing yields the cores to appends under load; 100 never waits.
   */
  @Transform(toInt) @IsInt() @Min(1) @Max(100)
  SEARCH_INDEX_DUTY_PERCENT = 10;

  /** How often the worker looks for sessions whose log is ahead of their search index (appends whose trigger was lost, other writers). */
  @Transform(toInt) @IsInt() @Min(100)
  SEARCH_SWEEP_INTERVAL_MS = 60_000;

  /** Matches a search reads from the index and ranks at most; beyond, the order is over those read (the answer says so). */
  @Transform(toInt) @IsInt() @Min(100) @Max(1_000_000)
  SEARCH_MAX_MATCHES = 10_000;

  /** Inside one session, events after its indexed seq that a search reads from the log and matches itself, at most (read-your-writes). */
  @Transform(toInt) @IsInt() @Min(0) @Max(100_000)
  SEARCH_UNINDEXED_EVENTS = 1000;

  /** How often the worker's reconciler looks for compaction markers that no live job will close. */
  @Transform(toInt) @IsInt() @Min(100)
  RECONCILE_INTERVAL_MS = 5000;

  /** A dispatched trigger is checked once it is this old, and again this long after each check. */
  @Transform(toInt) @IsInt() @Min(100)
  RECONCILE_AFTER_MS = 10_000;

  /** Re-enqueues of one marker before the reconciler closes it as compaction.failed. */
  @Transform(toInt) @IsInt() @Min(0) @Max(100)
  RECONCILE_MAX_ATTEMPTS = 3;

  /** Finished outbox rows (enqueued, and settled where the reconciler follows them) are deleted once this old. */
  @Transform(toInt) @IsInt() @Min(1) @Max(24 * 365)
  OUTBOX_RETENTION_HOURS = 24;

  /** Failed authentications one client address may make per AUTH_FAILURE_WINDOW_S before it gets 429 without any key look-up. */
  @Transform(toInt) @IsInt() @Min(1)
  AUTH_FAILURE_LIMIT = 20;

  @Transform(toInt) @IsInt() @Min(1) @Max(86_400)
  AUTH_FAILURE_WINDOW_S = 60;

  /**
   * Requests per second one tenant may make across every API replica (429 beyond); 0 = unlimited. The
   * default bounds a runaway client well above what one API process serves; tighten it per tenant.
   */
  @Transform(toInt) @IsInt() @Min(0)
  TENANT_REQUEST_RATE = 5000;

  /** Request-body bytes per second one tenant may send across every API replica (429 beyond); 0 = unlimited. */
  @Transform(toInt) @IsInt() @Min(0)
  TENANT_BYTE_RATE = 64 * 1024 * 1024;

  /** Pooled connections one tenant's transactions may hold at once in one process; 0 = the whole pool. Unset: half of DB_POOL_SIZE. */
  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(200)
  TENANT_MAX_CONNECTIONS?: number;

  /** How long a transaction waits for one of its tenant's connections before 429 tenant_concurrency_limited. */
  @Transform(toInt) @IsInt() @Min(0) @Max(60_000)
  TENANT_CONNECTION_WAIT_MS = 5000;

  /** Stored event bytes (the events' JSON) one tenant may keep; 0 = unlimited. */
  @Transform(toInt) @IsInt() @Min(0)
  TENANT_EVENT_BYTES_QUOTA = 0;

  /** Stored tool-output bytes (distinct outputs) one tenant may keep; 0 = unlimited. */
  @Transform(toInt) @IsInt() @Min(0)
  TENANT_TOOL_OUTPUT_BYTES_QUOTA = 0;
}

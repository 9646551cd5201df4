import { type JsonSchema, REWRITE_DEFERRALS } from '@app/domain';
import { CONTEXT_MESSAGE_SCHEMAS, CONTEXT_VARIANTS, NativeAppendRequest } from './context-schemas';
import { object, openObject, ref } from './schema-builders';

/**
 * Response bodies, as component schemas (OpenAPI 3.1: JSON Schema 2020-12,
 * `null` as a type). Every field the service always sends is `required`, so
 * generated clients need no non-null assertions; open objects
 * (`additionalProperties`) are left open on purpose where the service passes
 * through what clients stored (config, metadata) or reports details that grow.
 */
const nullable = (schema: JsonSchema): JsonSchema => ({ oneOf: [schema, { type: 'null' }] });
const seq: JsonSchema = { type: 'integer', minimum: 0 };
const nullableSeq: JsonSchema = { type: ['integer', 'null'], minimum: 0 };
const timestamp: JsonSchema = { type: 'string', format: 'date-time' };
const nullableTimestamp: JsonSchema = { type: ['string', 'null'], format: 'date-time' };

const count: JsonSchema = { type: 'integer', minimum: 0 };
/** The same object with every property optional. */
const partial = (schema: JsonSchema): JsonSchema => ({ ...schema, required: [] });

const CompactionState = object({
  state: { type: 'string', enum: ['idle', 'pending', 'running', 'failed'] },
  lastError: { type: ['string', 'null'] },
  pendingMarkerSeq: { ...nullableSeq, description: 'The open marker new requests join, or null' },
  suppressedReason: { type: ['string', 'null'], description: 'Why automatic compaction is suspended (loop guard), or null' },
});

const TokenFigures = object({
  estimated: { type: 'integer', description: "The context's size in tokens, as best known" },
  basis: {
    type: 'string',
    enum: ['usage+estimate', 'estimate'],
    description:
      '`usage+estimate`: the provider usage of the newest step that measured this context (trusted whatever its size), plus estimates of what came after; `estimate`: the estimate of the whole view plus `overhead`',
  },
  overhead: {
    type: 'integer',
    minimum: 0,
    description: "What the provider counts beyond the view's estimate (tool definitions, framing, images): its usage minus the estimate of the view it measured, carried across compactions, prunes and archives",
  },
  expectedGrowth: {
    type: 'integer',
    minimum: 0,
    description:
      "What the next step is expected to add (the last step's messages, from their estimates). With compaction.anticipateGrowth, compaction starts once estimated plus this (at most a quarter of usable) reaches the threshold",
  },
  usable: { type: ['integer', 'null'], description: 'Tokens the model may be sent (window minus output reserve); null for a model without known limits' },
  limit: { type: ['integer', 'null'], description: "The model's context window" },
  threshold: { type: ['integer', 'null'], description: 'Automatic compaction starts when the figure (plus the expected growth, see expectedGrowth) reaches this' },
  ratio: { type: ['number', 'null'], description: 'estimated / usable' },
});

/** docs/compaction.md "What a rewrite cost": prices relative to an uncached input token, cache write 1.25, cache read 0.1. */
const RewriteCacheCost = object({
  seq: { ...seq, description: 'The rewrite event (compaction.completed, tool_outputs.pruned or tool_results.archived)' },
  kind: { type: 'string', enum: ['compaction', 'prune', 'archive'] },
  cachedPrefixTokens: {
    type: ['integer', 'null'],
    minimum: 0,
    description: "The last step before the rewrite: its cache_read_tokens + cache_creation_tokens, the prefix the provider held cached; null without a step",
  },
  invalidatedTokens: {
    type: ['integer', 'null'],
    minimum: 0,
    description:
      'The part of the cached prefix from the first changed position on: all of it for a compaction; for a prune or archive the estimates of the messages from the earliest changed one up to that step, capped at the cached prefix',
  },
  removedTokens: { type: 'integer', minimum: 0, description: 'Compaction: tokensBefore - tokensAfter; prune: tokensFreed; archive: tokensFreed, else the archived results minus the digest (estimates)' },
  rewriteCost: {
    type: ['number', 'null'],
    minimum: 0,
    description: 'In uncached-input tokens: the invalidated tokens that remain, written again at 1.25 instead of read at 0.1: max(0, invalidated - removed) x 1.15',
  },
  savingPerStep: { type: 'number', minimum: 0, description: 'What each later step saves: removed x 0.1 (the removed tokens are no longer read from the cache)' },
  breakEvenSteps: { type: ['integer', 'null'], minimum: 0, description: 'ceil(rewriteCost / savingPerStep): the steps its saving needs to repay it; null when unknown or nothing was removed' },
  stepsSince: { ...count, description: 'Steps after the rewrite, up to the next compaction' },
  repaidAfterSteps: { type: ['integer', 'null'], minimum: 0, description: 'breakEvenSteps once as many steps followed the rewrite; null while not yet repaid' },
});

const CACHE_RATIO_FIELDS: Record<string, JsonSchema> = {
  hitRatio: { type: ['number', 'null'], description: "Sum of the steps' cache_read_tokens over the sum of their prompt tokens (input + cache read + cache creation); null without prompt tokens" },
  hitRatioSinceRewrite: { type: ['number', 'null'], description: 'The same over the steps after the latest compaction, prune or archive' },
  steps: count,
  stepsSinceRewrite: count,
  lastRewriteSeq: { ...nullableSeq, description: 'The latest compaction.completed, tool_outputs.pruned or tool_results.archived, or null' },
};
const CacheRatios = object(CACHE_RATIO_FIELDS);

const SESSION_FIELDS: Record<string, JsonSchema> = {
  id: { type: 'string', example: 'agent-run-42' },
  model: { type: 'string', example: 'gpt-4.1' },
  system: { type: ['string', 'null'] },
  config: { ...ref('SessionConfig'), description: "The session's own configuration overrides (preset and settings)" },
  metadata: openObject,
  headSeq: { ...seq, description: 'The seq of the newest event' },
  createdAt: timestamp,
  updatedAt: timestamp,
  archivedAt: { ...nullableTimestamp, description: 'When it was archived (appends get 409 session_archived), or null' },
  forkedFrom: {
    ...object({ sessionId: { type: 'string' }, atSeq: { type: 'integer', minimum: 1 } }),
    description: 'Only on a fork: the session and seq it was taken from',
  },
};

const Session = object(SESSION_FIELDS, ['forkedFrom']);

const SessionDetail = object(
  {
    ...SESSION_FIELDS,
    pivotSeq: { ...nullableSeq, description: 'The compaction.completed the view starts from, or null' },
    coveredThroughSeq: { ...seq, description: 'The last seq the pivot summarizes (0 without one)' },
    preset: { type: 'string', description: 'The preset the resolved configuration starts from' },
    tokens: ref('TokenFigures'),
    compaction: ref('CompactionState'),
    cache: {
      ...object({
        ...CACHE_RATIO_FIELDS,
        hitRatio: { type: ['number', 'null'], description: "The running hit ratio: the steps' cache_read_tokens over their prompt tokens, over the steps since the latest compaction (sinceSeq); the whole session's is on GET .../compactions" },
        sinceSeq: { ...seq, description: 'The pivot (compaction.completed) the steps are counted after; 0 without one' },
      }),
      description: 'Prompt-cache hit ratios from the steps\' reported usage, over the window the state reads anyway (docs/compaction.md, "What a rewrite cost")',
    },
  },
  ['forkedFrom'],
);

const CompactionFailure = object(
  {
    seq: { type: 'integer', description: 'The compaction.failed event (absent in a dry run)' },
    attempt: { type: 'integer', minimum: 1 },
    error: { type: 'string' },
    fallback: { type: 'string', description: 'What followed: a retry, a cheaper summarizer, none (given up) or skipped (nothing to summarize)' },
    at: timestamp,
  },
  ['seq', 'at'],
);

/** What a compaction produced: in the history, the manual request's answer and a dry run. */
const OUTCOME_FIELDS: Record<string, JsonSchema> = {
  summary: { type: 'string' },
  retain: { type: ['string', 'null'], description: 'What the summary keeps verbatim (tool-output refs, etc.)' },
  strategy: { type: 'string' },
  model: { type: ['string', 'null'] },
  tokensBefore: { type: 'integer' },
  tokensAfter: { type: 'integer' },
  tokensSaved: { type: 'integer', minimum: 0 },
  messagesCompacted: { type: 'integer', minimum: 0 },
  durationMs: { type: 'number', minimum: 0 },
  retention: { ...nullable(openObject), description: 'What the summary retained of the tracked facts; null before it was measured' },
};

const ENTRY_FIELDS: Record<string, JsonSchema> = {
  markerSeq: { type: 'integer', minimum: 1, description: 'The compaction.requested marker' },
  requestedAt: timestamp,
  auto: { type: 'boolean' },
  reason: { type: 'string', example: 'threshold' },
  instructions: { type: 'string' },
  status: { type: 'string', enum: ['pending', 'running', 'completed', 'failed', 'skipped', 'superseded'] },
  completedSeq: { type: 'integer' },
  completedAt: timestamp,
  range: object({ fromSeq: nullableSeq, throughSeq: seq }),
  ...OUTCOME_FIELDS,
  record: { ...nullable(openObject), description: 'The structured summary record (include=record only)' },
  failures: { type: 'array', items: ref('CompactionFailure') },
  cache: { ...ref('RewriteCacheCost'), description: 'What the compaction cost in prompt cache (the history only)' },
};
/** Present once the compaction completed (`record` only when asked for, `cache` in the history). */
const COMPLETION_ONLY = ['instructions', 'completedSeq', 'completedAt', 'range', ...Object.keys(OUTCOME_FIELDS), 'record', 'cache'];

const CompactionEntry = object(ENTRY_FIELDS, COMPLETION_ONLY);

const CompactionRequestResult = object(
  {
    ...ENTRY_FIELDS,
    state: ref('CompactionState'),
    joined: { type: 'boolean', description: 'true: the request joined the compaction already pending' },
  },
  COMPLETION_ONLY,
);

const CompactionDryRun = object(
  {
    dryRun: { type: 'boolean', const: true },
    status: { type: 'string', enum: ['completed', 'nothing_to_compact'] },
    reason: { type: 'string', description: 'Why there is nothing to compact' },
    coveredThroughSeq: seq,
    ...OUTCOME_FIELDS,
    failures: { type: 'array', items: ref('CompactionFailure') },
    context: object({
      format: { type: 'string', const: 'neutral' },
      messages: { type: 'array', items: ref('Message') },
      tokens: ref('TokenFigures'),
    }),
  },
  ['reason', 'coveredThroughSeq', ...Object.keys(OUTCOME_FIELDS), 'failures', 'context'],
);

const GrepLine = object({ line: { type: 'integer', minimum: 1 }, text: { type: 'string' } });

const PRUNE_STATUS = (done: string): JsonSchema => ({
  type: 'object',
  required: ['status'],
  properties: {
    status: { type: 'string', enum: ['disabled', 'nothing', 'deferred', done] },
    seq: { type: 'integer' },
    eventId: { type: 'string' },
    callIds: { type: 'array', items: { type: 'string' } },
    reason: { type: 'string', enum: [...REWRITE_DEFERRALS], description: '`deferred` only: why the chosen outputs wait (see `rewrite`)' },
    cache: { ...ref('RewriteCacheCost'), description: `\`${done}\` only: what the rewrite cost in prompt cache, measured from the steps' usage as on GET .../compactions` },
  },
  additionalProperties: true,
  description:
    `What was done: \`${done}\` with the event written and its figures, \`deferred\` (outputs chosen, left for later by cache.rewrites), ` +
    '`nothing` to do, or `disabled` by the configuration',
});

/** judgeRewrite's verdict (docs/compaction.md, "Rewrites that pay for themselves"). */
const RewriteVerdict = object({
  apply: { type: 'boolean' },
  deferral: { type: ['string', 'null'], enum: [...REWRITE_DEFERRALS, null], description: 'Why the clearing waits, or null when it was applied' },
  removedTokens: { ...count, description: 'Tokens the clearing removes (estimates)' },
  invalidatedTokens: { ...count, description: 'Tokens of the view from the first changed message on: what the next call writes to the cache again (estimates)' },
  breakEvenSteps: { type: ['integer', 'null'], minimum: 0, description: 'Steps of saving that repay the rewrite; null when it removes nothing' },
  stepsLeft: { type: ['integer', 'null'], minimum: 0, description: 'Steps until the view, once cleared, grows back to the compaction threshold; null when unbounded' },
});

const TenantLimits = object({
  requestsPerSecond: { type: 'integer', minimum: 0, description: '0 = unlimited' },
  bytesPerSecond: { type: 'integer', minimum: 0 },
  maxConnections: { type: 'integer', minimum: 0 },
});
const TenantQuotas = object({ eventBytes: { type: 'integer', minimum: 0 }, toolOutputBytes: { type: 'integer', minimum: 0 } });

const ApiKey = object({
  keyId: { type: 'string', format: 'uuid' },
  key: { type: 'string', description: 'The secret: shown only in this answer', example: 'sst_3cd1602413bd4857b06a3e42d7c69416_sf4HspVjI_4CM23qou0kbECNuIt-Fci4SiSiMU0kcx8' },
  prefix: { type: 'string', description: 'The part of the key that identifies it in listings and logs' },
  name: { type: ['string', 'null'] },
  createdAt: timestamp,
});

const SEARCH_CURSOR: JsonSchema = { type: ['string', 'null'], description: 'Pass as `cursor` for the next page (same q and filters); null on the last' };
const SEARCH_CAPPED: JsonSchema = {
  type: 'boolean',
  description: 'More documents matched than one search ranks (SEARCH_MAX_MATCHES): the order is over the first ones the index returned; add words or filters',
};

/** GET …/context's fields beside `format`, `system`, `messages` and `tools`, the same in every format. */
const CONTEXT_FIELDS: Record<string, JsonSchema> = {
  tokens: ref('TokenFigures'),
  pivotSeq: nullableSeq,
  headSeq: seq,
  atSeq: { ...nullableSeq, description: 'The seq the view was taken at (time travel), or null for the head' },
  pendingToolCalls: { type: 'array', items: object({ callId: { type: 'string' }, name: { type: 'string' } }) },
  repairs: object({
    abortedCallIds: { type: 'array', items: { type: 'string' } },
    droppedResultCallIds: { type: 'array', items: { type: 'string' } },
    droppedCallIds: { type: 'array', items: { type: 'string' } },
  }),
  compaction: ref('CompactionState'),
  fitted: {
    ...object({
      tokensBefore: { type: 'integer', description: "The view's figure before fitting" },
      clearedOutputs: { type: 'integer', description: 'Tool results shown as the placeholder with their ref for this read' },
      droppedThroughSeq: { ...nullableSeq, description: 'The newest message left out (all before it went too; a notice stands for them), or null' },
    }),
    type: ['object', 'null'],
    description:
      'Null when the view fits the usable window as it is. Otherwise the view was over it (a compaction queued or running while the agent kept appending) and was fitted for this read only: old tool outputs first, then the oldest messages after the pivot; the log is unchanged and `tokens` are those of the fitted view',
  },
  tools: { type: 'array', items: openObject, description: 'The tool_output_cache tools in the format (tools=tool_output_cache only)' },
};

/**
 * The context, one schema per format (`format` a const), so `messages` has
 * its format's item type and a generated client narrows on `format`.
 */
const CONTEXT_SCHEMAS: Record<string, JsonSchema> = {
  ...Object.fromEntries(
    Object.entries(CONTEXT_VARIANTS).map(([format, variant]) => [
      variant.name,
      object(
        {
          format: { type: 'string', const: format },
          model: { type: 'string' },
          ...(variant.system ? { system: variant.system } : {}),
          messages: { type: 'array', items: variant.messages, description: `The messages in the ${format} format` },
          ...CONTEXT_FIELDS,
        },
        ['system', 'tools'],
        { description: `GET …/context?format=${format}` },
      ),
    ]),
  ),
  Context: {
    oneOf: Object.values(CONTEXT_VARIANTS).map((variant) => ref(variant.name)),
    discriminator: { propertyName: 'format', mapping: Object.fromEntries(Object.entries(CONTEXT_VARIANTS).map(([format, variant]) => [format, `#/components/schemas/${variant.name}`])) },
    description: "The rendered context: `format` says which of the formats' shapes `messages` (and `system`) have",
  },
};

export const RESPONSE_SCHEMAS: Record<string, JsonSchema> = {
  CompactionState,
  TokenFigures,
  Session,
  SessionDetail,
  SessionList: object({
    sessions: { type: 'array', items: ref('Session') },
    nextCursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page; null on the last' },
  }),
  SearchResult: object({ hits: { type: 'array', items: ref('SearchHit') }, nextCursor: SEARCH_CURSOR, capped: SEARCH_CAPPED }),
  SessionSearchResult: object({
    hits: { type: 'array', items: ref('SearchHit') },
    nextCursor: SEARCH_CURSOR,
    capped: SEARCH_CAPPED,
    headSeq: seq,
    indexedThroughSeq: { ...seq, description: "The seq through which the session's log is indexed; later events are read from the log and matched by this search itself, up to searchedThroughSeq" },
    searchedThroughSeq: {
      ...seq,
      description: 'The seq through which this search found events: headSeq, unless more than SEARCH_UNINDEXED_EVENTS (1,000) events wait for the index; events after it are not found yet',
    },
  }),
  SearchHit: object({
    sessionId: { type: 'string' },
    title: { type: ['string', 'null'], description: "The session's metadata.title" },
    seq: { type: 'integer', minimum: 1, description: 'The event: open the timeline there' },
    part: { type: 'integer', minimum: 0, description: "The part's index in its message (0 outside a message)" },
    eventType: { type: 'string', example: 'message.added' },
    role: { type: ['string', 'null'], enum: ['system', 'user', 'assistant', 'tool', null], description: "The message's role; null for a summary, a pin or the system prompt" },
    partType: { type: 'string', enum: ['text', 'reasoning', 'tool_call', 'tool_result', 'file', 'summary', 'pin', 'system'] },
    toolName: { type: ['string', 'null'], description: 'The tool of a tool call or result' },
    createdAt: timestamp,
    score: { type: 'number', minimum: 0, description: 'Relevance (ts_rank over document length); comparable within one query only' },
    snippet: object(
      {
        text: { type: 'string', description: 'Plain text: a passage of the part, `…` where it is cut; render it as text' },
        highlights: {
          type: 'array',
          items: { type: 'array', items: { type: 'integer', minimum: 0 }, minItems: 2, maxItems: 2 },
          description: 'Matched terms as [start, end) offsets into `text` in UTF-16 code units (JavaScript string indexes), in order, not overlapping',
        },
      },
      [],
      { description: 'Where the query matched, marked' },
    ),
  }),
  AppendResult: object(
    {
      headSeq: seq,
      events: { type: 'array', items: object({ id: { type: 'string' }, seq: { type: 'integer', minimum: 1 } }), description: 'The seq each event of the batch got, in order' },
      compaction: { ...object({ pendingMarkerSeq: { type: 'integer', minimum: 1 } }), description: 'Present when this append opened (or found) a pending compaction' },
    },
    ['compaction'],
  ),
  EventPage: object({
    headSeq: seq,
    events: { type: 'array', items: ref('Event') },
    nextAfterSeq: { ...nullableSeq, description: 'Pass as `afterSeq` for the next page; null on the last' },
  }),
  ...CONTEXT_MESSAGE_SCHEMAS,
  ...CONTEXT_SCHEMAS,
  NativeAppendRequest,
  CompactionFailure,
  CompactionEntry,
  CompactionHistory: object({
    compactions: { type: 'array', items: ref('CompactionEntry') },
    state: ref('CompactionState'),
    nextAfterSeq: nullableSeq,
    cache: {
      ...object({
        ...CACHE_RATIO_FIELDS,
        rewrites: { type: 'array', items: ref('RewriteCacheCost'), description: "The prunes and archives of this page's range (after afterSeq, before the next page's first marker), oldest first" },
      }),
      description: 'The hit ratios, and what the prunes and archives cost (each compaction carries its own `cache`)',
    },
  }),
  RewriteCacheCost,
  CacheRatios,
  CompactionRequestResult,
  CompactionDryRun,
  RewriteVerdict,
  PruneReport: object({
    sessionId: { type: 'string' },
    headSeq: seq,
    prune: PRUNE_STATUS('pruned'),
    archive: PRUNE_STATUS('archived'),
    rewrite: { ...nullable(ref('RewriteVerdict')), description: 'The cache rule (cache.rewrites) on what the run chose; null when it chose nothing' },
  }),
  PruneQueued: object({
    sessionId: { type: 'string' },
    headSeq: seq,
    queued: { type: 'boolean', const: true },
    jobId: { type: 'string', description: 'The queued job; its outcome is logged as tool_outputs.pruned / tool_results.archived events' },
  }),
  Rewound: object({
    seq: { type: 'integer', minimum: 1, description: 'The session.rewound event' },
    toSeq: { type: 'integer', minimum: 1, description: 'The last seq the view keeps' },
    headSeq: seq,
  }),
  PinAdded: object({ pinId: { type: 'string' }, seq: { type: 'integer', minimum: 1, description: 'The pin.added event' } }),
  PinList: object({
    pins: { type: 'array', items: object({ pinId: { type: 'string' }, text: { type: 'string' }, seq: { type: 'integer' }, tokens: { type: 'integer' } }) },
    tokens: { type: 'integer', minimum: 0 },
    maxTokens: { type: 'integer', minimum: 0, description: 'pins.maxTokens' },
  }),
  ToolOutputUpload: object({
    ref: ref('ToolOutputRef'),
    view: { type: 'string', description: 'What the model sees in context: the whole output, or its head and tail with the ref' },
    truncated: { type: 'boolean' },
  }),
  ToolOutputLines: object({
    ref: ref('ToolOutputRef'),
    offset: { type: 'integer', minimum: 1 },
    lines: { type: 'string', description: 'Numbered lines (`cat -n` style)' },
    lineCount: { type: 'integer', minimum: 0 },
    totalLines: { type: 'integer', minimum: 0 },
    nextOffset: { type: ['integer', 'null'], description: 'The next offset to read; null at the end' },
  }),
  GrepLine,
  ToolOutputGrep: object({
    ref: ref('ToolOutputRef'),
    pattern: { type: 'string' },
    ignoreCase: { type: 'boolean' },
    matches: { type: 'array', items: { allOf: [ref('GrepLine')], ...object({ before: { type: 'array', items: ref('GrepLine') }, after: { type: 'array', items: ref('GrepLine') } }) } },
    truncated: { type: 'boolean', description: 'More matches may exist than are returned' },
    partial: { ...nullable(object({ reason: { type: 'string', enum: ['time', 'bytes', 'matches'] } })), description: 'Which cap stopped the scan, or null' },
    scannedBytes: { type: 'integer', minimum: 0 },
    scannedLines: { type: 'integer', minimum: 0 },
    longLines: { type: 'integer', minimum: 0 },
  }),
  ToolCallResult: object({ output: { type: 'string', description: 'The text to hand back to the model as the tool result' }, isError: { type: 'boolean' } }),
  ImportResult: object({
    session: ref('Session'),
    events: { type: 'integer', minimum: 1, description: 'Events imported' },
    toolOutputs: { type: 'integer', minimum: 0 },
    renamedRefs: { type: 'object', additionalProperties: { type: 'string' }, description: 'Exported ref id → the new id, for ids the tenant already used' },
  }),
  ApiKey,
  TenantLimits,
  TenantQuotas,
  TenantCreated: object({ tenantId: { type: 'string', format: 'uuid' }, name: { type: 'string' }, createdAt: timestamp, apiKey: ref('ApiKey') }),
  Tenant: object({
    tenantId: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    createdAt: timestamp,
    config: { ...ref('SessionConfig'), description: 'Session-config defaults of the tenant' },
    suspended: { type: 'boolean' },
    suspendedAt: nullableTimestamp,
    retention: nullable(object({ idleSeconds: { type: 'integer' }, action: { type: 'string', enum: ['archive', 'delete'] } })),
    limits: { ...ref('TenantLimits'), description: 'Effective limits (overrides, else the TENANT_* defaults); 0 = unlimited' },
    quotas: { ...ref('TenantQuotas'), description: 'Effective quotas; 0 = unlimited' },
    overrides: {
      ...object({ limits: partial(TenantLimits), quotas: partial(TenantQuotas) }),
      description: 'The overrides set through this API; a key absent uses the TENANT_* default',
    },
    usage: { ...object({ eventBytes: count, toolOutputBytes: count }), description: 'Bytes stored now (what the quotas measure)' },
    counts: object({ sessions: count, events: count }),
  }),
  TenantList: object({ tenants: { type: 'array', items: ref('Tenant') }, nextCursor: { type: ['string', 'null'] } }),
  Health: object({ status: { type: 'string', const: 'ok' } }),
  Readiness: object({
    status: { type: 'string', enum: ['ok', 'degraded', 'down'], description: 'degraded: Redis is down (appends still work)' },
    postgres: { type: 'string', enum: ['ok', 'down'] },
    redis: { type: 'string', enum: ['ok', 'down'] },
  }),
};

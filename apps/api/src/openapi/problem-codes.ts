/**
 * Every `code` a problem answer of the API may carry. Checked against the
 * sources by test/openapi.e2e-spec.ts, so a new code cannot ship undocumented.
 */
export const PROBLEM_CODES = [
  // 400: request bodies, query strings and headers.
  'bad_request', 'validation_failed', 'invalid_json', 'invalid_utf8', 'invalid_body', 'request_aborted', 'request_size_invalid',
  'json_too_deep', 'nul_character', 'lone_surrogate', 'prototype_key', 'field_too_long',
  'invalid_argument', 'invalid_field', 'invalid_id', 'invalid_cursor', 'invalid_search', 'invalid_filter', 'invalid_query', 'invalid_config', 'invalid_idempotency_key',
  'invalid_last_event_id', 'unknown_field',
  // 400: appends.
  'invalid_event', 'unknown_event_type', 'reserved_event_type', 'too_many_events', 'duplicate_event_id', 'event_out_of_order',
  'unknown_role', 'invalid_part', 'duplicate_tool_call_id', 'duplicate_tool_result', 'unknown_tool_call', 'unknown_output_ref',
  'output_ref_mismatch', 'invalid_fork_seq', 'unknown_model', 'usage_incomplete', 'invalid_rewind_seq', 'invalid_native_message', 'empty_batch',
  // 400: tool outputs and their tools.
  'unknown_tool', 'missing_argument', 'invalid_tool_arguments', 'invalid_pattern', 'pattern_too_long',
  // 400: imports.
  'invalid_log', 'empty_import', 'not_a_session_export', 'unsupported_version', 'unknown_line_kind', 'line_too_long', 'missing_events',
  'chunk_out_of_order', 'chunk_too_large', 'unexpected_chunk', 'duplicate_output', 'output_mismatch', 'output_size_mismatch', 'output_cut_short',
  // 401, 403.
  'invalid_api_key', 'invalid_admin_token', 'invalid_metrics_token', 'tenant_suspended',
  // 404.
  'route_not_found', 'session_not_found', 'tenant_not_found', 'api_key_not_found', 'output_ref_not_found', 'pin_not_found',
  // 408, 409.
  'upload_idle_timeout', 'session_exists', 'session_archived', 'version_conflict', 'partial_duplicate', 'rewind_behind_pivot',
  // 413, 415, 422.
  'body_too_large', 'tool_output_too_large', 'quota_exceeded', 'pin_budget_exceeded', 'unsupported_encoding', 'unsupported_media_type',
  'event_id_reused', 'idempotency_key_reused', 'unsupported_native_item',
  // 429.
  'tenant_rate_limited', 'tenant_byte_rate_limited', 'tenant_concurrency_limited', 'too_many_auth_failures', 'too_many_streams', 'too_many_uploads',
  // 500, 503.
  'internal_error', 'database_unavailable', 'redis_unavailable', 'grep_unavailable', 'upload_interrupted', 'shutting_down',
] as const;

export type ProblemCode = (typeof PROBLEM_CODES)[number];

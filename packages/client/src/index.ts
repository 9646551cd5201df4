export { SessionStoreClient } from './client';
export type { AppendAtOptions, AppendOptions, ContextOptions, SessionStoreClientOptions, StreamEventsOptions, UploadBody, UploadOptions } from './client';
export { isProblem, ProblemError, problemError } from './problem';
export { isObject, recordEvent, recordValue } from './records';
export type { Problem, ProblemCode, UnexpectedResponse } from './problem';
export type * from './types';
export type { components, operations, paths } from './schema';

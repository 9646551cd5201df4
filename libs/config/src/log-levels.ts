import type { LogLevel } from '@nestjs/common';

const LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];

/** Nest's logger levels up to and including LOG_LEVEL. */
export function logLevels(level: string): LogLevel[] {
  return LEVELS.slice(0, LEVELS.indexOf(level as LogLevel) + 1);
}

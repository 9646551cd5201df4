import pino, { Logger } from 'pino';
import pretty from 'pino-pretty';
import { logContext } from './log-context';

export interface LoggerOptions {
  /** The service's LOG_LEVEL (Nest's names). */
  level: string;
  format: 'json' | 'pretty';
  /** `api`, `worker`, `supervisor`: the `service` field of every line. */
  service: string;
}

/** Nest's level names onto pino's. */
const PINO_LEVEL: Record<string, pino.Level> = { fatal: 'fatal', error: 'error', warn: 'warn', log: 'info', debug: 'debug', verbose: 'trace' };

/**
 * Paths that could hold a secret if an object carrying one were ever logged:
 * API keys, bearer tokens, summarizer keys. Headers are not logged at all.
 */
const REDACT = [
  'authorization',
  'apiKey',
  'key',
  'token',
  'adminToken',
  'metricsToken',
  '*.authorization',
  '*.apiKey',
  '*.key',
  '*.token',
  '*.adminToken',
  '*.metricsToken',
  'req.headers',
  'headers',
];

/**
 * One JSON object a line on stdout (or a human-readable line with
 * LOG_FORMAT=pretty), written synchronously so a line is never lost when the
 * process exits right after it.
 */
export function createLogger(options: LoggerOptions): Logger {
  const base = {
    level: PINO_LEVEL[options.level] ?? 'info',
    base: { service: options.service, pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACT, censor: '[redacted]' },
    formatters: { level: (label: string) => ({ level: label }) },
    mixin: () => logContext.current() ?? {},
  };
  const stream = options.format === 'pretty' ? pretty({ sync: true, colorize: process.stdout.isTTY === true, ignore: 'pid,hostname' }) : pino.destination({ fd: 1, sync: true });
  return pino(base, stream);
}

import type { LoggerService } from '@nestjs/common';
import type { Logger } from 'pino';

/** Nest's own start-up chatter (one line per module and route): debug, not info. */
const BOOTSTRAP_CONTEXTS = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication']);

/**
 * Nest's LoggerService over pino: `Logger.log('…', 'Context')` anywhere in
 * the app becomes a structured line with `context`, and the request's or
 * job's fields (through the logger's mixin).
 */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.write('info', message, rest);
  }

  error(message: unknown, ...rest: unknown[]): void {
    // Nest passes (message, stack?, context?).
    const [stack, context] = rest.length >= 2 ? rest : [undefined, rest[0]];
    this.logger.error({ context, stack: typeof stack === 'string' ? stack : undefined }, text(message));
  }

  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }

  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }

  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }

  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  private write(level: 'info' | 'warn' | 'debug' | 'trace' | 'fatal', message: unknown, rest: unknown[]): void {
    const context = rest.length > 0 ? rest[rest.length - 1] : undefined;
    const effective = level === 'info' && typeof context === 'string' && BOOTSTRAP_CONTEXTS.has(context) ? 'debug' : level;
    const { msg, fields } = structured(message);
    this.logger[effective]({ context, ...fields }, msg);
  }
}

/** A message given as `{ msg, ...fields }` (a request's log fields, say) writes its fields as the line's own. */
function structured(message: unknown): { msg: string; fields: Record<string, unknown> } {
  if (typeof message === 'object' && message !== null && !(message instanceof Error) && typeof (message as { msg?: unknown }).msg === 'string') {
    const { msg, ...fields } = message as { msg: string };
    return { msg, fields };
  }
  return { msg: text(message), fields: {} };
}

function text(message: unknown): string {
  if (message instanceof Error) return message.message;
  return typeof message === 'string' ? message : JSON.stringify(message);
}

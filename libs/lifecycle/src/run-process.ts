import type { Logger } from 'pino';

export interface ProcessOptions {
  logger: Logger;
  /** SHUTDOWN_TIMEOUT_MS: after the first signal, the process is out by then, drained or not. */
  shutdownTimeoutMs: number;
  /** Starts the process's work and returns how to drain it. */
  start: () => Promise<(deadline: number) => Promise<void>>;
}

/** Signals closer together than this are one request to stop. */
const SAME_KEYPRESS_MS = 1000;

/**
 * The one lifecycle of every process (API, worker, supervisor): a start-up
 * failure is one fatal line and exit 1; the first SIGTERM or SIGINT drains
 * within the deadline (exit 0 when clean, 1 when it failed or had to be
 * forced); a second signal exits at once.
 */
export async function runProcess(options: ProcessOptions): Promise<void> {
  const { logger } = options;
  let drain: ((deadline: number) => Promise<void>) | undefined;
  let stoppingSince: number | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stoppingSince !== undefined) {
      // Ctrl-C reaches a process both from the terminal and forwarded by npm: one keypress, two signals.
      if (Date.now() - stoppingSince < SAME_KEYPRESS_MS) return;
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stoppingSince = Date.now();
    const deadline = Date.now() + options.shutdownTimeoutMs;
    logger.info({ signal, timeoutMs: options.shutdownTimeoutMs }, 'shutting down');
    const force = setTimeout(() => {
      logger.error({ timeoutMs: options.shutdownTimeoutMs }, 'shutdown did not finish in time: forced exit');
      process.exit(1);
    }, options.shutdownTimeoutMs);
    (drain ? drain(deadline) : Promise.resolve()).then(
      () => {
        clearTimeout(force);
        logger.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        clearTimeout(force);
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // Started by the supervisor with an IPC channel: if the supervisor dies, drain as if told to stop.
  if (process.send) process.on('disconnect', () => onSignal('SIGTERM'));
  try {
    drain = await options.start();
  } catch (error) {
    logger.fatal(startupFailure(error));
    process.exit(1);
  }
}

/** A start-up failure worth one line to the operator: names the variable, where it points and why. */
export class StartupError extends Error {}

function startupFailure(error: unknown): string {
  if (error instanceof StartupError) return error.message;
  return `start-up failed: ${error instanceof Error ? error.message : String(error)}`;
}

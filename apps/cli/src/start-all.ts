import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { loadConfigOrExit } from '@app/config';
import { API_ENV, API_NODE_ARGS, prepareDatabase, runProcess } from '@app/lifecycle';
import { createLogger } from '@app/logging';

/** The children force themselves out at SHUTDOWN_TIMEOUT_MS; the supervisor waits a little longer for them. */
const SUPERVISOR_MARGIN_MS = 2000;
/**
 * A crashed child is started again after RESTART_FIRST_DELAY_MS, doubling
 * with each crash up to RESTART_MAX_DELAY_MS, without end: a crash loop
 * (the database gone, a port taken) costs a start every 30 s, not the CPU,
 * and recovers by itself once its cause is gone. A child that ran for
 * HEALTHY_RUN_MS before crashing starts again from the first delay.
 */
const RESTART_FIRST_DELAY_MS = 1000;
const RESTART_MAX_DELAY_MS = 30_000;
const HEALTHY_RUN_MS = 60_000;

const config = loadConfigOrExit();
const logger = createLogger({ level: config.logLevel, format: config.logFormat, service: 'supervisor' });

/** One child process (API or worker), started again when it exits unless the supervisor is stopping. */
class Supervised {
  private child!: ChildProcess;
  private exit!: Promise<number>;
  private nextDelayMs = RESTART_FIRST_DELAY_MS;
  private restarts = 0;
  private restartTimer?: NodeJS.Timeout;
  private stopping = false;

  constructor(
    private readonly name: string,
    private readonly script: string,
    private readonly nodeArgs: readonly string[] = [],
    private readonly env: Readonly<Record<string, string>> = {},
  ) {}

  start(): void {
    const startedAt = Date.now();
    // Its own process group, so Ctrl-C reaches it once, through the supervisor; the IPC channel closing tells it the supervisor died.
    const child = spawn(process.execPath, [...this.nodeArgs, this.script], {
      stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
      env: { ...this.env, ...process.env },
      detached: true,
    });
    this.child = child;
    this.exit = new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
    child.once('error', (error) => logger.error({ child: this.name, err: error }, `${this.name} could not be started`));
    logger.info({ child: this.name, pid: child.pid }, `${this.name} started`);
    child.once('exit', (code, signal) => this.exited(code, signal, Date.now() - startedAt));
  }

  private exited(code: number | null, signal: NodeJS.Signals | null, ranMs: number): void {
    if (this.stopping) return;
    if (ranMs >= HEALTHY_RUN_MS) this.nextDelayMs = RESTART_FIRST_DELAY_MS;
    const delayMs = this.nextDelayMs;
    this.nextDelayMs = Math.min(delayMs * 2, RESTART_MAX_DELAY_MS);
    this.restarts++;
    logger.error(
      { child: this.name, code, signal, ranMs, restartInMs: delayMs, restarts: this.restarts },
      `${this.name} exited unexpectedly (${signal ?? `code ${code}`}); restarting it in ${delayMs} ms`,
    );
    this.restartTimer = setTimeout(() => this.start(), delayMs);
  }

  /** SIGTERM to a running child, and its exit code; a child waiting to be restarted is not started again, and has nothing to drain (0). */
  async stop(): Promise<number> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    if (this.child.exitCode !== null || this.child.signalCode !== null) return 0;
    this.child.kill('SIGTERM');
    return this.exit;
  }
}

/**
 * `npm start`: migrations applied once, then API and worker as two processes
 * (as they deploy). A child that exits unexpectedly is started again with
 * backoff (above), the other one untouched. A signal is passed on to both
 * and the supervisor exits 0 only if both drained cleanly.
 */
void runProcess({
  logger,
  shutdownTimeoutMs: config.shutdownTimeoutMs + SUPERVISOR_MARGIN_MS,
  start: async () => {
    await prepareDatabase(config.database);
    const dist = join(__dirname, '..', '..');
    const main = (name: string) => join(dist, name, 'src', 'main.js');
    const children = [new Supervised('api', main('api'), API_NODE_ARGS, API_ENV), new Supervised('worker', main('worker'))];
    for (const child of children) child.start();
    return async () => {
      const codes = await Promise.all(children.map((child) => child.stop()));
      if (codes.some((code) => code !== 0)) throw new Error(`children exited with ${codes.join(', ')}`);
    };
  },
});

import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { loadConfigOrExit } from '@app/config';
import { prepareDatabase, runProcess } from '@app/lifecycle';
import { createLogger } from '@app/logging';

/** The children force themselves out at SHUTDOWN_TIMEOUT_MS; the supervisor waits a little longer for them. */
const SUPERVISOR_MARGIN_MS = 2000;

const config = loadConfigOrExit();
const logger = createLogger({ level: config.logLevel, format: config.logFormat, service: 'supervisor' });

function exitOf(child: ChildProcess): Promise<number> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  if (child.signalCode !== null) return Promise.resolve(1);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
}

/**
 * `npm start`: migrations applied once, then API and worker as two processes
 * (as they deploy). A signal is passed on to both and the supervisor exits
 * 0 only if both drained cleanly; if either dies, the other is stopped and
 * the supervisor exits 1.
 */
void runProcess({
  logger,
  shutdownTimeoutMs: config.shutdownTimeoutMs + SUPERVISOR_MARGIN_MS,
  start: async () => {
    await prepareDatabase(config.database.ownerUrl);
    const dist = join(__dirname, '..', '..');
    const children = ['api', 'worker'].map((name) => ({
      name,
      // Their own process group, so Ctrl-C reaches them once, through the supervisor; the IPC channel closing
      // tells them the supervisor died.
      child: spawn(process.execPath, [join(dist, name, 'src', 'main.js')], { stdio: ['inherit', 'inherit', 'inherit', 'ipc'], env: process.env, detached: true }),
    }));
    let stopping = false;
    const stopAll = async (): Promise<number[]> => {
      stopping = true;
      for (const { child } of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return Promise.all(children.map(({ child }) => exitOf(child)));
    };
    for (const { name, child } of children) {
      void exitOf(child).then(async (code) => {
        if (stopping) return;
        logger.error({ child: name, code }, `${name} exited unexpectedly (code ${code}); stopping the other process`);
        await stopAll();
        process.exit(1);
      });
    }
    return async () => {
      const codes = await stopAll();
      if (codes.some((code) => code !== 0)) throw new Error(`children exited with ${codes.join(', ')}`);
    };
  },
});

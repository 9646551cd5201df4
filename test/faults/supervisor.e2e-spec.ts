import { execFileSync } from 'node:child_process';
import { awaitSupervised, expectHealthy, exited, logLines, READY_LINE, startSupervisor } from '../support/service';

/** The supervisor's child running `<app>/src/main.js`, by its parent's pid (they share no process group). */
function childPid(supervisorPid: number, app: 'api' | 'worker'): number | undefined {
  const rows = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(supervisorPid)], { encoding: 'utf8' }).trim().split('\n');
  const row = rows.find((r) => r.includes(`${app}/src/main.js`));
  return row ? Number(row.trim().split(/\s+/)[0]) : undefined;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * `npm start`'s supervisor when its API child crashes: the API is started
 * again (the restart logged), the worker is left running, and SIGTERM still
 * stops both cleanly.
 */
describe('faults: the npm start supervisor', () => {
  it('restarts a SIGKILLed API, leaves the worker alone, and exits 0 on SIGTERM', async () => {
    const { supervisor, port, workerPort, db } = await startSupervisor(5000);
    try {
      await awaitSupervised(supervisor, port, workerPort);
      const apiPid = childPid(supervisor.child.pid!, 'api')!;
      const workerPid = childPid(supervisor.child.pid!, 'worker')!;
      expect(apiPid).toBeGreaterThan(0);
      expect(workerPid).toBeGreaterThan(0);

      process.kill(apiPid, 'SIGKILL');
      await supervisor.waitForOutput(/api exited unexpectedly/, 'the supervisor to see the API die');
      expect(alive(apiPid)).toBe(false);
      // The new API's readiness line is the second one.
      await supervisor.waitForOutput(new RegExp(`${READY_LINE.api.source}[\\s\\S]*${READY_LINE.api.source}`), 'a new API');
      await expectHealthy(`http://127.0.0.1:${port}/healthz`, supervisor);
      expect(childPid(supervisor.child.pid!, 'api')).not.toBe(apiPid);

      const restart = logLines(supervisor.output()).find((l) => l.service === 'supervisor' && l.child === 'api' && l.restartInMs !== undefined);
      expect(restart).toMatchObject({ level: 'error', signal: 'SIGKILL', restarts: 1 });
      expect(childPid(supervisor.child.pid!, 'worker')).toBe(workerPid);
      expect((await fetch(`http://127.0.0.1:${workerPort}/readyz`)).ok).toBe(true);

      supervisor.child.kill('SIGTERM');
      await exited(supervisor.child);
      expect(supervisor.child.exitCode).toBe(0);
      expect(alive(workerPid)).toBe(false);
    } finally {
      supervisor.child.kill('SIGKILL');
      await db.drop();
    }
  }, 90_000);
});

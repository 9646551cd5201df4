import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { loadConfig } from '@app/config';
import { ensureDatabase, runMigrations } from '@app/database';

/**
 * `npm start`: API and worker as two processes (as they deploy), migrations
 * applied once first. If either exits, the other is stopped too.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  await ensureDatabase(config.database.ownerUrl);
  await runMigrations(config.database.ownerUrl);
  const dist = join(__dirname, '..', '..');
  const children: ChildProcess[] = ['api', 'worker'].map((name) =>
    spawn(process.execPath, [join(dist, name, 'src', 'main.js')], { stdio: 'inherit', env: process.env }),
  );
  let stopping = false;
  const stop = (code: number) => {
    if (stopping) return;
    stopping = true;
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    process.exitCode = code;
  };
  for (const child of children) child.on('exit', (code) => stop(code ?? 1));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stop(0));
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});

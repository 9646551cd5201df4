import { execFile } from 'node:child_process';
import { appendFileSync, chownSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { freePort, waitFor } from './service';

const run = promisify(execFile);

/**
 * A throwaway PostgreSQL cluster on a private port and temporary directory,
 * for fault tests that stop, crash and restart the server without touching
 * the shared one. The server refuses to run as root, so as root every
 * command runs as the `postgres` user.
 */
export interface PostgresCluster {
  port: number;
  /** The owner's URL of database `name` (the service creates and migrates it). */
  url: (name: string) => string;
  /** A one-off statement as the superuser, on database `postgres` unless named. */
  sql: (text: string, database?: string) => Promise<Array<Record<string, any>>>;
  start: () => Promise<void>;
  /** Fast shutdown: sessions are ended (57P01), the server stops cleanly. */
  stopFast: () => Promise<void>;
  /** SIGKILL of the postmaster: its backends die with it, the next start runs crash recovery. */
  crash: () => Promise<void>;
  /** The server's log so far. */
  log: () => string;
  destroy: () => Promise<void>;
}

async function asPostgres(command: string, args: string[]): Promise<void> {
  if (process.getuid?.() === 0) await run('runuser', ['-u', 'postgres', '--', command, ...args]);
  else await run(command, args);
}

/** With `standbyOf`, the cluster is a streaming standby of that one (pg_basebackup -R), read-only, replaying its WAL. */
export async function startPostgresCluster(settings: Record<string, string> = {}, standbyOf?: PostgresCluster): Promise<PostgresCluster> {
  const bindir = (await run('pg_config', ['--bindir'])).stdout.trim();
  const dir = mkdtempSync(join(tmpdir(), 'sst-pg-'));
  if (process.getuid?.() === 0) {
    const uid = Number((await run('id', ['-u', 'postgres'])).stdout);
    const gid = Number((await run('id', ['-g', 'postgres'])).stdout);
    chownSync(dir, uid, gid);
  }
  const data = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  const port = await freePort();
  if (standbyOf) {
    await asPostgres(join(bindir, 'pg_basebackup'), ['-D', data, '-h', '127.0.0.1', '-p', String(standbyOf.port), '-U', 'postgres', '-R', '-X', 'stream', '--no-sync']);
  } else {
    await asPostgres(join(bindir, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  }
  const options = {
    port: String(port),
    listen_addresses: "'127.0.0.1'",
    unix_socket_directories: `'${dir}'`,
    // Durability against an OS crash is not what these tests exercise; a postmaster crash keeps the page cache.
    fsync: 'off',
    full_page_writes: 'off',
    ...settings,
  };
  appendFileSync(join(data, 'postgresql.conf'), Object.entries(options).map(([k, v]) => `${k} = ${v}\n`).join(''));
  const url = (name: string) => `postgres://postgres@127.0.0.1:${port}/${name}`;
  const sql = async (text: string, database = 'postgres') => {
    const client = new Client({ connectionString: url(database) });
    await client.connect();
    try {
      return (await client.query(text)).rows;
    } finally {
      await client.end();
    }
  };
  const pgCtl = (args: string[]) => asPostgres(join(bindir, 'pg_ctl'), ['-D', data, ...args]);
  const start = async () => {
    // After a crash the orphaned backends need a moment to notice and release shared memory.
    await waitFor(
      async () => {
        await pgCtl(['-l', logFile, '-w', '-t', '30', 'start']);
        return true;
      },
      'private PostgreSQL start',
      30_000,
    );
  };
  await start();
  return {
    port,
    url,
    sql,
    start,
    stopFast: () => pgCtl(['-m', 'fast', '-w', 'stop']),
    crash: async () => {
      const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      process.kill(pid, 'SIGKILL');
      await waitFor(async () => !alive(pid), 'postmaster exit', 10_000);
    },
    log: () => readFileSync(logFile, 'utf8'),
    destroy: async () => {
      await pgCtl(['-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

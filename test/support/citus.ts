import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';

const run = promisify(execFile);
const SCRIPT = join(__dirname, '..', '..', 'scripts', 'citus-cluster.sh');

/** A coordinator and workers started by scripts/citus-cluster.sh on private ports, for one spec file. */
export interface CitusCluster {
  coordinatorPort: number;
  workerPorts: () => number[];
  /** The owner's URL of a database created on every node, with the extension and the workers registered. */
  createDatabase: (name: string) => Promise<string>;
  /** Starts one more worker and registers it in every Citus database; returns its port. */
  addWorker: () => Promise<number>;
  /** A one-off statement as the superuser on one node (the coordinator unless a port is given). */
  sql: (database: string, text: string, params?: unknown[], port?: number) => Promise<Array<Record<string, any>>>;
  stop: () => Promise<void>;
}

const script = async (...args: string[]) => (await run(SCRIPT, args, { maxBuffer: 1 << 20 })).stdout;

export async function startCitusCluster(): Promise<CitusCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'sst-citus-'));
  const env = await script('start', dir);
  const coordinatorPort = Number(/CITUS_COORDINATOR_PORT=(\d+)/.exec(env)![1]);
  let workers = /CITUS_WORKER_PORTS="([\d ]+)"/.exec(env)![1].split(' ').map(Number);
  const url = (database: string, port = coordinatorPort) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  return {
    coordinatorPort,
    workerPorts: () => workers,
    createDatabase: async (name) => {
      await script('create-database', dir, name);
      return url(name);
    },
    addWorker: async () => {
      const port = Number((await script('add-worker', dir)).trim());
      workers = [...workers, port];
      return port;
    },
    sql: async (database, text, params = [], port = coordinatorPort) => {
      const client = new Client({ connectionString: url(database, port) });
      await client.connect();
      try {
        return (await client.query(text, params)).rows;
      } finally {
        await client.end();
      }
    },
    stop: () => script('stop', dir).then(() => undefined),
  };
}

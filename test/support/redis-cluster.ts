import { ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { exited, freePort, waitFor } from './service';

const run = promisify(execFile);

/** A throwaway Redis Cluster of three masters on private ports, for specs that run the service in cluster mode. */
export interface RedisCluster {
  ports: number[];
  /** The REDIS_CLUSTER_NODES value. */
  nodes: string;
  /** Kills the servers and removes their directory. */
  stop: () => Promise<void>;
}

async function cli(port: number, ...args: string[]): Promise<string> {
  return (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args])).stdout;
}

export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'sst-redis-cluster-'));
  const ports: number[] = [];
  const children: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(
      children.map(async (child) => {
        child.kill('SIGKILL');
        await exited(child);
      }),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters; i++) {
      // The cluster bus defaults to port + 10000, which may be taken or beyond 65535: it gets a free port of its own.
      const [port, busPort] = [await freePort(), await freePort()];
      ports.push(port);
      const args = ['--port', String(port), '--cluster-port', String(busPort), '--bind', '127.0.0.1', '--cluster-enabled', 'yes'];
      args.push('--cluster-config-file', join(dir, `nodes-${port}.conf`), '--dir', dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no');
      children.push(spawn('redis-server', args, { stdio: 'ignore' }));
    }
    for (const port of ports) await waitFor(async () => (await cli(port, 'ping')).trim() === 'PONG', `redis-server on ${port}`);
    await run('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes']);
    for (const port of ports) await waitFor(async () => (await cli(port, 'cluster', 'info')).includes('cluster_state:ok'), `cluster state on ${port}`);
  } catch (error) {
    await stop();
    throw error;
  }
  return { ports, nodes: ports.map((p) => `127.0.0.1:${p}`).join(','), stop };
}

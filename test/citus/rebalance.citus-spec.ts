import { randomBytes } from 'node:crypto';
import { Client, userMessage } from '../support/client';
import { CitusCluster, startCitusCluster } from '../support/citus';
import { ADMIN_TOKEN, REDIS_URL } from '../support/env';
import { freePort, ProcessHandle, startProcess, waitFor } from '../support/service';

const DB = 'session_store';
const WRITERS = 8;

/**
 * A third worker joins a running Citus cluster and the shards are
 * rebalanced onto it while agents keep appending through two APIs. Every
 * acknowledged event is in the log once, each session's seqs stay
 * gap-free, and appends go on succeeding; a 503 with Retry-After (the
 * client then retries the same event id) is allowed and counted.
 */
describe('Citus: rebalancing onto a new worker under an append load', () => {
  let cluster: CitusCluster;
  const processes: ProcessHandle[] = [];
  let apis: Client[];

  beforeAll(async () => {
    cluster = await startCitusCluster();
    const env = {
      NODE_ENV: 'test',
      DATABASE_URL: await cluster.createDatabase(DB),
      DATABASE_DISTRIBUTION: 'citus',
      CITUS_SHARD_COUNT: '8',
      REDIS_URL,
      QUEUE_PREFIX: `sst-rebalance-${randomBytes(4).toString('hex')}`,
      ADMIN_TOKEN,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
    };
    apis = [];
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      const api = startProcess('api', { ...env, PORT: String(port) });
      processes.push(api);
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 'API /healthz', 60_000, api);
      apis.push(new Client(`http://127.0.0.1:${port}`));
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await cluster?.stop();
  });

  it('moves shards to the third worker while appends continue: nothing acknowledged lost or duplicated', async () => {
    // One tenant and session per writer, so their shards spread over the shard groups.
    const writers: Array<{ key: string; tenantId: string; sessionId: string; acknowledged: string[] }> = [];
    for (let i = 0; i < WRITERS; i++) {
      const tenant = await apis[0].createTenant(`rebalance-${i}`);
      await apis[0].createSession(tenant.key, { id: `agent-${i}` });
      writers.push({ key: tenant.key, tenantId: tenant.tenantId, sessionId: `agent-${i}`, acknowledged: [] as string[] });
    }
    const unavailable: number[] = [];
    const unexpected: string[] = [];
    let stop = false;
    const write = async (w: (typeof writers)[number], index: number) => {
      const client = apis[index % 2];
      let head = 1;
      for (let n = 0; !stop; n++) {
        const id = `${w.sessionId}-${n}`;
        // The same event id until it is acknowledged: a retry of an append that did commit returns the original.
        for (;;) {
          const res = await client.append(w.key, w.sessionId, { expectedSeq: head, events: [userMessage(`event ${n}`, id)] });
          if (res.status === 201) {
            w.acknowledged.push(id);
            head = res.body.headSeq;
            break;
          }
          if (res.status === 503 && res.headers.get('retry-after')) {
            unavailable.push(Number(res.headers.get('retry-after')));
            await new Promise((r) => setTimeout(r, 100));
            continue;
          }
          unexpected.push(`${res.status} ${res.text}`);
          return;
        }
      }
    };
    const load = Promise.all(writers.map((w, i) => write(w, i)));
    const acknowledgedNow = () => writers.reduce((n, w) => n + w.acknowledged.length, 0);
    await waitFor(async () => acknowledgedNow() >= 50, 'the load under way', 30_000);

    const newWorker = await cluster.addWorker();
    const beforeMove = acknowledgedNow();
    // block_writes: each shard group's writes wait while it is copied (small here). The default, logical
    // replication, did not finish under this load on this machine (docs/scaling.md).
    await cluster.sql(DB, `SELECT rebalance_table_shards(shard_transfer_mode => 'block_writes')`);
    const duringMove = acknowledgedNow() - beforeMove;
    // More appends after the move, some of them to the shards that moved.
    const afterMove = acknowledgedNow();
    await waitFor(async () => acknowledgedNow() >= afterMove + 50, 'appends after the move', 30_000);
    stop = true;
    await load;

    expect(unexpected).toEqual([]);
    const placed = await cluster.sql(DB, `SELECT count(*)::int AS n FROM citus_shards WHERE nodeport = $1`, [newWorker]);
    expect(placed[0].n).toBeGreaterThan(0);
    const moved: string[] = [];
    for (const w of writers) {
      const [row] = await cluster.sql(
        DB,
        `SELECT nodeport FROM citus_shards WHERE table_name = 'sessions'::regclass AND shardid = get_shard_id_for_distribution_column('sessions', $1::uuid)`,
        [w.tenantId],
      );
      if (row.nodeport === newWorker) moved.push(w.sessionId);
      const events = await apis[1].allEvents(w.key, w.sessionId);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      const ids = events.filter((e) => e.type === 'message.added').map((e) => e.id);
      expect(ids).toEqual(w.acknowledged);
    }
    expect(moved.length).toBeGreaterThan(0);
    expect(duringMove).toBeGreaterThan(0);
    // Reported for the record; a brief 503 with Retry-After is allowed.
    process.stdout.write(
      `rebalance: ${acknowledgedNow()} appends acknowledged, ${duringMove} while shards moved, ${unavailable.length} answered 503 with Retry-After, ${moved.length}/${WRITERS} sessions now on the new worker\n`,
    );
  });
});

import { ConfigError, loadConfig } from './load-config';

describe('loadConfig: Redis', () => {
  it('a single server keeps QUEUE_PREFIX as the BullMQ prefix', () => {
    expect(loadConfig({ QUEUE_PREFIX: 'acme' }, false).redis).toEqual({ url: 'redis://127.0.0.1:6379', clusterNodes: null, prefix: 'acme', namespace: 'acme' });
  });

  it('REDIS_CLUSTER_NODES gives the seed nodes and a hash-tagged BullMQ prefix', () => {
    const { redis } = loadConfig({ QUEUE_PREFIX: 'acme', REDIS_CLUSTER_NODES: 'redis-a:7000,10.0.0.2:7001' }, false);
    expect(redis).toMatchObject({ clusterNodes: [{ host: 'redis-a', port: 7000 }, { host: '10.0.0.2', port: 7001 }], prefix: '{acme}', namespace: 'acme' });
  });

  it.each(['redis-a', 'redis-a:7000,', 'redis://a:7000', 'a:70000'])('refuses REDIS_CLUSTER_NODES=%s', (value) => {
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: value }, false)).toThrow(ConfigError);
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: value }, false)).toThrow(/REDIS_CLUSTER_NODES/);
  });
});

describe('loadConfig: secrets', () => {
  it('in production, refuses an ADMIN_TOKEN under 32 characters, naming it', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', ADMIN_TOKEN: 'a'.repeat(31) }, false)).toThrow(/ADMIN_TOKEN must be at least 32 characters in production/);
    expect(loadConfig({ NODE_ENV: 'production', ADMIN_TOKEN: 'a'.repeat(32) }, false).adminToken).toBe('a'.repeat(32));
    expect(loadConfig({ NODE_ENV: 'test', ADMIN_TOKEN: 'a'.repeat(16) }, false).adminToken).toBe('a'.repeat(16));
  });

  it('METRICS_TOKEN is optional', () => {
    expect(loadConfig({}, false).metricsToken).toBeNull();
    expect(loadConfig({ METRICS_TOKEN: 'm'.repeat(16) }, false).metricsToken).toBe('m'.repeat(16));
    expect(() => loadConfig({ METRICS_TOKEN: 'short' }, false)).toThrow(/METRICS_TOKEN/);
  });
});

describe('loadConfig: database distribution', () => {
  it('is plain PostgreSQL unless DATABASE_DISTRIBUTION=citus', () => {
    expect(loadConfig({}, false).database.citus).toBeNull();
    expect(loadConfig({ DATABASE_DISTRIBUTION: 'citus' }, false).database.citus).toEqual({ shardCount: 32 });
    expect(loadConfig({ DATABASE_DISTRIBUTION: 'citus', CITUS_SHARD_COUNT: '8' }, false).database.citus).toEqual({ shardCount: 8 });
  });

  it.each([{ DATABASE_DISTRIBUTION: 'cockroach' }, { CITUS_SHARD_COUNT: '0' }, { CITUS_SHARD_COUNT: 'many' }])('refuses %j, naming the variable', (env) => {
    expect(() => loadConfig(env, false)).toThrow(new RegExp(Object.keys(env)[0]));
  });
});

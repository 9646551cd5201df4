import { Client } from '../support/client';
import { startFlood } from '../support/fault-load';
import { startService, TestService } from '../support/service';

/**
 * A tenant flooding appends over 64 connections, from its own process (so
 * its client work does not share this process's event loop), gets 429s
 * with Retry-After and the RateLimit headers, while a second tenant's
 * appends keep succeeding beside it (their latency, alone and beside, is
 * printed; bench/fairness measures the ratio, docs/benchmarks.md).
 * The victim paces itself below the limit. The flooder's refusals come
 * from the API's memory (no Redis, no database), and its admitted appends
 * hold at most TENANT_MAX_CONNECTIONS of the pool.
 */
describe('faults: a flooding tenant', () => {
  const RATE = 100;
  const SAMPLES = 300;
  const SLICES = 5;
  let service: TestService;
  let client: Client;
  let victim: string;
  let flooder: string;

  beforeAll(async () => {
    service = await startService({ worker: false, env: { TENANT_REQUEST_RATE: String(RATE) } });
    client = new Client(service.baseUrl);
    victim = (await client.createTenant('victim')).key;
    flooder = (await client.createTenant('flooder')).key;
    await client.createSession(victim, { id: 'victim', model: 'gpt-4.1' });
    await client.createSession(flooder, { id: 'flood', model: 'gpt-4.1' });
  });
  afterAll(async () => {
    await service?.stop();
  });

  const victimLatencies = async (count: number) => {
    const samples: number[] = [];
    for (let i = 0; i < count; i++) {
      const t0 = performance.now();
      const res = await client.append(victim, 'victim', { events: [{ type: 'message.added', data: { message: { role: 'user', parts: [{ type: 'text', text: `v${i}` }] } } }] });
      samples.push(performance.now() - t0);
      expect(res.status).toBe(201);
      await new Promise((r) => setTimeout(r, 20));
    }
    return samples;
  };
  const p99 = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.ceil(samples.length * 0.99) - 1];

  it('refuses the flooder with 429 and RateLimit headers; the other tenant’s appends all succeed beside it', async () => {
    await victimLatencies(30); // warm-up
    // Alone and beside alternate in slices, so other load on the host (other specs) weighs on both alike.
    const alone: number[] = [];
    const beside: number[] = [];
    const reports = [];
    for (let slice = 0; slice < SLICES; slice++) {
      alone.push(...(await victimLatencies(SAMPLES / SLICES)));
      const flood = await startFlood(service.baseUrl, flooder, 'flood', 64);
      beside.push(...(await victimLatencies(SAMPLES / SLICES)));
      reports.push(await flood.stop());
    }
    const statuses: Record<string, number> = {};
    for (const r of reports) for (const [status, n] of Object.entries(r.statuses)) statuses[status] = (statuses[status] ?? 0) + n;
    const limited = reports.find((r) => r.limited)?.limited;

    console.log(`victim p99 alone ${p99(alone).toFixed(1)} ms, beside the flood ${p99(beside).toFixed(1)} ms (${(p99(beside) / p99(alone)).toFixed(2)}x); flooder ${JSON.stringify(statuses)}`);
    expect(reports.flatMap((r) => r.errors)).toEqual([]);
    expect(Object.keys(statuses).sort()).toEqual(['201', '429']);
    expect(limited!.body).toMatchObject({ status: 429, code: 'tenant_rate_limited' });
    expect(Number(limited!.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited!.headers['ratelimit-policy']).toMatch(new RegExp(`^"requests";q=${RATE};w=1(, |$)`));
    expect(limited!.headers['ratelimit']).toMatch(/^"requests";r=0;t=\d+$/);
    // The latency ratio is printed above, not asserted: timings belong in bench/fairness, which measures
    // it apart from other specs' load (docs/benchmarks.md, "Fairness between tenants": 1.3-1.7x). Here it
    // came within 1% of 3x on a slow run of the whole suite, for no fault of the service.
  });
});

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client } from './support/client';
import { startService, TestService } from './support/service';

/**
 * The official LangGraph checkpointer validation suite
 * (@langchain/langgraph-checkpoint-validation), unchanged, run in vitest as
 * its CLI runs it (test/langgraph/validation.test.mjs says why not by the CLI)
 * against @session-store/langgraph on the real service: put, putWrites,
 * getTuple, list (every combination of thread, namespace, limit, before and
 * filter) and deleteThread.
 */

const ROOT = join(__dirname, '..');
const VITEST = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
const SUITE = join(__dirname, 'langgraph');

function run(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [VITEST, 'run', '--globals', '--root', SUITE], {
      cwd: SUITE,
      env: { ...process.env, ...env, NO_COLOR: '1', FORCE_COLOR: '0', CI: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('LangGraph checkpointer validation suite', () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startService({ worker: false });
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('passes every test of the official suite', async () => {
    const { key } = await new Client(service.baseUrl).createTenant('langgraph');
    const { code, output } = await run({ SESSION_STORE_URL: service.baseUrl, SESSION_STORE_KEY: key });
    const summary = /Tests\s+(?:(\d+) failed \| )?(\d+) passed(?: \| (\d+) skipped)? \((\d+)\)/.exec(output);
    if (code !== 0 || !summary) throw new Error(`the validation suite exited ${code}\n${output.slice(-20000)}`);
    const [, failed, passed, skipped, total] = summary;
    expect({ failed, skipped }).toEqual({ failed: undefined, skipped: undefined });
    // 648 list combinations and the put, putWrites, getTuple, deleteThread and pending-sends tests.
    expect(Number(passed)).toBe(Number(total));
    expect(Number(total)).toBeGreaterThan(700);
  });
});

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_TOKEN } from './support/env';
import { bashBlocks, readmeScript } from './support/readme-blocks';
import { startService, TestService } from './support/service';

/**
 * The README is executable: its runnable ```bash blocks, in order,
 * as one `set -euo pipefail` script against a freshly started API and worker,
 * exactly as a reader pastes them after `npm start` (BASE and ADMIN_TOKEN
 * point them at this service). An example that drifts from the code fails
 * here: a non-zero exit, an unexpected problem+json, a capture that came back
 * empty, or an output the README promises that is missing.
 */

const README = join(__dirname, '..', 'README.md');
const SCRIPT_TIMEOUT_MS = 90_000;

/** The problem+json answers the README shows on purpose: a stale expectedSeq, and the request-id example. */
const EXPECTED_PROBLEMS = ['version_conflict', 'session_not_found'];

function run(script: string, cwd: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    writeFileSync(join(cwd, 'readme.sh'), script);
    const child = spawn('bash', ['readme.sh'], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), SCRIPT_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('README examples', () => {
  const blocks = bashBlocks(readFileSync(README, 'utf8'));
  const { script, captured } = readmeScript(blocks);
  let service: TestService;
  let scratch: string;

  beforeAll(async () => {
    for (const tool of ['curl', 'jq']) {
      if (spawnSync('bash', ['-c', `command -v ${tool}`]).status !== 0) throw new Error(`the README's examples need ${tool}; install it (apt-get install ${tool})`);
    }
    scratch = mkdtempSync(join(tmpdir(), 'readme-'));
    service = await startService();
  });
  afterAll(async () => {
    await service?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('marks only install, start and configuration blocks as skipped, and runs the rest against BASE', () => {
    const skipped = blocks.filter((b) => b.skipped);
    expect(skipped.map((b) => b.code).join('\n')).toMatch(/npm ci && npm start/);
    // A skipped block that talks to the API would be an example hidden from this test.
    expect(skipped.filter((b) => b.code.includes('$BASE'))).toEqual([]);
    expect(blocks.filter((b) => !b.skipped).length).toBeGreaterThanOrEqual(10);
    // The only address in the runnable examples is BASE's default.
    expect(script.match(/(127\.0\.0\.1|localhost):\d+/g)).toEqual(['127.0.0.1:3000']);
  });

  it('runs every example in order against a fresh service', async () => {
    // TMPDIR: the examples' `mktemp -d` scratch files land in this test's directory.
    const { code, stdout, stderr } = await run(script, scratch, { BASE: service.baseUrl, ADMIN_TOKEN, TMPDIR: scratch });
    const tail = `\n--- stderr\n${stderr.slice(-4000)}\n--- stdout (end)\n${stdout.slice(-4000)}`;
    if (code !== 0) throw new Error(`the README script exited ${code}${tail}`);

    // Every captured id is real.
    const values = Object.fromEntries([...stdout.matchAll(/^readme-var ([A-Z0-9_]+)=(.*)$/gm)].map((m) => [m[1], m[2]]));
    expect(Object.keys(values).sort()).toEqual([...captured].sort());
    for (const [name, value] of Object.entries(values)) expect({ name, value }).toEqual({ name, value: expect.stringMatching(/^(?!null$)\S+$/) });

    // No problem+json other than the ones shown on purpose, each once.
    const problems = [...stdout.matchAll(/"type":"https:\/\/session-store\.dev\/problems\/([a-z_]+)"/g)].map((m) => m[1]);
    expect(problems.sort()).toEqual([...EXPECTED_PROBLEMS].sort());

    // What the README says the examples print.
    for (const promised of [
      '{"status":"ok","postgres":"ok","redis":"ok"}',
      '{"headSeq":2,"events":[{"id":"msg-1","seq":2}]}\n{"headSeq":2,"events":[{"id":"msg-1","seq":2}]}',
      '"code":"version_conflict","detail":"expectedSeq 1 does not match the head 2"',
      '"requestId":"trace-42"',
      // The context example: the user turn, the tool call and then its result.
      '"content": "Run the tests"',
      '"tool_call_id": "c1"',
      '"content": "2 passed"',
      '{"type":"function_call_output","call_id":"c1","output":"2 passed"}',
      '{"type":"tool_result","tool_use_id":"c1","content":"2 passed"}',
      '"lines":"100000\\tINFO step 100000: status=503',
      '"partial":{"reason":"matches"}',
      'identical',
      '(5 matches for /ERROR/ in 200000 lines)',
      '## Goal\n- Run the tests',
      '"status":"completed"',
      '"kinds":[null,"compaction_retain","compaction_summary"]',
      '"prune":{"status":"pruned"',
      '"callIds":["s1","s2"]',
      '{"tool_call_id":"s1","content":"[Old tool result content cleared; ref=out_',
      '"prune":"nothing"}',
      '{"prune":"disabled","archive":"disabled"}',
    ]) {
      if (!stdout.includes(promised)) throw new Error(`the README's examples no longer print ${JSON.stringify(promised)}${tail}`);
    }
  });
});

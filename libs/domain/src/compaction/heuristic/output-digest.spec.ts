/**
 * Given a tool output, when it is digested (whole or chunk by chunk), then
 * its error, exception, failure and exit-code lines are found wherever they
 * are, each with the nearest file:line, in one linear pass.
 */
import { digestToolOutput, locationIn, ToolOutputScanner } from './output-digest';

const filler = (lines: number) => Array.from({ length: lines }, (_, i) => `INFO step ${i} completed`).join('\n');

describe('digestToolOutput', () => {
  it('finds error lines anywhere, with the location on the same line or the nearest one around', () => {
    // given a compiler diagnostic, a Node stack, a Python traceback and a Go panic
    const output = [
      filler(50),
      'src/app.ts(12,5): error TS2304: Cannot find name \'foo\'.',
      'lib/util.ts:40:3 - error TS2322: Type \'string\' is not assignable to type \'number\'.',
      filler(50),
      "TypeError: Cannot read properties of undefined (reading 'id')",
      '    at handler (src/routes/users.ts:88:17)',
      '    at Layer.handle (node_modules/express/lib/router/layer.js:95:5)',
      filler(50),
      'Traceback (most recent call last):',
      '  File "app/jobs/sync.py", line 41, in run',
      'KeyError: \'tenant_id\'',
      filler(50),
      'panic: runtime error: index out of range [3] with length 3',
      'goroutine 1 [running]:',
      'main.main()',
      '\t/home/ci/src/cmd/server/main.go:27 +0x1d',
    ].join('\n');
    // when
    const digest = digestToolOutput(output);
    // then
    const byText = Object.fromEntries(digest.errors.map((error) => [error.text, error.location]));
    expect(byText["lib/util.ts:40:3 - error TS2322: Type 'string' is not assignable to type 'number'."]).toBe('lib/util.ts:40:3');
    expect(byText["TypeError: Cannot read properties of undefined (reading 'id')"]).toBe('src/routes/users.ts:88:17');
    expect(byText["KeyError: 'tenant_id'"]).toBe('app/jobs/sync.py:41');
    expect(byText['panic: runtime error: index out of range [3] with length 3']).toBe('/home/ci/src/cmd/server/main.go:27');
    expect(Object.keys(byText)).toContain("src/app.ts(12,5): error TS2304: Cannot find name 'foo'.");
  });

  it('reads exit codes in their usual spellings; the last one wins', () => {
    expect(digestToolOutput('building\nexit code: 2').exitCode).toBe(2);
    expect(digestToolOutput('Process exited with code 137').exitCode).toBe(137);
    expect(digestToolOutput("subprocess.CalledProcessError: Command 'make' returned non-zero exit status 2.").exitCode).toBe(2);
    expect(digestToolOutput('{"stdout":"","exit_code": 1}').exitCode).toBe(1);
    expect(digestToolOutput('run 1 [exit 3]\nrun 2\nExit status: 0').exitCode).toBe(0);
    expect(digestToolOutput('all good').exitCode).toBeNull();
  });

  it('names the files a diff touches (git, unified, apply_patch)', () => {
    const output = ['diff --git a/src/a.ts b/src/a.ts', '--- a/src/a.ts', '+++ b/src/a.ts', '*** Update File: docs/b.md', '*** Add File: c/new.go'].join('\n');
    expect(digestToolOutput(output).patched).toEqual(['src/a.ts', 'docs/b.md', 'c/new.go']);
  });

  it('does not take a clean summary for an error, and keeps warnings apart', () => {
    const digest = digestToolOutput('Found 0 errors.\nTests: 12 passed, 0 failed\nWARN deprecated option --legacy\nerrors: 0');
    expect(digest.errors).toEqual([]);
    expect(digest.notable).toEqual(['WARN deprecated option --legacy']);
  });

  it('keeps the first and the last distinct errors of a long run, counting them all', () => {
    const output = Array.from({ length: 500 }, (_, i) => `FAIL test/case_${i % 20}.spec.ts > case ${i}`).join('\n');
    const digest = digestToolOutput(`${output}\nError: the very last failure`);
    expect(digest.errorCount).toBe(501);
    expect(digest.errors.at(-1)?.text).toBe('Error: the very last failure');
    expect(digest.errors.length).toBeLessThanOrEqual(12);
    expect(digest.errors[0].text).toBe('FAIL test/case_0.spec.ts > case 0');
  });

  it('gives the same digest whole or streamed in chunks cut anywhere', () => {
    const output = `${filler(300)}\nError: boom at src/x.ts:3\n${filler(10)}\nexit code: 1`;
    const scanner = new ToolOutputScanner();
    for (let at = 0; at < output.length; at += 37) scanner.push(output.slice(at, at + 37));
    expect(scanner.end()).toEqual(digestToolOutput(output));
  });

  it('stays linear on 1 MB outputs, pathological lines included', () => {
    const cases = {
      lines: `${filler(40_000)}\nFATAL: out of disk at /var/lib/data/segment.db:9`,
      oneLine: `${'a:b.c:'.repeat(200_000)}`,
      dots: `${'x.'.repeat(600_000)}\nError: after the dots`,
    };
    for (const [name, output] of Object.entries(cases)) {
      const started = performance.now();
      const digest = digestToolOutput(output);
      expect({ name, ms: performance.now() - started < 1_500 }).toEqual({ name, ms: true });
      if (name !== 'oneLine') expect(digest.errors.at(-1)?.text).toMatch(/FATAL: out of disk|Error: after the dots/);
    }
  });
});

describe('digestToolOutput: failing tests and salient lines', () => {
  /** 5,000 lines of a service log, ids, times and counts changing on every line: about 200 KB of noise. */
  const noise = (from: number, lines: number) =>
    Array.from(
      { length: lines },
      (_, i) => `2031-02-0${(i % 9) + 1}T10:${String(i % 60).padStart(2, '0')}:07Z INFO worker-${i % 7} handled order ${from + i} for cust_${(from + i) * 7919} in ${i % 50} ms (trace ${(from + i).toString(16).padStart(8, 'a')}c0ffee1)`,
    ).join('\n');

  it('keeps each failing test by its name, whatever the runner', () => {
    // given the failure lines of jest, pytest, go, rspec and mocha among passing ones
    const output = [
      'PASS src/cart.spec.ts',
      '  ✓ adds an item (3 ms)',
      '  ✕ rejects an expired voucher (12 ms)',
      '  ● Checkout › charges the card once',
      'FAILED tests/test_pool.py::test_pool_resize - assert 4 == 8',
      '--- FAIL: TestRetryBudget (0.01s)',
      'rspec ./spec/models/invoice_spec.rb:42 # Invoice totals include tax',
      '  7 passing (40ms)',
      '  1 failing',
      '  1) Basket merge keeps the older quantity:',
    ].join('\n');
    // when
    const texts = digestToolOutput(output).errors.map((error) => error.text);
    // then
    expect(texts).toEqual([
      '✕ rejects an expired voucher (12 ms)',
      '● Checkout › charges the card once',
      'FAILED tests/test_pool.py::test_pool_resize - assert 4 == 8',
      '--- FAIL: TestRetryBudget (0.01s)',
      'rspec ./spec/models/invoice_spec.rb:42 # Invoice totals include tax',
      '1) Basket merge keeps the older quantity:',
    ]);
  });

  it('keeps a fact that appears once in the middle of a 200 KB log: an error, a setting, a commit hash, an id', () => {
    // given
    const output = [
      noise(0, 2_500),
      'ERROR replica lag exceeded on shard 3',
      'max_connections = 200',
      'POOL_SIZE=32',
      'HEAD is now at 3fa9c1e Tune the pool',
      'request 5b0c2f7e-93d1-4c1a-9a5e-0e2b6f6d7a41 rejected',
      noise(2_500, 2_500),
    ].join('\n');
    expect(output.length).toBeGreaterThan(200_000);
    // when
    const digest = digestToolOutput(output);
    // then the noise repeats its shape and is not salient; every fact is kept
    expect(digest.errors.map((error) => error.text)).toEqual(['ERROR replica lag exceeded on shard 3']);
    expect(digest.salient).toEqual([
      'max_connections = 200',
      'POOL_SIZE=32',
      'HEAD is now at 3fa9c1e Tune the pool',
      'request 5b0c2f7e-93d1-4c1a-9a5e-0e2b6f6d7a41 rejected',
    ]);
  });

  it('does not let 500 distinct settings flood the record: at most 12 lines, one per key, identities before settings', () => {
    // given 500 settings, a key set twice, and one commit line at the end
    const settings = Array.from({ length: 500 }, (_, i) => `option_${String.fromCharCode(97 + (i % 26))}${Math.floor(i / 26)}: ${i}`);
    const output = ['mode: fast', 'mode: safe', ...settings, 'commit 9c2e4b7d1a'].join('\n');
    // when
    const { salient } = digestToolOutput(output);
    // then
    expect(salient).toHaveLength(12);
    expect(salient).toContain('commit 9c2e4b7d1a');
    expect(salient.filter((line) => line.startsWith('mode:')).length).toBeLessThanOrEqual(1);
  });

  it('takes a key dumped again and again for noise, and a setting named by words seen nowhere else for signal', () => {
    // given the env of 30 containers, the same 12 keys in each, and one container with a key of its own; then a config file
    const env = Array.from({ length: 30 }, (_, pod) =>
      [`== pod/api-${pod}`, ...['DB_HOST', 'DB_PORT', 'CACHE_URL', 'QUEUE_NAME', 'API_LEVEL', 'S3_BUCKET'].map((key, i) => `${key}=value-${(pod * 7 + i) % 5}`), ...(pod === 17 ? ['RETRY_JITTER_MS=250'] : [])].join('\n'),
    ).join('\n');
    const config = Array.from({ length: 40 }, (_, i) => `${['wal', 'log', 'vacuum', 'seq'][i % 4]}_${['delay', 'size', 'cost', 'level', 'limit'][i % 5]} = ${i}   # range 0-100`).join('\n');
    // when
    const { salient } = digestToolOutput(`${env}\n${config.replace('seq_level = 3', 'listen_backlog = 511')}`);
    // then
    expect(salient).toContain('RETRY_JITTER_MS=250');
    expect(salient.filter((line) => /^listen_backlog = 511 /.test(line))).toHaveLength(1);
    expect(salient.some((line) => line.startsWith('DB_HOST'))).toBe(false);
  });

  it("takes the ids a logger prints on every line for noise, whatever the message, and keeps an id printed once", () => {
    const verbs = ['load', 'save', 'sync', 'merge', 'scan', 'build'];
    const log = Array.from({ length: 300 }, (_, i) => `2026-03-04T08:${String(i % 60).padStart(2, '0')}:00Z INFO export: ${verbs[i % 6]} ${verbs[(i * 5) % 6]}s id=${(0xa1b2c3d4e5 + i * 7919).toString(16)} took ${i % 90}ms`);
    log.splice(150, 0, 'HEAD is now at 7c41e9a Pin the exporter');
    expect(digestToolOutput(log.join('\n')).salient).toEqual(['HEAD is now at 7c41e9a Pin the exporter']);
  });

  it('reads a name holding an error word as a name: a setting like seq_timeout is no error line', () => {
    const { errors, salient } = digestToolOutput('statement_timeout = 30s\nMAX_ERRORS=3\nerror: connection reset');
    expect(errors.map((error) => error.text)).toEqual(['error: connection reset']);
    expect(salient).toEqual(['statement_timeout = 30s', 'MAX_ERRORS=3']);
  });

  it('takes a shape repeated many times for noise, even when every line holds a hash', () => {
    const output = Array.from({ length: 1_000 }, (_, i) => `commit ${(0xa1b2c3d + i).toString(16)}`).join('\n');
    expect(digestToolOutput(`${output}\nHEAD is now at 7e1d2c3 Release`).salient).toEqual(['HEAD is now at 7e1d2c3 Release']);
  });

  it('streams salient lines the same as the whole text', () => {
    const output = `${noise(0, 12_000)}\nDATABASE_URL=postgres://db.internal:5432/app\n${noise(12_000, 12_000)}`;
    const scanner = new ToolOutputScanner();
    for (let at = 0; at < output.length; at += 4_093) scanner.push(output.slice(at, at + 4_093));
    const whole = digestToolOutput(output);
    expect(scanner.end()).toEqual(whole);
    expect(whole.salient).toEqual(['DATABASE_URL=postgres://db.internal:5432/app']);
  });
});

describe('locationIn', () => {
  it.each([
    ['    at run (src/jobs/run.ts:12:7)', 'src/jobs/run.ts:12:7'],
    ['  File "/srv/app/main.py", line 3, in <module>', '/srv/app/main.py:3'],
    ['--> src/main.rs:10:5', 'src/main.rs:10:5'],
    ['\tat com.acme.Foo.bar(Foo.java:217)', 'Foo.java:217'],
    ['see docs at https://example.com/a.html', null],
    ['ratio 3:4', null],
  ])('%s → %s', (line, location) => {
    expect(locationIn(line)).toBe(location);
  });
});

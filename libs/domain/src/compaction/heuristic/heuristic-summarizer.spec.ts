/**
 * The built-in summarizer: given a head (and the previous
 * record), when it summarizes, then the record and the rendered summary keep
 * the task's facts.
 */
import type { Message, Part } from '../../events';
import { heuristicSummary, summarizeHeuristically } from './heuristic-summarizer';
import { parseSummaryResponse } from '../summary-parse';
import { recordFromSummaryText } from './record-from-text';
import { SUMMARY_TEMPLATES } from './summary-template';

let ids = 0;
const msg = (role: Message['role'], ...parts: Array<Part | string>): Message => ({
  id: `m${++ids}`,
  role,
  parts: parts.map((part) => (typeof part === 'string' ? { type: 'text', text: part } : part)),
});
const user = (text: string) => msg('user', text);
const assistant = (...parts: Array<Part | string>) => msg('assistant', ...parts);
const call = (callId: string, name: string, input: unknown): Part => ({ type: 'tool_call', callId, name, input });
const result = (callId: string, name: string, output: string, extra: { isError?: boolean; refId?: string } = {}): Message =>
  msg('tool', {
    type: 'tool_result',
    callId,
    name,
    output,
    isError: extra.isError,
    ...(extra.refId ? { outputRef: { id: extra.refId, byte_size: output.length, line_count: output.split('\n').length } } : {}),
  });

const summarize = (head: Message[], options: Partial<Parameters<typeof summarizeHeuristically>[0]> = {}) =>
  summarizeHeuristically({ head, budgetTokens: 8_000, ...options });

describe('summarizeHeuristically: the reply', () => {
  const head = [
    user('Fix the failing build in src/server/main.ts. Do not change the public API.'),
    assistant('I decided to use pnpm instead of npm because the lockfile is pnpm-lock.yaml.', call('c1', 'bash', { command: 'pnpm test --filter server' })),
    result('c1', 'bash', 'PASS a\nTypeError: x is not a function\n    at run (src/server/main.ts:10:5)\nexit code: 1'),
  ];

  it('answers in the <summary> shape every parser reads, leaving empty sections out', () => {
    // when
    const { text, summary } = summarize(head);
    // then
    expect(text).toBe(`<summary>\n${summary}\n</summary>`);
    expect(parseSummaryResponse(text, 8_000)).toMatchObject({ ok: true, value: { summary, retain: null } });
    expect(summary).toContain('## Goal\n');
    expect(summary).toContain('## Relevant Files\n');
    expect(summary).not.toContain('(none)');
    expect(summary).not.toContain('## Next Steps');
    expect(summary).not.toContain('### Done');
  });

  it('renders an empty record as its first section alone, so a summary is never blank', () => {
    expect(summarize([]).summary).toBe('## Goal\n- (none)');
    expect(summarize([], { template: 'spec-000' }).summary).toBe('## 1. Task Overview\n\n### Goal\n- (none)');
  });

  it('is deterministic', () => {
    expect(summarize(head)).toEqual(summarize(head));
  });

  it.each(Object.values(SUMMARY_TEMPLATES).map((template) => [template.name, template] as const))(
    'renders the %s template with its own headings',
    (_, template) => {
      const { summary } = summarize(head, { template });
      // the headings shown are the template's, in its order; the empty ones are left out
      const headings = summary.split('\n').filter((line) => line.startsWith('#'));
      const all = template.sections.map((section) => `${'#'.repeat(section.level)} ${section.heading}`);
      expect(headings.length).toBeGreaterThan(2);
      expect(headings).toEqual(all.filter((heading) => headings.includes(heading)));
      expect(summary).not.toContain('(none)');
      const readBack = recordFromSummaryText(summary);
      expect(readBack.context).toEqual([]);
      expect(JSON.stringify(readBack)).toContain('Fix the failing build');
      expect(summary).toContain('Do not change the public API.');
      expect(summary).toContain('TypeError: x is not a function');
    },
  );

  it('lists the head\'s tool output refs in <retain> when asked (seed 000)', () => {
    const withRef = [...head, assistant(call('c2', 'read', { path: 'a.txt' })), result('c2', 'read', 'hello', { refId: 'ref-7' })];
    const { text, retain } = summarize(withRef, { retain: true });
    expect(retain).toBe('- ref=ref-7 (read, 1 lines)');
    expect(parseSummaryResponse(text, 8_000)).toMatchObject({ ok: true, value: { retain: '- ref=ref-7 (read, 1 lines)' } });
  });

  it('keeps the pre-record interface: text in, reply out', () => {
    expect(heuristicSummary({ head, previousSummary: null, maxTokens: 8_000 })).toBe(summarize(head).text);
  });
});

describe('extraction by structure', () => {
  it('keeps paths, URLs, identifiers, code spans, quoted strings and numbers with units from what the user and assistant write', () => {
    // given
    const head = [
      user('Deploy to https://staging.example.com/api/v2 with MAX_POOL_SIZE=25 and a 30 s timeout; the flag is `--no-verify`.'),
      assistant('The handler `createTenantSession()` lives in apps/api/src/tenants.controller.ts; the error said "tenant quota exceeded" at 512 MB.'),
    ];
    // when
    const { record, summary } = summarize(head);
    // then
    expect(record.files.map((f) => f.text)).toContain('apps/api/src/tenants.controller.ts');
    const values = record.values.map((v) => v.text);
    for (const value of ['https://staging.example.com/api/v2', 'MAX_POOL_SIZE=25', '30 s', '--no-verify', 'createTenantSession()', 'tenant quota exceeded', '512 MB']) {
      expect(values).toContain(value);
      expect(summary).toContain(value);
    }
  });

  it('reads commands with their outcome, exit codes, stack frames and diff headers from tool calls and outputs', () => {
    // given
    const head = [
      user('Make the migration pass.'),
      assistant(call('c1', 'shell', { command: ['bash', '-lc', 'npm run migrate -- --env staging'] })),
      result('c1', 'shell', 'running 1764500000000-tenant-limits\nError: relation "tenant_limits" already exists\n    at Migrator.run (node_modules/typeorm/migration/Migrator.js:210:11)\nProcess exited with code 2'),
      assistant(call('c2', 'apply_patch', { input: '*** Begin Patch\n*** Update File: migrations/1764500000000-tenant-limits.ts\n@@\n-CREATE TABLE\n+CREATE TABLE IF NOT EXISTS\n*** End Patch' })),
      result('c2', 'apply_patch', 'Done'),
      assistant(call('c3', 'bash', { command: 'git diff' })),
      result('c3', 'bash', 'diff --git a/libs/event-store/src/usage.store.ts b/libs/event-store/src/usage.store.ts\n+++ b/libs/event-store/src/usage.store.ts\n@@ -1 +1 @@'),
    ];
    // when
    const { record, summary } = summarize(head);
    // then
    expect(record.commands[0]).toMatchObject({ text: 'npm run migrate -- --env staging', outcome: 'exit 2: Error: relation "tenant_limits" already exists', ok: false });
    expect(record.errors[0]).toMatchObject({
      text: 'Error: relation "tenant_limits" already exists',
      location: 'node_modules/typeorm/migration/Migrator.js:210:11',
      fixed: false,
    });
    expect(record.files).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ text: 'migrations/1764500000000-tenant-limits.ts', actions: ['edited'] }),
        expect.objectContaining({ text: 'libs/event-store/src/usage.store.ts', actions: ['edited'] }),
      ]),
    );
    expect(summary).toContain('- `npm run migrate -- --env staging` → exit 2: Error: relation "tenant_limits" already exists');
    expect(summary).toContain('### Blocked\n- Error: relation "tenant_limits" already exists (at node_modules/typeorm/migration/Migrator.js:210:11)');
  });

  it('finds an error on the last line of a 1 MB output passed whole, in linear time', () => {
    // given a 1 MB output whose in-context view (the message) only has its head
    const full = `${'ok: step completed without incident\n'.repeat(29_000)}FATAL: checksum mismatch in segment 0042 (expected a1b2c3, got d4e5f6)`;
    expect(full.length).toBeGreaterThan(1_000_000);
    const head = [user('Verify the backup.'), assistant(call('c1', 'bash', { command: './verify-backup.sh' })), result('c1', 'bash', full.slice(0, 2_000), { refId: 'ref-big' })];
    // when the caller passes the cache's full text
    const started = performance.now();
    const { summary, record } = summarize(head, { outputs: new Map([['c1', full]]) });
    const elapsed = performance.now() - started;
    // then
    expect(summary).toContain('FATAL: checksum mismatch in segment 0042 (expected a1b2c3, got d4e5f6)');
    expect(record.commands[0].outcome).toContain('FATAL: checksum mismatch');
    expect(elapsed).toBeLessThan(1_000);
    // and without the full text, the view's head alone does not show it
    expect(summarize(head).summary).not.toContain('FATAL');
  });

  it('accepts full outputs keyed by output ref id, or as digests streamed chunk by chunk', async () => {
    const { ToolOutputScanner } = await import('./output-digest');
    const full = `${'line\n'.repeat(5_000)}Error: disk quota exceeded on /var/lib/postgresql`;
    const scanner = new ToolOutputScanner();
    for (let at = 0; at < full.length; at += 4_096) scanner.push(full.slice(at, at + 4_096));
    const head = [user('Check the disk.'), assistant(call('c1', 'bash', { command: 'df -h' })), result('c1', 'bash', 'line\nline', { refId: 'ref-1' })];
    expect(summarize(head, { outputs: new Map([['ref-1', full]]) }).summary).toContain('Error: disk quota exceeded on /var/lib/postgresql');
    expect(summarize(head, { outputs: new Map([['c1', scanner.end()]]) }).summary).toContain('Error: disk quota exceeded on /var/lib/postgresql');
  });

  it.each([
    ['Chinese', '请不要修改数据库架构，端口必须保持 8443。配置在 config/app.yaml 里。', ['请不要修改数据库架构，端口必须保持 8443。', 'config/app.yaml', '8443']],
    ['Russian', 'Никогда не трогай файл deploy/prod.env. Таймаут должен быть 45 с.', ['Никогда не трогай файл deploy/prod.env.', 'Таймаут должен быть 45 с.', 'deploy/prod.env']],
    ['Arabic', 'لا تغير واجهة البرمجة العامة. استخدم المنفذ 5432 والملف db/schema.sql فقط.', ['لا تغير واجهة البرمجة العامة.', 'db/schema.sql', '5432']],
  ])('keeps %s constraints in the user\'s own words, and the values in them', (_, text, facts) => {
    // when
    const { record, summary } = summarize([user('Start the task.'), user(text)]);
    // then
    expect(record.constraints.length).toBeGreaterThan(0);
    for (const fact of facts) expect(summary).toContain(fact);
  });

  it('keeps the declarations of code blocks and the assistant\'s conclusions in any language', () => {
    // given
    const head = [
      user('Add retries:\n```ts\nexport const MAX_RETRIES = 5;\nexport function backoff(attempt: number): number {\n  return 2 ** attempt * 100;\n}\n```'),
      assistant('问题的根本原因是连接池耗尽，所以我们改用 pgbouncer。'),
      assistant('Причина в том, что кэш не сбрасывается, поэтому я добавил invalidateCache().'),
      assistant('قررنا استخدام Redis Streams بدلاً من Kafka لأن التشغيل أبسط.'),
      assistant('```python\ndef load_config(path: str) -> dict:\n    return yaml.safe_load(open(path))\n```'),
    ];
    // when
    const { summary } = summarize(head);
    // then
    for (const fact of [
      'export const MAX_RETRIES = 5;',
      'export function backoff(attempt: number): number {',
      '问题的根本原因是连接池耗尽，所以我们改用 pgbouncer。',
      'Причина в том, что кэш не сбрасывается, поэтому я добавил invalidateCache().',
      'قررنا استخدام Redis Streams بدلاً من Kafka لأن التشغيل أبسط.',
      'def load_config(path: str) -> dict:',
    ]) {
      expect(summary).toContain(fact);
    }
  });

  it.each(['Keep going with step 3', 'continue', 'Continue.', 'ok, go on', '继续', 'продолжай', 'تابع'])(
    'does not take the filler "%s" for a constraint or a request',
    (filler) => {
      const { record } = summarize([user('Refactor the billing module. Never call the payment API in tests.'), user(filler)]);
      expect(record.constraints.map((c) => c.text)).toEqual(['Never call the payment API in tests.']);
      expect(record.userMessages).toEqual([]);
      expect(record.latestRequest).toBe('Refactor the billing module. Never call the payment API in tests.');
    },
  );

  it('keeps the user\'s messages verbatim, newest first within their budget', () => {
    // given a goal and five long requests, and room for about two of them
    const requests = Array.from({ length: 5 }, (_, i) => `Request ${i + 1}: ${'migrate the ledger table carefully '.repeat(10)}`);
    const { record, summary } = summarize([user('Goal: move billing to the new ledger.'), ...requests.map(user)], { userMessageTokens: 200 });
    // then the newest stay, whole
    expect(record.userMessages.map((m) => m.text.slice(0, 9))).toEqual(['Request 4', 'Request 5']);
    expect(summary).toContain(requests[4].trim());
    expect(record.goal[0].text).toBe('Goal: move billing to the new ledger.');
  });
});

describe('plans and todos', () => {
  it.each([
    ['todowrite', { todos: [{ content: 'write the migration', status: 'completed' }, { content: 'backfill usage rows', status: 'in_progress' }, { content: 'add the quota check', status: 'pending' }] }],
    ['update_plan', { plan: [{ step: 'write the migration', status: 'completed' }, { step: 'backfill usage rows', status: 'in_progress' }, { step: 'add the quota check', status: 'pending' }] }],
    ['manage_todo_list', { operation: 'write', todoList: [{ id: 1, title: 'write the migration', status: 'completed' }, { id: 2, title: 'backfill usage rows', status: 'in-progress' }, { id: 3, title: 'add the quota check', status: 'not-started' }] }],
  ])('renders the latest %s list as the open items', (tool, input) => {
    // given an older list, then the latest
    const head = [
      user('Add tenant quotas.'),
      assistant(call('t1', tool, { todos: [{ content: 'investigate the old limiter', status: 'pending' }] })),
      result('t1', tool, 'ok'),
      assistant(call('t2', tool, input)),
      result('t2', tool, 'ok'),
    ];
    // when
    const { record, summary } = summarize(head);
    // then the latest list replaced the older one
    expect(record.todos.map((t) => [t.text, t.status])).toEqual([
      ['write the migration', 'completed'],
      ['backfill usage rows', 'in_progress'],
      ['add the quota check', 'pending'],
    ]);
    expect(summary).toContain('### In Progress\n- Latest request: Add tenant quotas.\n- [~] backfill usage rows');
    expect(summary).toContain('## Next Steps\n- [ ] add the quota check');
    expect(summary).toContain('### Done\n- [x] write the migration');
  });

  it('reads markdown checklists, and the todo tools the config names', () => {
    const head = [
      user('Plan:\n- [x] read the spec\n- [ ] write the parser\n- [ ] wire the CLI'),
      assistant('Progress:\n- [x] write the parser'),
      assistant(call('p1', 'my_plan_tool', { items: [{ text: 'ship 1.0', done: false }] })),
      result('p1', 'my_plan_tool', 'saved'),
    ];
    const { record } = summarize(head, { todoTools: ['my_plan_tool'] });
    expect(record.todos.map((t) => [t.text, t.status])).toEqual([
      ['read the spec', 'completed'],
      ['write the parser', 'completed'],
      ['wire the CLI', 'pending'],
      ['ship 1.0', 'pending'],
    ]);
  });
});

/**
 * A head full of low-value facts: the assistant's decisions naming helpers, files read once, test runs that pass,
 * after a user message `lead` that names none of the earlier facts.
 */
function busyHead(pivot: number, lead: string): Message[] {
  const head: Message[] = [user(lead)];
  for (let step = 0; step < 6; step++) {
    const id = `p${pivot}-${step}`;
    const names = Array.from({ length: 8 }, (_, i) => `\`helperFn${pivot}x${step}x${i}\``).join(', ');
    head.push(
      assistant(
        `I decided to split module m${pivot} part ${step} because ${names} share state.`,
        call(`${id}r`, 'read', { path: `src/gen/m${pivot}/part-${step}.ts` }),
        call(`${id}b`, 'bash', { command: `npx vitest run src/gen/m${pivot}/part-${step}.spec.ts` }),
      ),
    );
    head.push(result(`${id}r`, 'read', `export const part${step} = ${pivot};`), result(`${id}b`, 'bash', `Tests: 4 passed (took ${pivot * 10 + step} ms)\nexit code: 0`));
  }
  return head;
}

describe('any script and language', () => {
  /** Runs `first`, then `pivots` busy heads, carrying the record; returns every summary. */
  function session(first: Message[], pivots: number, lead: string): string[] {
    let reply = summarize(first, { budgetTokens: 2_000 });
    const summaries = [reply.summary];
    for (let pivot = 1; pivot <= pivots; pivot++) {
      reply = summarize(busyHead(pivot, lead), { previous: reply.record, budgetTokens: 2_000 });
      summaries.push(reply.summary);
    }
    return summaries;
  }

  it.each([
    [
      'German',
      [
        user('Bitte überarbeite die Gebührenberechnung.'),
        assistant('Welche Vorgaben gibt es?'),
        user('Die Funktion berechneGebühr liegt in src/abrechnung/gebühren.ts. Die Methode größeÄndern darf nicht öffentlich werden. Das Limit liegt bei 40 Anfragen pro Sekunde.'),
      ],
      'Mach weiter.',
      ['berechneGebühr', 'src/abrechnung/gebühren.ts', 'Die Methode größeÄndern darf nicht öffentlich werden.', 'Das Limit liegt bei 40 Anfragen pro Sekunde.'],
    ],
    [
      'Japanese',
      [
        user('ユーザー設定の保存処理を直してください。'),
        assistant('条件を教えてください。'),
        user('キーは`ユーザー設定`で、保存先はsettings_v2です。legacy_storeは絶対に変更しないでください。タイムアウトは30秒です。'),
      ],
      '続けて',
      ['`ユーザー設定`', 'settings_v2', 'legacy_storeは絶対に変更しないでください。', 'タイムアウトは30秒です。'],
    ],
    [
      'Spanish',
      [
        user('Arregla el cálculo de descuentos.'),
        assistant('¿Algún requisito?'),
        user('La función es calcularDescuentoAño en src/ventas/descuentos.ts.¿Puedes usar el puerto 8443? ¡Nunca borres la tabla Straße_ID! Hay que mantener el límite de 500 peticiones.'),
      ],
      'Sigue.',
      ['calcularDescuentoAño', '¿Puedes usar el puerto 8443?', '¡Nunca borres la tabla Straße_ID!', 'Hay que mantener el límite de 500 peticiones.'],
    ],
  ])('a %s session keeps its identifiers and the user\'s sentences through 12 compactions', (_, first, lead, facts) => {
    // when
    const summaries = session(first as Message[], 12, lead as string);
    // then every summary, the last included, holds every fact
    for (const summary of summaries) for (const fact of facts as string[]) expect(summary).toContain(fact);
  });
});

describe('carried forward as data', () => {
  it('merges the previous record with the next head instead of re-reading text', () => {
    // given a first compaction
    const first = summarize([user('Port the CLI to Go. Always keep flags POSIX-compatible.'), assistant(call('c1', 'bash', { command: 'go build ./...' })), result('c1', 'bash', 'cmd/main.go:12:2: undefined: cobra', { isError: true })]);
    // when the next head says the build passes now
    const second = summarize([user('Now add the completion command.'), assistant(call('c2', 'bash', { command: 'go build ./...' })), result('c2', 'bash', '')], {
      previous: first.record,
    });
    // then the earlier facts are still there, the error is closed by the successful rerun, and the clock ran on
    expect(second.record.goal[0].text).toBe('Port the CLI to Go. Always keep flags POSIX-compatible.');
    expect(second.record.constraints.map((c) => c.text)).toEqual(['Always keep flags POSIX-compatible.']);
    expect(second.record.errors).toEqual([expect.objectContaining({ text: 'cmd/main.go:12:2: undefined: cobra', fixed: true })]);
    expect(second.record.commands).toEqual([expect.objectContaining({ text: 'go build ./...', outcome: 'ok', ok: true, hits: 2 })]);
    expect(second.record.compactions).toBe(2);
    expect(second.summary).toContain('- fixed: cmd/main.go:12:2: undefined: cobra');
  });

  it('a constraint from turn 1 survives 10 consecutive compactions', () => {
    // given
    let previous = summarize([user('Build the importer. Never write to the production bucket s3://acme-prod.')]).record;
    // when ten more compactions each summarize a busy head
    for (let round = 1; round <= 10; round++) {
      const head: Message[] = [user(`Round ${round}: import batch ${round}.`)];
      for (let step = 0; step < 8; step++) {
        const id = `r${round}-${step}`;
        head.push(assistant(`Importing part ${step} of batch ${round} into tmp/batch-${round}-${step}.csv.`, call(id, 'bash', { command: `./import --batch ${round} --part ${step}` })));
        head.push(result(id, 'bash', `${'row imported\n'.repeat(200)}warning: ${step} rows skipped`));
      }
      previous = summarize(head, { previous, budgetTokens: 1_000 }).record;
    }
    // then
    expect(previous.compactions).toBe(11);
    expect(previous.evicted).toBeGreaterThan(0);
    // (the rounds' requests, naming a batch number, are kept as the user's facts, below the constraint)
    expect(previous.constraints.filter((c) => c.cued).map((c) => c.text)).toEqual(['Never write to the production bucket s3://acme-prod.']);
    const { summary } = summarize([user('Round 11.')], { previous, budgetTokens: 1_000 });
    expect(summary).toContain('Never write to the production bucket s3://acme-prod.');
    expect(summary).toContain('Build the importer.');
  });

  it('facts the user stated at the start, and the file the task changed, survive 30 compactions of tool and assistant noise', () => {
    // given a first head: after the goal, the user's endpoint, rate limit and constraint; the assistant edits a file
    const first = [
      user('Harden the payment client against timeouts.'),
      assistant('Which endpoint and limits apply?'),
      user('The internal endpoint is https://pay.internal.example:9443/v3/charge and the rate limit is 375 requests per minute. Never log card numbers.'),
      assistant('Editing the client.', call('e0', 'edit', { path: 'src/payments/gateway-client.ts', oldString: 'a', newString: 'b' })),
      result('e0', 'edit', 'Applied 1 edit.'),
    ];
    let previous = summarize(first, { budgetTokens: 2_000 }).record;
    // when 30 more compactions each carry the record through a head full of low-value facts, never naming those again
    const early = ['src/payments/gateway-client.ts', 'https://pay.internal.example:9443/v3/charge', '375 requests', 'Never log card numbers.'];
    for (let pivot = 1; pivot <= 30; pivot++) {
      const reply = summarize(busyHead(pivot, 'Go on.'), { previous, budgetTokens: 2_000 });
      previous = reply.record;
      // then every early fact is still in the summary the model reads
      for (const fact of early) expect(reply.summary).toContain(fact);
      expect(estimateOf(reply.text)).toBeLessThanOrEqual(2_000);
    }
    expect(previous.compactions).toBe(31);
    expect(previous.evicted).toBeGreaterThan(500);
    expect(previous.files.find((file) => file.text === 'src/payments/gateway-client.ts')?.actions).toContain('edited');
  });

  it('an output line keeps the call that printed it, in the record and when read back from the summary text', () => {
    // given a failing test run and a deploy that printed its commit
    const head = [
      user('Ship the pool fix.'),
      assistant(call('t', 'bash', { command: 'pytest -q' })),
      result('t', 'bash', `${'.'.repeat(80)}\nFAILED tests/test_pool.py::test_resize_under_load - assert 4 == 8\n1 failed, 80 passed\nexit code: 1`),
      assistant(call('d', 'bash', { command: 'git reset --hard origin/main' })),
      result('d', 'bash', 'HEAD is now at 4be17c9 Pool: resize lazily'),
    ];
    // when
    const { record, summary } = summarize(head);
    // then
    expect(record.errors).toEqual(
      expect.arrayContaining([expect.objectContaining({ text: 'FAILED tests/test_pool.py::test_resize_under_load - assert 4 == 8', source: 'pytest -q' })]),
    );
    expect(summary).toContain('- `git reset --hard origin/main`: HEAD is now at 4be17c9 Pool: resize lazily');
    expect(recordFromSummaryText(summary).excerpts).toEqual([
      expect.objectContaining({ text: 'HEAD is now at 4be17c9 Pool: resize lazily', source: 'git reset --hard origin/main' }),
    ]);
  });

  it('a constraint stays until the user revokes it', () => {
    const first = summarize([user('Do not touch the public API in src/api.ts.')]);
    const revoked = summarize([user('You can now change the public API in src/api.ts.')], { previous: first.record });
    expect(revoked.record.constraints.map((c) => c.text)).toEqual(['You can now change the public API in src/api.ts.']);
    const reminded = summarize([user("Don't forget to update src/api.ts docs.")], { previous: first.record });
    expect(reminded.record.constraints.map((c) => c.text)).toContain('Do not touch the public API in src/api.ts.');
  });

  it('a resolved error is evicted before an open one, and finished todos before open ones', () => {
    // given two errors, the older one open, the newer one fixed; a finished todo and an open one
    const head = [
      user('Stabilize CI.'),
      assistant(call('a', 'bash', { command: 'npm run lint' })),
      result('a', 'bash', 'Error: lint rule no-floating-promises failed in libs/queue/src/producer.ts', { isError: true }),
      assistant(call('b', 'bash', { command: 'npm run typecheck' })),
      result('b', 'bash', 'Error: TS2345 in libs/domain/src/view/tokens.ts', { isError: true }),
      assistant('Fixed the TS2345 error in libs/domain/src/view/tokens.ts.', call('t', 'todowrite', { todos: [{ content: 'repair typecheck', status: 'completed' }, { content: 'repair lint', status: 'pending' }] })),
      result('t', 'todowrite', 'ok'),
    ];
    const roomy = summarize(head);
    expect(roomy.record.errors.map((e) => [e.text, e.fixed])).toEqual([
      ['Error: lint rule no-floating-promises failed in libs/queue/src/producer.ts', false],
      ['Error: TS2345 in libs/domain/src/view/tokens.ts', true],
    ]);
    // when the budget only fits part of it
    const tight = summarize(head, { budgetTokens: estimateOf(roomy.text) - 30 });
    // then the fixed error and the finished todo went first
    expect(tight.record.errors.map((e) => e.text)).toEqual(['Error: lint rule no-floating-promises failed in libs/queue/src/producer.ts']);
    expect(tight.record.todos.map((t) => t.text)).toEqual(['repair lint']);
    expect(tight.evicted).toBeGreaterThan(0);
  });

  it('lists what left the record at this compaction, section by section, next to the running count', () => {
    // given a record holding a fixed error and a finished todo
    const head = [
      user('Stabilize CI.'),
      assistant(call('b', 'bash', { command: 'npm run typecheck' })),
      result('b', 'bash', 'Error: TS2345 in libs/domain/src/view/tokens.ts', { isError: true }),
      assistant('Fixed the TS2345 error in libs/domain/src/view/tokens.ts.', call('t', 'todowrite', { todos: [{ content: 'repair typecheck', status: 'completed' }] })),
      result('t', 'todowrite', 'ok'),
    ];
    const roomy = summarize(head);
    expect(roomy.evictedItems).toEqual([]);
    // when a tight budget evicts
    const tight = summarize(head, { budgetTokens: estimateOf(roomy.text) - 20 });
    // then the receipt names them, and the record counts them
    expect(tight.evictedItems.length).toBe(tight.evicted);
    expect(tight.record.evicted).toBe(tight.evicted);
    expect(tight.evictedItems).toEqual(expect.arrayContaining([{ section: 'errors', text: 'Error: TS2345 in libs/domain/src/view/tokens.ts' }]));
  });

  it('stays within its budget, however big the head', () => {
    const head = Array.from({ length: 300 }, (_, i) => user(`Never touch file${i}/part${i}.ts; keep ${i} ms.`));
    for (const budget of [300, 1_000, 4_000]) {
      const { text } = summarize(head, { budgetTokens: budget });
      expect(parseSummaryResponse(text, budget).ok).toBe(true);
    }
  });

  it('reads a previous summary that has no record (older compactions) back into one', () => {
    // given the text of an older summary, in the OpenCode template
    const older = [
      '## Goal',
      '- Fix the failing build in src/server/main.ts.',
      '## Constraints & Preferences',
      '- Do not change the public API.',
      '## Progress',
      '### Done',
      '- Called bash 1×',
      '### In Progress',
      '- Latest request: update docs/README.md',
      '### Blocked',
      '- shell failed: fatal: not a git repository',
      '## Key Decisions',
      '- I decided to use pnpm instead of npm.',
      '## Next Steps',
      '- Next I will run the tests.',
      '## Critical Context',
      '- Command: pnpm test --filter server',
      '## Relevant Files',
      '- src/server/main.ts',
    ].join('\n');
    // when
    const { record, summary } = summarize([user('Then release v2.')], { previousSummary: older });
    // then every bullet has a home
    expect(record.goal[0].text).toBe('Fix the failing build in src/server/main.ts.');
    expect(record.constraints[0].text).toBe('Do not change the public API.');
    expect(record.errors[0]).toMatchObject({ text: 'shell failed: fatal: not a git repository', fixed: false });
    expect(record.decisions[0].text).toBe('I decided to use pnpm instead of npm.');
    expect(record.todos[0]).toMatchObject({ text: 'Next I will run the tests.', status: 'pending' });
    expect(record.files[0].text).toBe('src/server/main.ts');
    for (const line of ['Do not change the public API.', 'Command: pnpm test --filter server', 'Then release v2.']) expect(summary).toContain(line);
    // and text in another shape is kept whole as one item
    expect(summarize([], { previousSummary: 'Free-form notes about the task.' }).summary).toContain('- Earlier summary: Free-form notes about the task.');
  });

  it('records the request instructions it cannot follow', () => {
    expect(summarize([user('Go.')], { instructions: 'focus on tests' }).summary).toContain('- Requested focus: focus on tests');
  });
});

const estimateOf = (text: string) => Math.ceil(text.length / 4);

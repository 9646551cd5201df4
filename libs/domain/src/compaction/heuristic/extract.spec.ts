/**
 * Extraction by structure: given a text in any language, when it is read,
 * then paths, URLs, identifiers, code spans, quoted strings and numbers with
 * units come out by their shape; cue words only classify sentences.
 */
import {
  checklistOf,
  commandOf,
  inputPathsOf,
  isConstraintSentence,
  isDecisionSentence,
  isFiller,
  isFixStatement,
  isRevocation,
  numbersOf,
  patchPathsOf,
  quotedOf,
  sentencesOf,
  statesFact,
  structuralOf,
  todoListOf,
} from './extract';

describe('structuralOf', () => {
  it('reads a pasted certificate line (a long run of capitals, then a slash) without backtracking for ever', () => {
    const line = `m${'AbCdEfGhIjKlMnOpQrStUvWxYz'.repeat(4)}/x9+`;
    expect(structuralOf(`-----BEGIN CERTIFICATE-----\n${line}\n-----END CERTIFICATE-----`).values).not.toContain(line);
  });

  it('finds paths and locations, also inside CJK, Cyrillic and Arabic text', () => {
    const found = structuralOf('修改 src/app/main.ts:42 和 config.yaml；файл deploy/prod.env изменён؛ الملف ./db/schema.sql جاهز. Not and/or, not 1.5.');
    expect(found.paths).toEqual(['src/app/main.ts', 'config.yaml', 'deploy/prod.env', './db/schema.sql']);
    expect(found.locations).toEqual(['src/app/main.ts:42']);
  });

  it('finds URLs whole, query strings included', () => {
    expect(structuralOf('See https://grafana.acme.internal/d/x/latency?orgId=1&from=now-6h, then retry.').urls).toEqual([
      'https://grafana.acme.internal/d/x/latency?orgId=1&from=now-6h',
    ]);
  });

  it('finds identifiers by shape: camel, Pascal, snake, SCREAMING, qualified, calls, tickets, hashes, versions, flags, host:port, key=value', () => {
    const text =
      'maxRetries UserService user_id MAX_POOL_SIZE QuotaCache.invalidateAll createSession() OPS-4821 9f3c2a1b 2.13.0 lodash@4.17.21 --dry-run localhost:8443 timeout=30s $HOME and ordinary words';
    expect(structuralOf(text).values).toEqual([
      'maxRetries',
      'UserService',
      'user_id',
      'MAX_POOL_SIZE',
      'QuotaCache.invalidateAll',
      'createSession',
      'OPS-4821',
      '9f3c2a1b',
      '2.13.0',
      'lodash@4.17.21',
      '--dry-run',
      'localhost:8443',
      'timeout=30s',
      '$HOME',
    ]);
  });

  it('keeps code spans and quoted strings in any quotation marks', () => {
    expect(structuralOf('Run `pnpm i --frozen-lockfile` first.').values).toContain('pnpm i --frozen-lockfile');
    expect(quotedOf('He said "tenant quota exceeded", «без изменений», 「不要改」 and \'fact_orders_pkey\' but don\'t worry.')).toEqual([
      'tenant quota exceeded',
      'без изменений',
      '不要改',
      'fact_orders_pkey',
    ]);
  });

  it('keeps numbers with units in several scripts, and bare numbers of three digits or more', () => {
    expect(numbersOf('p99 under 250 ms, 512 MB, 2.5%, 45 с, 超时 15 秒, 8 个副本, 16 بكسل? no: 3 apples, port 8443, pi 3.14')).toEqual([
      '250 ms',
      '512 MB',
      '2.5%',
      '45 с',
      '15 秒',
      '8 个',
      '16 بكسل',
      '8443',
      '3.14',
    ]);
  });

  it('takes words with letters of any script for identifiers, and finds ASCII and non-ASCII ones inside Japanese text', () => {
    // given German, Spanish and Japanese text
    const german = structuralOf('Die Funktion berechneGebühr ruft größeÄndern auf; die Spalte Straße_ID bleibt, siehe docs/Übersicht.md.');
    const spanish = structuralOf('¿Puedes revisar calcularDescuentoAño en src/ventas/descuentos.ts?');
    const japanese = structuralOf('設定はloadUserConfigで読み込み、`ユーザー設定`はsettings_v2に保存します。ファイルはconfig/app.yamlです。');
    // then
    expect(german.values).toEqual(['berechneGebühr', 'größeÄndern', 'Straße_ID']);
    expect(german.paths).toEqual(['docs/Übersicht.md']);
    expect(spanish.values).toEqual(['calcularDescuentoAño']);
    expect(spanish.paths).toEqual(['src/ventas/descuentos.ts']);
    expect(japanese.values).toEqual(['loadUserConfig', 'settings_v2', 'ユーザー設定']);
    expect(japanese.paths).toEqual(['config/app.yaml']);
    // and plain words of cased scripts are not identifiers
    expect(structuralOf('Die Gebühr wird täglich berechnet. Проверь Функцию. Éste es el Año.').values).toEqual([]);
  });

  it('reads the declarations of code blocks', () => {
    const text = 'Here:\n```ts\nexport const DEFAULT_BURST = 40;\nfunction helper() {\n  return 1;\n}\n```';
    expect(structuralOf(text, { codeBlocks: true }).values).toEqual(expect.arrayContaining(['export const DEFAULT_BURST = 40;', 'function helper() {']));
  });
});

describe('sentences and cues', () => {
  it('splits sentences without breaking paths, in scripts with and without spaces', () => {
    expect(sentencesOf('Fix src/a.ts now. Then test!\n不要改接口。端口是8443。Готово? Да.')).toEqual([
      'Fix src/a.ts now.',
      'Then test!',
      '不要改接口。',
      '端口是8443。',
      'Готово?',
      'Да.',
    ]);
  });

  it('splits Spanish sentences before ¿ and ¡, also without a space after the stop', () => {
    expect(sentencesOf('Usa Postgres.¿Puedes subir el puerto a 8443? ¡Nunca borres la tabla!')).toEqual([
      'Usa Postgres.',
      '¿Puedes subir el puerto a 8443?',
      '¡Nunca borres la tabla!',
    ]);
  });

  it.each([
    'Never push to main.',
    'Verwende bitte immer pnpm.',
    'Die Tabelle darf nicht gelöscht werden.',
    'Hay que mantener la API estable.',
    'Evita las migraciones destructivas.',
    'データベースは絶対に変更しないでください。',
    '既存のAPIのみ使用すること。',
    'Non toccare il database.',
    'Utilisez uniquement le cache local.',
    'Evite chamadas síncronas.',
    'Do not change the public API.',
    'Prefer pnpm over npm.',
    '请不要修改数据库。',
    'Никогда не трогай прод.',
    'لا تغير الواجهة.',
    'Nunca uses sudo.',
  ])('takes "%s" for a constraint', (sentence) => {
    expect(isConstraintSentence(sentence)).toBe(true);
  });

  it.each(['The non-blocking path is in the io module.', 'Bitte schau dir die Logs an.', 'Per favore, guarda i log.'])(
    'takes "%s" for no constraint: a word part or a please is no cue',
    (sentence) => {
      expect(isConstraintSentence(sentence)).toBe(false);
    },
  );

  it('takes a sentence for a fact by its shape, whatever its language: a number, a path, an identifier, a quoted name', () => {
    for (const sentence of ['Das Limit liegt bei 40 Anfragen pro Sekunde.', 'La tabla se llama «pedidos_2024».', 'タイムアウトは30秒です。', 'Der Dienst heißt berechneGebühr.']) {
      expect(statesFact(sentence)).toBe(true);
    }
    for (const sentence of ['Mach weiter so.', 'Gracias por todo.', 'よろしくお願いします。']) expect(statesFact(sentence)).toBe(false);
  });

  it.each(['Add a cache.', '添加缓存。', 'Добавь кэш.'])('does not take the plain request "%s" for a constraint', (sentence) => {
    expect(isConstraintSentence(sentence)).toBe(false);
  });

  it('recognises decisions and diagnoses, fixes and revocations in several languages', () => {
    for (const sentence of [
      'We chose Redis because it is simpler.',
      '根本原因是连接池耗尽。',
      'Причина в кэше.',
      'قررنا استخدام Redis.',
      'Wir nehmen Redis, daher entfällt der Cache.',
      'Usaremos Redis en lugar de Memcached.',
      '原因はコネクションプールの枯渇なので、上限を上げます。',
    ]) {
      expect(isDecisionSentence(sentence)).toBe(true);
    }
    for (const sentence of ['Fixed the import.', '已修复。', 'Исправил импорт.', 'تم إصلاح الخطأ.']) expect(isFixStatement(sentence)).toBe(true);
    expect(isRevocation('You can now change the API.')).toBe(true);
    expect(isRevocation('Forget what I said about the port.')).toBe(true);
    expect(isRevocation("Don't forget the changelog.")).toBe(false);
    expect(isRevocation('Не забудь про тесты.')).toBe(false);
  });

  it.each([
    ['Keep going with step 12', true],
    ['continue', true],
    ['OK, go ahead.', true],
    ['继续第3步', true],
    ['продолжай', true],
    ['تابع', true],
    ['Keep going, but never touch prod', false],
    ['不要修改数据库', false],
    ['Continue with the billing module', false],
  ])('filler "%s": %s', (text, filler) => {
    expect(isFiller(text)).toBe(filler);
  });
});

describe('plans, todos and tool calls', () => {
  it('reads markdown checklists with their status', () => {
    expect(checklistOf('- [ ] open\n* [x] done\n1. [~] doing\n- [-] dropped\n- plain item')).toEqual([
      { text: 'open', status: 'pending' },
      { text: 'done', status: 'completed' },
      { text: 'doing', status: 'in_progress' },
      { text: 'dropped', status: 'cancelled' },
    ]);
  });

  it.each([
    ['OpenCode todowrite', { todos: [{ id: '1', content: 'a', status: 'in_progress', priority: 'high' }] }],
    ['Codex update_plan', { explanation: 'x', plan: [{ step: 'a', status: 'in_progress' }] }],
    ['VS Code manage_todo_list', { operation: 'write', todoList: [{ id: 1, title: 'a', description: 'd', status: 'in-progress' }] }],
    ['Claude Code TodoWrite', { todos: [{ content: 'a', status: 'in_progress', activeForm: 'Doing a' }] }],
    ['a JSON string', JSON.stringify({ todos: [{ content: 'a', status: 'in_progress' }] })],
  ])('reads the list a %s call sets', (_, input) => {
    expect(todoListOf(input)).toEqual([{ text: 'a', status: 'in_progress' }]);
  });

  it('returns null for a todo call that only reads', () => {
    expect(todoListOf({ operation: 'read' })).toBeNull();
  });

  it('reads commands, input paths and patches from tool calls', () => {
    expect(commandOf({ command: ['bash', '-lc', 'npm test'] })).toBe('npm test');
    expect(commandOf({ cmd: 'ls -la' })).toBe('ls -la');
    expect(inputPathsOf({ file_path: '/srv/app/a.ts', paths: ['b.ts'] })).toEqual(['/srv/app/a.ts', 'b.ts']);
    expect(patchPathsOf('*** Begin Patch\n*** Update File: src/a.ts\n@@\n*** Add File: src/b.ts\n*** End Patch')).toEqual(['src/a.ts', 'src/b.ts']);
  });
});

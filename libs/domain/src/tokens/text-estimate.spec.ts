import { estimateTextTokens } from './text-estimate';
import { countTokens } from './tokenizer';

const SOURCE = `export function stringAt(value: unknown, path: string, opts: { optional?: boolean; max?: number } = {}) {
  if (value === undefined && opts.optional) return undefined;
  if (typeof value !== 'string') throw invalid('invalid_field', \`\${path} must be a string\`, { path });
  if (opts.max !== undefined && value.length > opts.max) {
    throw invalid('field_too_long', \`\${path} exceeds \${opts.max} characters\`, { path, max: opts.max });
  }
  return value;
}
`;
const PROSE =
  'A multi-tenant service that keeps every agent session as an append-only event log in PostgreSQL and serves, on demand, ' +
  'the exact context a model should see next. When a session outgrows its model window, background workers compact it ' +
  'and prune old tool output, without ever deleting the original events. Tenant isolation is enforced by row-level security.\n\n';
const logLine = (i: number) =>
  `2026-11-25T12:00:${String(i % 60).padStart(2, '0')}Z INFO worker[${i}] processed job ${i * 7919} in ${i % 97} ms status=ok path=/srv/app/src/module${i % 13}.ts\n`;
const repeatTo = (size: number, piece: (i: number) => string) => {
  let text = '';
  for (let i = 0; text.length < size; i++) text += piece(i);
  return text;
};

const corpora: Record<string, string> = {
  'a service log': repeatTo(20_000, logLine),
  'TypeScript source': SOURCE.repeat(30),
  'English prose': PROSE.repeat(40),
  'compact JSON': JSON.stringify(Array.from({ length: 300 }, (_, i) => ({ id: `evt-${i}`, seq: i * 31, ok: i % 3 === 0, path: `src/m${i}.ts` }))),
  'indented JSON': JSON.stringify({ items: Array.from({ length: 200 }, (_, i) => ({ name: `item ${i}`, size: i * 1024 })) }, null, 2),
  'German prose': 'Die schnelle braune Füchsin springt über den faulen Hund. Größere Änderungen wurden überprüft. '.repeat(100),
  'French prose': "Le renard brun rapide saute par-dessus le chien paresseux. Les modifications ont été vérifiées à l'école. ".repeat(100),
  'Russian prose': 'Быстрая коричневая лиса прыгает через ленивую собаку. Изменения были проверены. '.repeat(100),
  'Greek prose': 'Η γρήγορη καφέ αλεπού πηδά πάνω από τον τεμπέλη σκύλο. Οι αλλαγές ελέγχθηκαν. '.repeat(100),
};

/** Deterministic pseudo-random text over an alphabet (a linear congruential generator). */
const randomText = (alphabet: string, length: number) => {
  let seed = 7;
  return Array.from({ length }, () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return alphabet[Math.floor((seed / 2147483648) * alphabet.length)];
  }).join('');
};
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const UPPER = LOWER.toUpperCase();

describe('estimateTextTokens: the append path estimate against the exact o200k_base count', () => {
  it.each(Object.entries(corpora))('given %s, when estimated, then it is within 0.95-1.35x of the exact count', (_, text) => {
    const exact = countTokens([text], 'o200k_base');
    const ratio = estimateTextTokens(text) / exact;
    expect(ratio).toBeGreaterThanOrEqual(0.95);
    expect(ratio).toBeLessThanOrEqual(1.35);
  });

  it.each([
    ['random lower-case letters', randomText(LOWER, 4000), 0.85],
    ['random mixed-case letters', randomText(LOWER + UPPER, 4000), 0.75],
    ['random DNA', randomText('ACGT', 4000), 0.85],
    ['random hex', randomText('0123456789abcdef', 4000), 0.85],
    ['random base64', randomText(LOWER + UPPER + '0123456789+/', 4000), 0.5],
  ])('given %s, when estimated, then it is at least %sx of the exact count and at most 1.35x', (_, text, floor) => {
    const ratio = estimateTextTokens(text) / countTokens([text], 'o200k_base');
    expect(ratio).toBeGreaterThanOrEqual(floor);
    expect(ratio).toBeLessThanOrEqual(1.35);
  });

  it('given long runs of one character, when estimated, then they stay within a few times the exact count', () => {
    for (const text of [' '.repeat(4000), '='.repeat(4000), `${'-'.repeat(80)}\n`.repeat(50)]) {
      const ratio = estimateTextTokens(text) / countTokens([text], 'o200k_base');
      expect(ratio).toBeGreaterThanOrEqual(0.95);
      expect(ratio).toBeLessThanOrEqual(3.5);
    }
  });

  it('given Chinese text, when estimated, then it counts about a token a character, never under the exact count', () => {
    const text = '这是一个用于测试的中文句子，包含标点符号。'.repeat(50);
    expect(estimateTextTokens(text)).toBe(text.length);
    expect(estimateTextTokens(text)).toBeGreaterThanOrEqual(countTokens([text], 'o200k_base'));
  });

  it('given pieces, when estimated, then each costs what its class costs', () => {
    expect(estimateTextTokens('')).toBe(0);
    expect(estimateTextTokens('hello world')).toBe(2);
    expect(estimateTextTokens('internationalization')).toBe(6);
    expect(estimateTextTokens('1234567')).toBe(3);
    expect(estimateTextTokens('a\n\nb')).toBe(3);
    expect(estimateTextTokens('a    b')).toBe(3);
    expect(estimateTextTokens('=>{}')).toBe(2);
  });
});

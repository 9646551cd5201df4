import fc from 'fast-check';
/**
 * Search text: given a text or a query / when it is tokenized or parsed /
 * then the terms, the tsquery and the snippet ranges.
 */
import { searchDocuments, TOOL_OUTPUT_INDEX_CHARS } from './documents';
import { holdsEveryTerm, parseSearchQuery } from './query';
import { snippetOf } from './snippet';
import { MAX_WORD_LENGTH, tokenize, tsvectorLiteral } from './text';

const terms = (text: string) => tokenize(text).map((t) => t.term);

describe('tokenize', () => {
  it('given words in Latin, Cyrillic and Greek scripts, then each word case-folded', () => {
    expect(terms('Fix the Rückerstattungsfehler, Ошибка ΣΦΑΛΜΑ')).toEqual(['fix', 'the', 'rückerstattungsfehler', 'ошибка', 'σφαλμα']);
  });

  it('given a path, an identifier and an error code, then their parts at consecutive positions', () => {
    const tokens = tokenize('see src/payments/refund.ts: ERR_OSSL_EVP_UNSUPPORTED E0502');
    expect(tokens.map((t) => t.term)).toEqual(['see', 'src', 'payments', 'refund', 'ts', 'err', 'ossl', 'evp', 'unsupported', 'e0502']);
    expect(tokens.map((t) => t.position)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('given Japanese without spaces, then overlapping bigrams and the last character alone', () => {
    expect(tokenize('返金バグ').map((t) => [t.term, t.kind, t.start, t.end])).toEqual([
      ['返金', 'bigram', 0, 2],
      ['金バ', 'bigram', 1, 3],
      ['バグ', 'bigram', 2, 4],
      ['グ', 'tail', 3, 4],
    ]);
  });

  it('given Japanese next to Latin, then the scripts split where they meet', () => {
    expect(terms('refundの修正')).toEqual(['refund', 'の修', '修正', '正']);
  });

  it('given full-width letters, then NFKC folds them to their ASCII form', () => {
    expect(terms('ＥＲＲ１２')).toEqual(['err12']);
  });

  it('given a word longer than the bound, then it is skipped', () => {
    expect(terms(`a ${'x'.repeat(MAX_WORD_LENGTH + 1)} b`)).toEqual(['a', 'b']);
  });

  it('given any ASCII text, then the same tokens as the general path gives it (forced by a trailing no-break space)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii', maxLength: 300 }), (text) => {
        expect(tokenize(text)).toEqual(tokenize(`${text}\u00a0`));
      }),
      { seed: 20261127, numRuns: 2000 },
    );
    expect(tokenize(`${'ab_'.repeat(30)}${'x'.repeat(MAX_WORD_LENGTH + 1)} Z9`).map((t) => t.term).slice(-2)).toEqual(['ab', 'z9']);
  });
});

describe('tsvectorLiteral', () => {
  it('given repeated terms and a quote, then each lexeme once with its positions, quoted', () => {
    expect(tsvectorLiteral(tokenize("it's it"))).toBe("'it':1,3 's':2");
    expect(tsvectorLiteral(tokenize("l'état"))).toBe("'l':1 'état':2");
  });
});

describe('parseSearchQuery', () => {
  it('given two words, then both are required', () => {
    expect(parseSearchQuery('Refund rounding').tsquery).toBe("'refund' & 'rounding'");
  });

  it('given a quoted phrase, then its words adjacent and in order', () => {
    expect(parseSearchQuery('"rounding bug" refund').tsquery).toBe("('rounding' <-> 'bug') & 'refund'");
  });

  it('given a path or an identifier, then a phrase of its parts', () => {
    expect(parseSearchQuery('src/payments/refund.ts').tsquery).toBe("('src' <-> 'payments' <-> 'refund' <-> 'ts')");
    expect(parseSearchQuery('ERR_OSSL_EVP_UNSUPPORTED').tsquery).toBe("('err' <-> 'ossl' <-> 'evp' <-> 'unsupported')");
  });

  it('given a trailing star, then a prefix of the last word', () => {
    const query = parseSearchQuery('Rückerstattung* src/pay*');
    expect(query.tsquery).toBe("'rückerstattung':* & ('src' <-> 'pay':*)");
    expect(query.prefixes).toEqual(['rückerstattung', 'pay']);
  });

  it('given Japanese, then a phrase of its bigrams; before another word, at the distance the last character takes', () => {
    expect(parseSearchQuery('返金処理').tsquery).toBe("('返金' <-> '金処' <-> '処理')");
    expect(parseSearchQuery('"返金 bug"').tsquery).toBe("('返金' <2> 'bug')");
  });

  it('given one kanji, then a prefix of the bigrams it starts', () => {
    expect(parseSearchQuery('金').tsquery).toBe("'金':*");
  });

  it('given an unclosed quote, then the phrase runs to the end', () => {
    expect(parseSearchQuery('"rounding bug').tsquery).toBe("('rounding' <-> 'bug')");
  });

  it('given a quote or backslash inside a word, then it is a separator, never tsquery syntax', () => {
    expect(parseSearchQuery("o'brien & x\\y | !z").tsquery).toBe("('o' <-> 'brien') & ('x' <-> 'y') & 'z'");
  });

  it('given no word, or too many, then 400 invalid_query', () => {
    expect(() => parseSearchQuery('  !!! * ""')).toThrow(expect.objectContaining({ code: 'invalid_query' }));
    expect(() => parseSearchQuery(Array.from({ length: 17 }, (_, i) => `w${i}`).join(' '))).toThrow(expect.objectContaining({ code: 'invalid_query' }));
    expect(() => parseSearchQuery('x'.repeat(501))).toThrow(expect.objectContaining({ code: 'invalid_query' }));
  });
});

describe('snippetOf', () => {
  it('given a short text, then all of it with the matched words marked', () => {
    const text = 'The refund rounding bug is fixed in src/payments/refund.ts';
    const snippet = snippetOf(text, parseSearchQuery('refund'));
    expect(snippet.text).toBe(text);
    expect(snippet.highlights.map(([s, e]) => text.slice(s, e))).toEqual(['refund', 'refund']);
  });

  it('given a long text, then a window around the matches with ellipses, offsets into the snippet', () => {
    const text = `${'lorem ipsum '.repeat(100)}the ERR_OSSL_EVP_UNSUPPORTED error${' dolor sit'.repeat(100)}`;
    const snippet = snippetOf(text, parseSearchQuery('ERR_OSSL_EVP_UNSUPPORTED'));
    expect(snippet.text.startsWith('…')).toBe(true);
    expect(snippet.text.endsWith('…')).toBe(true);
    expect(snippet.highlights.map(([s, e]) => snippet.text.slice(s, e))).toEqual(['ERR_OSSL_EVP_UNSUPPORTED']);
  });

  it('given Japanese, then the matched substring marked as one range', () => {
    const snippet = snippetOf('支払いの返金処理でバグ', parseSearchQuery('返金処理'));
    expect(snippet.highlights.map(([s, e]) => snippet.text.slice(s, e))).toEqual(['返金処理']);
  });

  it('given one kanji, then only that character is marked', () => {
    const snippet = snippetOf('返金処理', parseSearchQuery('金'));
    expect(snippet.highlights).toEqual([[1, 2]]);
  });

  it('given a prefix, then the whole words it starts are marked', () => {
    const snippet = snippetOf('Die Rückerstattungsfehler sind behoben', parseSearchQuery('rückerstattung*'));
    expect(snippet.highlights.map(([s, e]) => snippet.text.slice(s, e))).toEqual(['Rückerstattungsfehler']);
  });
});

describe('searchDocuments', () => {
  it('given a message with text, a tool call and a result, then one document per part with role and tool', () => {
    const docs = searchDocuments('message.added', {
      message: {
        id: 'm',
        role: 'assistant',
        parts: [
          { type: 'text', text: 'Running it' },
          { type: 'tool_call', callId: 'c1', name: 'bash', input: { cmd: 'npm test' } },
          { type: 'file', mediaType: 'image/png', data: 'AAAA' },
        ],
      },
    });
    expect(docs).toEqual([
      { part: 0, role: 'assistant', partType: 'text', toolName: null, text: 'Running it' },
      { part: 1, role: 'assistant', partType: 'tool_call', toolName: 'bash', text: 'bash {"cmd":"npm test"}' },
    ]);
  });

  it('given a large tool output, then only its head is indexed', () => {
    const [doc] = searchDocuments('message.added', {
      message: { id: 'm', role: 'tool', parts: [{ type: 'tool_result', callId: 'c1', name: 'bash', output: 'x '.repeat(TOOL_OUTPUT_INDEX_CHARS) }] },
    });
    expect(doc.text.length).toBe(TOOL_OUTPUT_INDEX_CHARS);
    expect(doc.toolName).toBe('bash');
  });

  it('given a compaction, a pin and a step, then the summary and the pin; nothing of the step', () => {
    expect(searchDocuments('compaction.completed', { summary: 'Fixed the refund' })[0]).toMatchObject({ partType: 'summary', text: 'Fixed the refund' });
    expect(searchDocuments('pin.added', { pinId: 'p', text: 'Never force-push' })[0]).toMatchObject({ partType: 'pin', role: null });
    expect(searchDocuments('step.finished', { usage: { input_tokens: 1, output_tokens: 1 } })).toEqual([]);
  });
});

describe('holdsEveryTerm (what an unindexed text must hold to be matched at all)', () => {
  const holds = (text: string, q: string) => holdsEveryTerm(text, parseSearchQuery(q));

  it("given every word, a path's parts and a prefix's word, then true, in any order (the phrase is for PostgreSQL)", () => {
    expect(holds('Rounding bug in the Refund', 'refund rounding')).toBe(true);
    expect(holds('ts refund payments src', 'src/payments/refund.ts')).toBe(true);
    expect(holds('Rückerstattungsfehler', 'rückerstattung*')).toBe(true);
    expect(holds('支払いの返金処理で', '返金処理')).toBe(true);
    expect(holds('丸め', '丸')).toBe(true);
  });

  it('given a word missing, or a prefix no word starts with, then false', () => {
    expect(holds('the refund', 'refund rounding')).toBe(false);
    expect(holds('refunds', 'refund')).toBe(false);
    expect(holds('the refund', 'ref* zebra*')).toBe(false);
    expect(holds('返金の処理', '返金処理')).toBe(false);
  });
});

import { parseSummaryResponse } from './summary-parse';

describe('parseSummaryResponse', () => {
  it('reads <retain> and <summary>', () => {
    const text = 'Sure.\n<retain>\nref=abc\n</retain>\n<summary>\n## Goal\n- ship it\n</summary>\nDone.';
    expect(parseSummaryResponse(text, 1_000)).toEqual({
      ok: true,
      value: { summary: '## Goal\n- ship it', retain: 'ref=abc', tokens: 7 },
    });
  });

  it('takes the whole text as the summary when there are no tags', () => {
    expect(parseSummaryResponse('  ## Goal\n- ship it  ', 1_000)).toMatchObject({ ok: true, value: { summary: '## Goal\n- ship it', retain: null } });
  });

  it('takes the text around a lone <retain> block as the summary', () => {
    expect(parseSummaryResponse('<retain>ref=1</retain>\nThe summary.', 1_000)).toMatchObject({
      ok: true,
      value: { summary: 'The summary.', retain: 'ref=1' },
    });
  });

  it('reads the last block, and a block the reply was cut off in', () => {
    expect(parseSummaryResponse('I will write <summary>draft</summary> then <summary>final</summary>', 1_000)).toMatchObject({
      ok: true,
      value: { summary: 'final' },
    });
    expect(parseSummaryResponse('<summary>\nGoal: ship', 1_000)).toMatchObject({ ok: true, value: { summary: 'Goal: ship' } });
  });

  it('rejects an empty summary', () => {
    expect(parseSummaryResponse('<summary>  </summary>', 1_000)).toEqual({
      ok: false,
      error: { code: 'empty', message: 'the summarizer returned no summary', tokens: 0, limit: 1_000 },
    });
    expect(parseSummaryResponse('', 1_000)).toMatchObject({ ok: false, error: { code: 'empty' } });
  });

  it('rejects a summary above the target size', () => {
    expect(parseSummaryResponse(`<summary>${'x'.repeat(404)}</summary>`, 100)).toEqual({
      ok: false,
      error: { code: 'oversized', message: 'the summary is 101 tokens, above the 100-token target', tokens: 101, limit: 100 },
    });
  });
});

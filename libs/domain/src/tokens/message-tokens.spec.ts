import { FilePart, Message } from '../events';
import { estimateMessageTokens, MEDIA_TOKENS } from './message-tokens';
import { countTokens } from './tokenizer';

const message = (parts: Message['parts']): Message => ({ id: 'm1', role: 'assistant', parts });
const image: FilePart = { type: 'file', mediaType: 'image/png', data: 'aGVsbG8=' };

describe('estimateMessageTokens', () => {
  it('counts ceil(chars / 4) over the whole message when the model has no public tokenizer', () => {
    // 5 + 4 chars of text and reasoning: ceil(9 / 4)
    expect(estimateMessageTokens(message([{ type: 'text', text: 'hello' }, { type: 'reasoning', text: 'hmm.' }]), 'claude-opus-4-5')).toBe(3);
  });

  it('counts a tool call as its name plus its JSON input', () => {
    // 'bash' + '{"cmd":"ls"}' = 16 chars
    const tokens = estimateMessageTokens(message([{ type: 'tool_call', callId: 'c1', name: 'bash', input: { cmd: 'ls' } }]), 'claude-opus-4-5');
    expect(tokens).toBe(4);
  });

  it('counts a tool result by its in-context view, plus each attachment as one media item', () => {
    const result: Message = {
      id: 't1',
      role: 'tool',
      parts: [{ type: 'tool_result', callId: 'c1', name: 'bash', output: 'x'.repeat(40), attachments: [image, image] }],
    };
    expect(estimateMessageTokens(result, 'gemini-2.5-pro')).toBe(10 + 2 * MEDIA_TOKENS);
  });

  it('counts an image or file at a flat rate whatever its size', () => {
    expect(estimateMessageTokens(message([image]), 'claude-opus-4-5')).toBe(MEDIA_TOKENS);
  });

  it('uses the real tokenizer of OpenAI models', () => {
    expect(estimateMessageTokens(message([{ type: 'text', text: 'hello world' }]), 'gpt-4o')).toBe(2);
    expect(estimateMessageTokens(message([{ type: 'text', text: 'hello world' }]), 'gpt-4')).toBe(2);
  });
});

describe('countTokens', () => {
  it('counts special-token text as plain text instead of throwing', () => {
    expect(countTokens(['say <|endoftext|> now'], 'o200k_base')).toBeGreaterThan(3);
  });

  it('matches the exact count on ordinary text below the exact-count limit', () => {
    expect(countTokens(['The quick brown fox jumps over the lazy dog. '.repeat(100)], 'o200k_base')).toBe(1_001);
  });

  it('extrapolates beyond the exact-count limit to within 1% on uniform text', () => {
    const prose = 'The quick brown fox jumps over the lazy dog. '.repeat(5_000); // 50,001 tokens exactly
    expect(Math.abs(countTokens([prose], 'o200k_base') - 50_001)).toBeLessThan(500);
  });

  it('stays fast on a hostile single word (BPE is quadratic in a piece)', () => {
    const started = Date.now();
    const tokens = countTokens(['a'.repeat(1_000_000)], 'o200k_base');
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(tokens).toBeGreaterThan(50_000);
  });
});

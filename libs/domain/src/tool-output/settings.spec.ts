import { PRESETS } from '../config/presets';
import { viewConfigOfSettings } from './settings';

describe('viewConfigOfSettings', () => {
  it('maps the seed defaults onto the view builder', () => {
    expect(viewConfigOfSettings(PRESETS['spec-001'].toolOutput)).toEqual({
      enabled: true,
      maxLineLength: 2000,
      maxMessageBytes: 50 * 1024,
      maxLines: 2000,
      mode: 'head_tail',
    });
  });

  it("keeps Codex's truncation policy and the head mode of OpenCode", () => {
    expect(viewConfigOfSettings(PRESETS.codex.toolOutput).truncation).toEqual({ tokens: 10_000 });
    expect(viewConfigOfSettings(PRESETS.opencode.toolOutput).mode).toBe('head');
  });

  it('applies maxChars as a byte cap when it is the smaller limit', () => {
    const settings = { ...PRESETS['spec-001'].toolOutput, maxChars: 4096 };
    expect(viewConfigOfSettings(settings).maxMessageBytes).toBe(4096);
  });
});

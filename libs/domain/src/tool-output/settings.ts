/** From a session's resolved `toolOutput` settings to the view builder's configuration. */
import type { ToolOutputConfig } from '../config/types';
import { ToolOutputViewConfig } from './in-context-view';

/**
 * The in-context view a session's tool results get. Seed 001's `maxChars`
 * (code points) is applied as a byte cap, since every code point takes at
 * least one byte: the view never exceeds it, and for ASCII the cap is exact.
 * `enabled` is left on: the caller decides what a disabled cache means (an
 * inline output is then kept whole, while an uploaded one, which may be far
 * larger than any event, still gets a view).
 */
export function viewConfigOfSettings(settings: ToolOutputConfig): ToolOutputViewConfig {
  return {
    enabled: true,
    maxLineLength: settings.maxLineLength,
    maxMessageBytes: Math.min(settings.maxMessageBytes, settings.maxChars),
    maxLines: settings.maxLines,
    mode: settings.mode,
    ...(settings.truncation ? { truncation: settings.truncation } : {}),
  };
}

import { Message } from '../../events';
import { AiSdkMessage, renderAiSdk } from './ai-sdk';
import { AnthropicMessage, AnthropicRenderOptions, AnthropicTextBlock, renderAnthropic } from './anthropic';
import { renderNeutral } from './neutral';
import { OpenAIChatMessage, renderOpenAIChat } from './openai-chat';
import { renderOpenAIResponses, ResponsesInputItem } from './openai-responses';
import { RenderableView } from './renderable-view';

export * from './ai-sdk';
export * from './anthropic';
export * from './neutral';
export * from './openai-chat';
export * from './openai-responses';
export * from './renderable-view';

export const CONTEXT_FORMATS = ['neutral', 'openai', 'openai-responses', 'anthropic', 'ai-sdk'] as const;
export type ContextFormat = (typeof CONTEXT_FORMATS)[number];

export type RenderedContext =
  | { format: 'neutral'; messages: Message[] }
  | { format: 'openai'; messages: OpenAIChatMessage[] }
  | { format: 'openai-responses'; input: ResponsesInputItem[] }
  | { format: 'anthropic'; system?: string | AnthropicTextBlock[]; messages: AnthropicMessage[] }
  | { format: 'ai-sdk'; system?: string; messages: AiSdkMessage[] };

/**
 * The view in a provider's request shape, ready to send unchanged. Cache
 * breakpoints (`options.cacheTtl`) are the Anthropic format's alone: OpenAI
 * caches prefixes without markers.
 */
export function renderContext(view: RenderableView, format: ContextFormat, options: AnthropicRenderOptions = {}): RenderedContext {
  switch (format) {
    case 'neutral':
      return { format, messages: renderNeutral(view) };
    case 'openai':
      return { format, messages: renderOpenAIChat(view) };
    case 'openai-responses':
      return { format, input: renderOpenAIResponses(view) };
    case 'anthropic':
      return { format, ...renderAnthropic(view, options) };
    case 'ai-sdk':
      return { format, ...renderAiSdk(view) };
  }
}

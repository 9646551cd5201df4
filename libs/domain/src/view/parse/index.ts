export { parseAiSdk } from './ai-sdk';
export { parseAnthropic } from './anthropic';
export type { NativeMessage, NativePart, NativeToolResultPart } from './native-message';
export { parseOpenAIChat } from './openai-chat';
export { parseOpenAIResponses } from './openai-responses';

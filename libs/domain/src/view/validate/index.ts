export * from './anthropic';
export * from './openai-chat';
export * from './openai-responses';

export * from './summarizer';
export * from './heuristic.summarizer';
export * from './openai.summarizer';
export * from './anthropic.summarizer';
export * from './summarizers';
export * from './summary-chain';
export * from './summarizer.module';
export * from './tool-output-loader';

import { Global, Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@app/config';
import { Database } from '@app/database';
import { WindowSummarizer } from './summarize-window';
import { SummaryChain } from './summary-chain';
import { Summarizers } from './summarizers';

/** The summarizers configured from the environment, the fallback chain over them and the pipeline that feeds it (API dry runs and the worker). */
@Global()
@Module({
  providers: [
    { provide: Summarizers, inject: [APP_CONFIG], useFactory: (c: AppConfig) => new Summarizers(c.summarizer) },
    {
      provide: SummaryChain,
      inject: [Summarizers, APP_CONFIG],
      useFactory: (s: Summarizers, c: AppConfig) => new SummaryChain(s, { timeoutMs: c.summarizer.timeoutMs, retryBackoffMs: c.summarizer.retryBackoffMs }),
    },
    { provide: WindowSummarizer, inject: [Database, SummaryChain], useFactory: (db: Database, chain: SummaryChain) => new WindowSummarizer(db, chain) },
  ],
  exports: [Summarizers, SummaryChain, WindowSummarizer],
})
export class SummarizerModule {}

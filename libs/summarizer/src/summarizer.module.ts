import { Global, Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@app/config';
import { SummaryChain } from './summary-chain';
import { Summarizers } from './summarizers';

/** The summarizers configured from the environment and the fallback chain over them (API dry runs and the worker). */
@Global()
@Module({
  providers: [
    { provide: Summarizers, inject: [APP_CONFIG], useFactory: (c: AppConfig) => new Summarizers(c.summarizer) },
    {
      provide: SummaryChain,
      inject: [Summarizers, APP_CONFIG],
      useFactory: (s: Summarizers, c: AppConfig) => new SummaryChain(s, { timeoutMs: c.summarizer.timeoutMs, retryBackoffMs: c.summarizer.retryBackoffMs }),
    },
  ],
  exports: [Summarizers, SummaryChain],
})
export class SummarizerModule {}

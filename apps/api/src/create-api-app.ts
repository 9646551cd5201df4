import { ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule } from '@nestjs/swagger';
import type { Logger } from 'pino';
import { AppConfig } from '@app/config';
import { invalid } from '@app/domain';
import { PinoNestLogger } from '@app/logging';
import { ApiModule } from './api.module';
import { installBodyParsing } from './http/body-parsing';
import { TimedExpressAdapter } from './http/http-server';
import { requestIdAndLog } from './http/request-logging';
import { securityHeaders } from './http/security-headers';
import { ProblemFilter } from './http/problem.filter';
import { ClassBodyPipe } from './http/class-body.pipe';
import { SessionIdPipe } from './http/session-id.pipe';
import { buildOpenApiDocument } from './openapi/document';
import { Metrics } from './metrics/metrics';
import { timeRequests } from './metrics/request-timing';

/** Builds the HTTP app (not listening). */
export async function createApiApp(config: AppConfig, logger: Logger): Promise<NestExpressApplication> {
  const adapter = new TimedExpressAdapter({ requestTimeoutMs: config.http.requestTimeoutMs, headersTimeoutMs: config.http.headersTimeoutMs });
  const app = await NestFactory.create<NestExpressApplication>(ApiModule.forRoot(config), adapter, {
    // JSON bodies are read after authentication (JsonBodyReader), not by a middleware before it.
    bodyParser: false,
    logger: new PinoNestLogger(logger),
  });
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(securityHeaders());
  app.use(requestIdAndLog(logger));
  app.use(timeRequests(app.get(Metrics)));
  installBodyParsing(app);
  app.useGlobalFilters(new ProblemFilter(logger));
  app.useGlobalPipes(
    new SessionIdPipe(),
    new ClassBodyPipe(),
    new ValidationPipe({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      exceptionFactory: (errors) =>
        invalid(
          'validation_failed',
          errors.map((e) => `${e.property}: ${Object.values(e.constraints ?? { invalid: 'is invalid' }).join(', ')}`).join('; '),
          { fields: errors.map((e) => e.property) },
        ),
    }),
  );
  const document = buildOpenApiDocument(app);
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json' });
  return app;
}

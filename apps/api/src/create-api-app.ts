import { Logger, ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { AppConfig, logLevels } from '@app/config';
import { invalid } from '@app/domain';
import { ApiModule } from './api.module';
import { installBodyParsing } from './http/body-parsing';
import { ProblemFilter } from './http/problem.filter';
import { SessionIdPipe } from './http/session-id.pipe';


/** Builds the HTTP app (not listening). */
export async function createApiApp(config: AppConfig): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(ApiModule.forRoot(config), {
    bodyParser: false,
    // Keeps each parsed body's bytes (req.rawBody) for the UTF-8 check in installBodyParsing.
    rawBody: true,
    logger: logLevels(config.logLevel),
  });
  app.disable('x-powered-by');
  app.set('etag', false);
  installBodyParsing(app, config);
  app.useGlobalFilters(new ProblemFilter());
  app.useGlobalPipes(
    new SessionIdPipe(),
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
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Session store for LLM agents')
      .setDescription('Append-only session event logs, model-ready context, background compaction and pruning.')
      .setVersion('1')
      .addBearerAuth()
      .build(),
  );
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json' });
  app.enableShutdownHooks();
  const server = app.getHttpServer();
  // Slow-loris guard: headers within 10 s, the whole request (a large upload included) within the configured time.
  server.requestTimeout = config.http.requestTimeoutMs;
  server.headersTimeout = 10_000;
  Logger.log(`API configured (body limit ${config.http.maxBodyBytes} bytes)`, 'Bootstrap');
  return app;
}

import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { API_SCHEMAS, type JsonSchema } from '@app/domain';
import { PROBLEM_SCHEMA } from './problem';
import { RESPONSE_SCHEMAS } from './schemas';

/** Security scheme names: the @ApiBearerAuth(...) of each controller names one. */
export const TENANT_KEY_SCHEME = 'tenantKey';
export const ADMIN_TOKEN_SCHEME = 'adminToken';

const DESCRIPTION = `Append-only session event logs, model-ready context, background compaction and pruning.

Errors are \`application/problem+json\` (RFC 9457) with a stable \`code\` (the Problem schema lists them all).
A 429 or 503 carries Retry-After. Writes accept an \`Idempotency-Key\` header where documented.`;

/**
 * The OpenAPI 3.1 document of the API: what @nestjs/swagger derives from the
 * controllers and DTOs, plus the shared components (response bodies, the
 * Problem schema, the domain's event and config schemas), in 3.1 form.
 */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const opaque = (description: string) => ({ type: 'http' as const, scheme: 'bearer', bearerFormat: 'API key (opaque)', description });
  const config = new DocumentBuilder()
    .setTitle('Session store for LLM agents')
    .setDescription(DESCRIPTION)
    .setVersion('1')
    .setOpenAPIVersion('3.1.0')
    .addServer('http://127.0.0.1:3000', 'A local instance (npm start)')
    .addBearerAuth(opaque("A tenant's API key (`sst_…`), issued by the admin API; `Authorization: Bearer <key>`"), TENANT_KEY_SCHEME)
    .addBearerAuth(opaque('The operator token (ADMIN_TOKEN_SCHEME) of the /v1/admin API'), ADMIN_TOKEN_SCHEME)
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    // Stable, readable operation ids for generated clients: `SessionsController_create` → `sessions_create`.
    operationIdFactory: (controller, method) => `${controller.replace(/Controller$/, '').replace(/^./, (c) => c.toLowerCase())}_${method}`,
  });
  const json = JSON.parse(JSON.stringify(document)) as JsonSchema & { components: { schemas: Record<string, JsonSchema> } };
  json.components.schemas = { ...json.components.schemas, ...API_SCHEMAS, ...RESPONSE_SCHEMAS, Problem: PROBLEM_SCHEMA };
  inlineRequestBodies(json);
  markOptionalBodiesAndPublicOperations(json);
  // @nestjs/swagger writes the 3.0 dialect (`nullable`); the document declares 3.1, so that is rewritten.
  return toJsonSchemaNulls(json) as unknown as OpenAPIObject;
}

interface Operation {
  security?: unknown[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
}

const operationsOf = (document: { paths?: unknown }): Operation[] =>
  Object.values(document.paths as Record<string, Record<string, Operation>>).flatMap((item) => Object.values(item));

/**
 * A JSON body whose fields are all optional may be left out (the service reads it as `{}`);
 * an operation with no scheme (health, metrics) is public, which 3.1 says with an empty `security`.
 */
function markOptionalBodiesAndPublicOperations(document: { paths?: unknown; components: { schemas: Record<string, JsonSchema> } }): void {
  for (const operation of operationsOf(document)) {
    operation.security ??= [];
    const json = operation.requestBody?.content?.['application/json']?.schema;
    if (!json) continue;
    const schema = typeof json.$ref === 'string' ? document.components.schemas[json.$ref.replace('#/components/schemas/', '')] : json;
    if (!Array.isArray(schema?.required) || schema.required.length === 0) operation.requestBody!.required = false;
  }
}

/** `nullable: true` (OpenAPI 3.0) → a `null` type (JSON Schema 2020-12), everywhere. */
function toJsonSchemaNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toJsonSchemaNulls);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value).map(([key, child]) => [key, toJsonSchemaNulls(child)] as const);
  const { nullable, ...rest } = Object.fromEntries(entries) as Record<string, unknown>;
  if (nullable !== true) return rest;
  if (typeof rest.type === 'string') return { ...rest, type: [rest.type, 'null'], ...(Array.isArray(rest.enum) ? { enum: [...rest.enum, null] } : {}) };
  const { description, ...schema } = rest;
  return { ...(description === undefined ? {} : { description }), oneOf: [schema, { type: 'null' }] };
}

/**
 * Request bodies with defaults get their schema inline instead of a component $ref.
 * openapi-typescript makes a component property with a `default` required
 * (right for answers, which always carry it); only inline request bodies
 * are exempt, so a client need not send what the server defaults.
 */
function inlineRequestBodies(document: { paths?: unknown; components: { schemas: Record<string, JsonSchema> } }): void {
  const inlined = new Set<string>();
  for (const operation of operationsOf(document)) {
    for (const media of Object.values(operation.requestBody?.content ?? {})) {
      const name = typeof media.schema?.$ref === 'string' ? media.schema.$ref.replace('#/components/schemas/', '') : undefined;
      if (name === undefined || !JSON.stringify(document.components.schemas[name] ?? {}).includes('"default"')) continue;
      media.schema = document.components.schemas[name];
      inlined.add(name);
    }
  }
  const text = JSON.stringify(document);
  for (const name of inlined) if (!text.includes(`"#/components/schemas/${name}"`)) delete document.components.schemas[name];
}

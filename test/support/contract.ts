import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';

/**
 * The contract test: every answer an e2e spec gets through Client.request is
 * checked against the OpenAPI document the service itself serves at
 * /docs-json — its operation (method and path template), its status, its
 * media type and, for JSON, its body against the schema. Anything the
 * document does not declare fails the request, so the document and the
 * service cannot drift.
 */

interface MediaTypeObject {
  schema?: unknown;
}
interface ResponseObject {
  content?: Record<string, MediaTypeObject>;
  headers?: Record<string, { required?: boolean }>;
}
interface OperationObject {
  responses: Record<string, ResponseObject>;
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, OperationObject>>;
}

/** Outside the API contract: the inspector's static page and the document itself. */
const UNDOCUMENTED = [/^\/inspect(\/|$)/, /^\/docs(-json)?(\/|$)/];

const isJson = (mediaType: string) => mediaType === 'application/json' || mediaType.endsWith('+json');

// RFC 3339 date-time, as the service writes it (toISOString) and as clients may.
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const escapePointer = (token: string) => token.replace(/~/g, '~0').replace(/\//g, '~1');

export class Contract {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly templates: Array<{ template: string; segments: string[]; literals: number }>;

  constructor(private readonly document: OpenApiDocument) {
    this.ajv.addFormat('date-time', DATE_TIME);
    this.ajv.addFormat('uuid', UUID);
    this.ajv.addFormat('uri', (value: string) => URL.canParse(value));
    this.ajv.addFormat('uri-reference', true);
    this.ajv.addFormat('binary', true);
    // The document is one schema resource: `#/components/schemas/…` and pointers into its paths resolve within it.
    this.ajv.addSchema(document as object, 'openapi');
    this.templates = Object.keys(document.paths)
      .map((template) => {
        const segments = template.split('/').slice(1);
        return { template, segments, literals: segments.filter((s) => !s.startsWith('{')).length };
      })
      .sort((a, b) => b.literals - a.literals);
  }

  /** Throws, naming the operation and what differs, when the answer is not one the document declares. */
  check(method: string, url: string, status: number, headers: Headers, text: string): void {
    const contentType = headers.get('content-type');
    const path = new URL(url, 'http://contract').pathname;
    if (UNDOCUMENTED.some((pattern) => pattern.test(path))) return;
    const verb = method.toLowerCase();
    const found = this.operation(verb, path);
    const mediaType = (contentType ?? '').split(';')[0].trim().toLowerCase();
    if (!found) {
      // No route: the service's 404 route_not_found problem is the only documented answer.
      const body = this.parse(text, `${method} ${path}`);
      if (status === 404 && mediaType === 'application/problem+json') return this.validate('#/components/schemas/Problem', body, `${method} ${path} (no route)`);
      throw new Error(`contract: ${method} ${path} matches no documented operation, and the answer (${status}) is not a route_not_found problem`);
    }
    const { template, operation } = found;
    const where = `${method} ${template} → ${status}`;
    const key = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => operation.responses[k] !== undefined);
    if (key === undefined) {
      throw new Error(`contract: ${where} is not declared (declared: ${Object.keys(operation.responses).join(', ')}); body: ${text.slice(0, 300)}`);
    }
    const declared = operation.responses[key];
    for (const [name, header] of Object.entries(declared.headers ?? {})) {
      if (header.required && !headers.has(name)) throw new Error(`contract: ${where} declares the header ${name} as required; it is missing`);
    }
    const content = declared.content;
    if (!content) {
      if (text !== '') throw new Error(`contract: ${where} declares no body, got ${text.slice(0, 200)}`);
      return;
    }
    if (!content[mediaType]) throw new Error(`contract: ${where} answered ${mediaType || 'no content type'}; declared: ${Object.keys(content).join(', ')}`);
    // Streams, JSON Lines, bytes and metrics text are declared as such; their bodies are not JSON documents.
    if (!isJson(mediaType)) return;
    const pointer = ['#', 'paths', template, verb, 'responses', key, 'content', mediaType, 'schema'].map((t, i) => (i === 0 ? t : escapePointer(t))).join('/');
    const body = this.parse(text, where);
    this.validate(pointer, body, where);
    // A problem's own status is the HTTP status (RFC 9457).
    if (mediaType === 'application/problem+json' && (body as { status?: unknown }).status !== status) {
      throw new Error(`contract: ${where} is a problem whose status says ${String((body as { status?: unknown }).status)}`);
    }
  }

  private operation(verb: string, path: string): { template: string; operation: OperationObject } | undefined {
    const segments = path.replace(/(.)\/$/, '$1').split('/').slice(1);
    for (const { template, segments: pattern } of this.templates) {
      const operation = this.document.paths[template][verb];
      if (!operation || pattern.length !== segments.length) continue;
      if (pattern.every((p, i) => (p.startsWith('{') ? segments[i] !== '' : p === segments[i]))) return { template, operation };
    }
    return undefined;
  }

  private parse(text: string, where: string): unknown {
    try {
      return JSON.parse(text);
    } catch {
      throw new Error(`contract: ${where} declares JSON, got ${text.slice(0, 200)}`);
    }
  }

  private validate(pointer: string, body: unknown, where: string): void {
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `openapi${pointer}` });
      this.validators.set(pointer, validate);
    }
    if (!validate(body)) {
      // In a union (oneOf) every branch reports; the deepest errors are those of the branch the body meant.
      const deepestFirst = [...(validate.errors ?? [])].sort((x, y) => y.instancePath.split('/').length - x.instancePath.split('/').length);
      const errors = deepestFirst.slice(0, 5).map((e) => `${e.instancePath || '(body)'} ${e.message} ${JSON.stringify(e.params)}`);
      throw new Error(`contract: ${where} body does not match the document: ${errors.join('; ')}; body: ${JSON.stringify(body).slice(0, 500)}`);
    }
  }
}

const contracts = new Map<string, Promise<Contract>>();

/** The contract of the service at baseUrl, from its own /docs-json, fetched once. */
export function contractOf(baseUrl: string): Promise<Contract> {
  let contract = contracts.get(baseUrl);
  if (!contract) {
    contract = fetch(`${baseUrl}/docs-json`).then(async (response) => {
      if (response.status !== 200) throw new Error(`contract: GET /docs-json answered ${response.status}`);
      return new Contract((await response.json()) as OpenApiDocument);
    });
    // A failed fetch (the service not up yet) is tried again by the next request.
    contract.catch(() => contracts.delete(baseUrl));
    contracts.set(baseUrl, contract);
  }
  return contract;
}

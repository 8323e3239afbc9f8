import type { TSchema } from '@sinclair/typebox';
import type { MethodCatalog } from './catalog.js';

const ErrorBody = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' } },
    },
  },
};

/** Plain JSON Schema: TypeBox adds symbol keys that JSON drops anyway. */
function plain(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

/**
 * OpenAPI 3.1 for the gateway. Each method has its own path (`POST /api/v1/memex/<name>`,
 * params as the body, result as the answer) besides the generic `POST /api/v1/memex/rpc`.
 */
export function buildOpenApi(catalog: MethodCatalog, version: string): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const method of catalog.list()) {
    const short = method.name.replace(/^memex\./, '');
    paths[`/api/v1/memex/${short}`] = {
      post: {
        operationId: method.name,
        summary: method.summary,
        tags: [method.service],
        description: `${method.kind === 'command' ? 'Command' : 'Query'} answered by the ${method.service} service.${method.access === 'owner' ? ' Owner token only.' : ''}`,
        requestBody: { required: true, content: { 'application/json': { schema: plain(method.params) } } },
        responses: {
          '200': {
            description: 'the result',
            content: {
              'application/json': { schema: { type: 'object', properties: { result: plain(method.result) } } },
            },
          },
          default: {
            description: 'an error naming what is wrong',
            content: { 'application/json': { schema: ErrorBody } },
          },
        },
      },
    };
  }
  paths['/api/v1/memex/rpc'] = {
    post: {
      operationId: 'rpc',
      summary: 'Call any method as {"method", "params"}.',
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['method'],
              properties: {
                method: { type: 'string', enum: catalog.list().map((m) => m.name) },
                params: { type: 'object' },
              },
            },
          },
        },
      },
      responses: {
        '200': {
          description: '{"result": …}',
          content: { 'application/json': { schema: { type: 'object', properties: { result: {} } } } },
        },
        default: { description: 'an error', content: { 'application/json': { schema: ErrorBody } } },
      },
    },
  };
  paths['/api/v1/memex/events'] = {
    get: {
      operationId: 'events.subscribe',
      summary: 'Server-sent events: the event stream within the caller’s scope, resumable from a sequence.',
      parameters: [
        {
          name: 'from_seq',
          in: 'query',
          schema: { type: 'integer', minimum: 1 },
          description: 'first sequence to send; also honours the Last-Event-ID header',
        },
        {
          name: 'types',
          in: 'query',
          schema: { type: 'string' },
          description: 'comma-separated event types (e.g. note.put,item.deleted)',
        },
      ],
      responses: { '200': { description: 'text/event-stream; each event has `id: <seq>`' } },
    },
  };
  paths['/healthz'] = {
    get: {
      operationId: 'healthz',
      security: [],
      summary: 'Readiness: 200 with each service and the log’s last sequence, 503 before.',
      responses: { '200': { description: 'ready' }, '503': { description: 'not ready' } },
    },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Memex API',
      version,
      description: 'The memex gateway. Every call needs `Authorization: Bearer <token>`.',
    },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    security: [{ bearer: [] }],
    paths,
  };
}

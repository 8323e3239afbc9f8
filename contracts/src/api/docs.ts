import type { TSchema } from '@sinclair/typebox';
import { eventCatalog } from '../events/catalog.js';
import { apiCatalog } from './catalog.js';

interface JsonSchema {
  type?: string;
  anyOf?: JsonSchema[];
  const?: unknown;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  patternProperties?: Record<string, JsonSchema>;
  required?: string[];
}

/** A JSON Schema as a short type expression: `{ id: string, labels?: string[] }`. */
function typeOf(schema: JsonSchema | undefined, depth = 0): string {
  if (!schema || depth > 4) return 'any';
  if (schema.anyOf) return schema.anyOf.map((s) => typeOf(s, depth + 1)).join(' | ');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  switch (schema.type) {
    case 'array':
      return `${typeOf(schema.items, depth + 1)}[]`;
    case 'object': {
      if (!schema.properties) return schema.patternProperties ? 'object' : '{}';
      const required = new Set(schema.required ?? []);
      const fields = Object.entries(schema.properties).map(
        ([key, value]: [string, JsonSchema]) => `${key}${required.has(key) ? '' : '?'}: ${typeOf(value, depth + 1)}`,
      );
      return `{ ${fields.join(', ')} }`;
    }
    case 'integer':
    case 'number':
    case 'string':
    case 'boolean':
    case 'null':
      return schema.type;
    default:
      return 'any';
  }
}

const plain = (schema: TSchema): JsonSchema => JSON.parse(JSON.stringify(schema)) as JsonSchema;

/** docs/api.md: every method and event, from the catalogs. */
export function renderApiDocs(): string {
  const lines = [
    '# API reference',
    '',
    'Generated from `contracts/src` by `npm run gen:api -w contracts`; do not edit by hand.',
    'Every method is callable as `POST /api/v1/memex/rpc` with `{"method": …, "params": …}`, as',
    '`POST /api/v1/memex/<method without memex.>` with the params as the body, and over gRPC',
    '(`contracts/api/memex.proto`). Queries accept `min_seq` (wait until the read model has applied',
    'that sequence); commands answer `seq`. Errors: `{"error": {"code", "message"}}` with codes',
    '`invalid_params` 400, `unauthorized` 401, `forbidden` 403, `not_found` 404, `conflict` 409,',
    '`too_large` 413, `internal` 500, `unavailable` 503, `timeout` 504. The full JSON Schemas are in',
    '`GET /api/v1/openapi.json`.',
    '',
    '## Methods',
    '',
  ];
  for (const method of apiCatalog.list()) {
    lines.push(`### \`${method.name}\``, '');
    lines.push(`${method.summary}`, '');
    lines.push(
      `- ${method.kind}, answered by \`${method.service}\`${method.access === 'owner' ? ', owner token only' : ''}`,
    );
    lines.push(`- params: \`${typeOf(plain(method.params))}\``);
    lines.push(`- result: \`${typeOf(plain(method.result))}\``, '');
  }
  lines.push(
    '## Events',
    '',
    'The envelope: `id` (ULID), `type`, `v`, `subject`, `occurred_at`, `recorded_at`, `actor`, `labels`, `kind?`, `spam?`, `causation_id?`, `correlation_id?`, `data`.',
    '',
  );
  for (const event of eventCatalog.list()) {
    lines.push(
      `### \`${event.type}\` v${event.v}`,
      '',
      event.description,
      '',
      `- data: \`${typeOf(plain(event.data))}\``,
      '',
    );
  }
  return lines.join('\n');
}

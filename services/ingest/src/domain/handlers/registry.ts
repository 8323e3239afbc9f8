import { FormatRegistry, type TSchema } from '@sinclair/typebox';
import { Value, type ValueError } from '@sinclair/typebox/value';
import { baseType, RejectedItem, type IngestHandler, type ItemKind, type ParsedItem } from './handler.js';
import { documentHandler } from './document/document-handler.js';
import { mailHandler } from './mail/mail-handler.js';
import { agentWorkHandler } from './agent/agent-work-handler.js';
import { calendarHandler } from './calendar/calendar-handler.js';
import { contactsHandler } from './contacts/contacts-handler.js';
import { avHandler } from './media/av-handler.js';
import { photoHandler } from './media/photo-handler.js';
import { normaliseParsed } from './normalize.js';

// TypeBox checks `format` only for formats registered here (the registry is process-wide).
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
if (!FormatRegistry.Has('date-time')) {
  FormatRegistry.Set('date-time', (v) => RFC3339.test(v) && !Number.isNaN(Date.parse(v)));
}
if (!FormatRegistry.Has('uri')) {
  FormatRegistry.Set('uri', (v) => URL.canParse(v) && /^[a-z][a-z0-9+.-]*:/i.test(v));
}

/** One handler as memex.types lists it: plain JSON. */
export interface HandlerDescription {
  name: string;
  types: string[];
  /** JSON Schema of the attributes (strict: unknown keys are rejected). */
  attributes: Record<string, unknown>;
  identity: string;
  limitBytes: number;
  produces: ItemKind[];
  /** Whether new content under a known source + external_id updates the item (documents) or not (mail). */
  updatable: boolean;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'string')
    return `string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return typeof value;
}

function expected(schema: TSchema): string {
  const format = typeof schema['format'] === 'string' ? ` (${schema['format']})` : '';
  const min = typeof schema['minLength'] === 'number' && schema['minLength'] > 0 ? ' (not empty)' : '';
  return `${String(schema['type'] ?? 'a valid value')}${format}${min}`;
}

/** The user-facing reason for one schema violation, naming the attribute. */
function attributeReason(error: ValueError, schema: TSchema): string {
  const key = error.path.split('/')[1];
  if (key === undefined || key === '') return `attributes: expected an object, got ${describeValue(error.value)}`;
  const properties = (schema['properties'] ?? {}) as Record<string, TSchema>;
  const property = properties[key];
  if (!property) return `unknown attribute ${JSON.stringify(key)} (allowed: ${Object.keys(properties).join(', ')})`;
  return `attribute ${JSON.stringify(key)}: expected ${expected(property)}, got ${describeValue(error.value)}`;
}

export class HandlerRegistry {
  private readonly byType = new Map<string, IngestHandler>();

  constructor(private readonly handlers: IngestHandler[]) {
    for (const handler of handlers) {
      for (const type of handler.types) {
        const taken = this.byType.get(type);
        if (taken) throw new Error(`type ${type} is claimed by both handler ${taken.name} and ${handler.name}`);
        this.byType.set(type, handler);
      }
    }
  }

  /** The handler for a MIME type (parameters and case ignored). */
  forType(type: string): IngestHandler {
    const handler = this.byType.get(baseType(type));
    if (!handler) throw new RejectedItem(`no handler for type ${JSON.stringify(baseType(type) || type)}`);
    return handler;
  }

  /** What memex.types returns. */
  list(): HandlerDescription[] {
    return this.handlers.map((h) => ({
      name: h.name,
      types: [...h.types],
      // JSON round trip: plain JSON Schema, without TypeBox's symbol-keyed metadata.
      attributes: JSON.parse(JSON.stringify(h.attributesSchema)) as Record<string, unknown>,
      identity: h.identityRule,
      limitBytes: h.limitBytes,
      produces: [...h.produces],
      updatable: h.updatable,
    }));
  }

  /** Checks attributes against the handler's strict schema; the reason names the first bad key. */
  validateAttributes(handler: IngestHandler, attributes: unknown): Record<string, unknown> {
    const value = attributes ?? {};
    const first = Value.Errors(handler.attributesSchema, value).First();
    if (first) throw new RejectedItem(attributeReason(first, handler.attributesSchema));
    return value as Record<string, unknown>;
  }

  /** The limit, checked before any parsing. */
  checkLimit(handler: IngestHandler, type: string, size: number): void {
    if (size > handler.limitBytes) {
      const limit = handler.limitBytes;
      throw new RejectedItem(
        `item is ${size} bytes, over the ${formatBytes(limit)} limit for ${baseType(type)} (${limit} bytes)`,
      );
    }
  }

  /**
   * One item through its handler: type → handler, limit, attributes, parse, normalise (no NUL, no
   * implausible date: see normalize.ts). Every failure is a
   * RejectedItem; one a handler did not foresee is marked `unexpected` (a bug, still per item).
   */
  async parse(input: { type: string; bytes: Buffer; attributes?: unknown }): Promise<ParsedItem> {
    const handler = this.forType(input.type);
    this.checkLimit(handler, input.type, input.bytes.length);
    const attributes = this.validateAttributes(handler, input.attributes);
    try {
      return normaliseParsed(await handler.parse({ bytes: input.bytes, type: input.type, attributes }));
    } catch (error) {
      if (error instanceof RejectedItem) throw error;
      const why = error instanceof Error ? error.message : String(error);
      throw new RejectedItem(`could not read this ${baseType(input.type)} item: ${why}`, {
        cause: error,
        unexpected: true,
      });
    }
  }
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1).replace(/\.0$/, '')} KB`;
  return `${(n / (1024 * 1024)).toFixed(1).replace(/\.0$/, '')} MB`;
}

/** The registry with every built-in handler: mail, documents, photos, calendars and contacts. */
export function createRegistry(): HandlerRegistry {
  return new HandlerRegistry([
    mailHandler,
    documentHandler,
    photoHandler,
    avHandler,
    calendarHandler,
    contactsHandler,
    agentWorkHandler,
  ]);
}

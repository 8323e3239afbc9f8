import pg from 'pg';
import { Kysely, PostgresDialect, type LogEvent } from 'kysely';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';

// int8 (bigint: sequences, counts) as JS numbers: the log stays far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

const SCHEMA_NAME = /^[a-z_][a-z0-9_]*$/;

export function assertSchemaName(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid schema name "${schema}"`);
  return schema;
}

export interface DatabaseOptions {
  /** The schema unqualified names resolve to (then `public`, where pgvector's types live). */
  schema: string;
  max?: number;
  applicationName?: string;
  /** Server settings for every connection of the pool (`-c name=value`), beside `jit = off`. */
  settings?: Record<string, string>;
}

const SETTING = /^[a-z_][a-z0-9_.]*$/;
const SETTING_VALUE = /^[A-Za-z0-9_.-]+$/;

/** Connection options for `settings`: plain names and values only, as they go into one options string. */
function settingOptions(settings: Record<string, string>): string {
  return Object.entries(settings)
    .map(([name, value]) => {
      if (!SETTING.test(name) || !SETTING_VALUE.test(value)) throw new Error(`invalid setting ${name} = "${value}"`);
      return ` -c ${name}=${value}`;
    })
    .join('');
}

/**
 * A kysely instance whose connections resolve unqualified names in one schema. Because the
 * schema is found by name on every statement, a replay can build `<schema>_next` and rename it
 * into place while this pool stays open.
 */
export function createDatabase<DB>(url: string, options: DatabaseOptions): Kysely<DB> {
  const schema = assertSchemaName(options.schema);
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    application_name: options.applicationName ?? `memex-${schema}`,
    // No JIT: compiling a plan costs tens of milliseconds, and the statements here are short
    // reads and batched writes whose estimated costs cross the JIT threshold without gaining.
    options: `-c search_path=${schema},public -c jit=off${settingOptions(options.settings ?? {})}`,
  });
  pool.on('error', (error) => console.error(`postgres pool (${schema}):`, error.message));
  // A connection kysely holds (a transaction between two statements) that Postgres drops emits
  // 'error' on its client, where the pool listens only while the client is idle: unheard, it
  // would end the process. The statement in flight fails on its own and the caller retries.
  pool.on('connect', (client) =>
    client.on('error', (error) => console.error(`postgres connection (${schema}):`, error.message)),
  );
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }), log: traceQuery });
}

const tracer = trace.getTracer('memex-db');

/** One span per statement, parented by whatever the caller was doing (an RPC, a projection). */
function traceQuery(event: LogEvent): void {
  const end = Date.now();
  const span = tracer.startSpan('pg.query', {
    kind: SpanKind.CLIENT,
    startTime: end - event.queryDurationMillis,
    attributes: { 'db.system': 'postgresql', 'db.statement': event.query.sql.slice(0, 2000) },
  });
  if (event.level === 'error') span.setStatus({ code: SpanStatusCode.ERROR, message: String(event.error) });
  span.end(end);
}

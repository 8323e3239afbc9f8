import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { startNats, type NatsHandle } from './nats.js';
import { prepareDatabase, startPostgres, type PostgresHandle } from './postgres.js';
import { stackPaths, stopLeftoverServices } from './state.js';

export interface LocalServersOptions {
  /** MEMEX_HOME: data lives in its postgres/, nats/, blobs/, logs/. */
  home: string;
  /** MEMEX_PG_PORT, default 7432. */
  pgPort?: number;
  /** MEMEX_NATS_PORT, default 7422. */
  natsPort?: number;
  natsMonitorPort?: number;
  host?: string;
  /** MEMEX_DATABASE_URL: when set, that database is used (created if missing, with the extensions) and no local Postgres is started. */
  databaseUrl?: string;
  /** MEMEX_NATS_URL: when set, that server is used and no local nats-server is started. */
  natsUrl?: string;
  /** The token the local nats-server requires (`ensureNatsToken` of @memex/config); none: no authorization. */
  natsToken?: string;
  detached?: boolean;
}

export interface LocalServers {
  databaseUrl: string;
  natsUrl: string;
  /** The servers started or attached to here, in start order (none for external URLs). */
  servers: (PostgresHandle | NatsHandle)[];
  /** Stops those servers, NATS before Postgres. */
  stop(): Promise<void>;
}

/**
 * Brings up the project's own Postgres and NATS under `home` (reusing ones already running
 * there), except where an external URL is given. Refuses (StackRunningError) while a stack runs
 * on this home; stops the services a killed one left behind.
 */
export async function startLocalServers(options: LocalServersOptions): Promise<LocalServers> {
  const paths = stackPaths(options.home);
  const host = options.host ?? '127.0.0.1';
  const detached = options.detached ?? true;
  const leftovers = await stopLeftoverServices(paths.stateFile);
  if (leftovers.length)
    console.warn(`stopped services left by a stack that did not stop cleanly: ${leftovers.join(', ')}`);
  for (const dir of [paths.home, paths.logs, paths.blobs]) mkdirSync(dir, { recursive: true });

  const [pg, nats] = await Promise.allSettled([
    options.databaseUrl
      ? prepareDatabase(options.databaseUrl).then(() => undefined)
      : startPostgres({
          dataDir: paths.postgres,
          port: options.pgPort ?? 7432,
          host,
          detached,
          log: path.join(paths.logs, 'postgres.log'),
        }),
    options.natsUrl
      ? undefined
      : startNats({
          storeDir: paths.nats,
          port: options.natsPort ?? 7422,
          host,
          detached,
          monitorPort: options.natsMonitorPort,
          ...(options.natsToken === undefined ? {} : { token: options.natsToken }),
          log: path.join(paths.logs, 'nats.log'),
        }),
  ]);
  const servers = [pg, nats].flatMap((r) => (r.status === 'fulfilled' && r.value ? [r.value] : []));
  const stop = async () => {
    for (const server of [...servers].reverse()) await server.stop();
  };
  const failed = [pg, nats].flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []));
  if (failed.length) {
    // Do not leave half a stack behind that this call started; ones we merely attached to stay.
    for (const server of servers.filter((s) => !s.reused).reverse()) await server.stop().catch(() => undefined);
    throw failed.length === 1 ? failed[0]! : new AggregateError(failed, failed.map((e) => e.message).join('\n'));
  }
  const pgHandle = pg.status === 'fulfilled' ? pg.value : undefined;
  const natsHandle = nats.status === 'fulfilled' ? nats.value : undefined;
  return {
    databaseUrl: options.databaseUrl ?? pgHandle!.url,
    natsUrl: options.natsUrl ?? natsHandle!.url,
    servers,
    stop,
  };
}

import { Inject, Injectable, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { BlobStore } from '@memex/blobs';
import { Bus, EventPublisher } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import type { ServiceName } from '@memex/contracts';
import { createDatabase } from '@memex/db';
import type { BookkeepingDb, BookkeepingTables } from './bookkeeping.js';
import { CONFIG, DATABASE } from './tokens.js';

export const BUS = Symbol('memex:bus');

/** Closes the connections MemexModule opened, after the host stopped using them. */
@Injectable()
export class ConnectionCloser implements OnApplicationShutdown {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(DATABASE) private readonly db: BookkeepingDb | null,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.bus.close();
    await this.db?.destroy();
  }
}

export function connectionProviders(
  service: ServiceName,
  config: MemexConfig,
  schema: string | null,
  settings?: Record<string, string>,
): Provider[] {
  return [
    { provide: CONFIG, useValue: config },
    {
      provide: BUS,
      useFactory: async () => {
        const bus = await Bus.connect(config.natsUrl, `memex-${service}`);
        await bus.ensureStreams();
        return bus;
      },
    },
    // The service's own publisher: it refuses events another service owns.
    { provide: EventPublisher, useFactory: (bus: Bus) => new EventPublisher(bus, service), inject: [BUS] },
    { provide: BlobStore, useValue: new BlobStore(config.blobsDir) },
    {
      provide: DATABASE,
      useValue: schema
        ? createDatabase<BookkeepingTables>(config.databaseUrl, {
            schema,
            applicationName: `memex-${service}`,
            ...(settings ? { settings } : {}),
          })
        : null,
    },
    ConnectionCloser,
  ];
}

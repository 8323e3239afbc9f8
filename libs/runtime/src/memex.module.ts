import { Module, type DynamicModule } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import type { ServiceName } from '@memex/contracts';
import type { MemexConfig } from '@memex/config';
import { ServiceHost } from './host.js';
import { BUS, connectionProviders } from './providers.js';
import { CONFIG, DATABASE, SERVICE } from './tokens.js';
import { BlobStore } from '@memex/blobs';
import { EventPublisher } from '@memex/bus';

export interface MemexModuleOptions {
  service: ServiceName;
  config: MemexConfig;
  /** The Postgres schema the service owns (its read model); none for stateless services. */
  schema?: string;
  /** Server settings for every connection to that schema (see `DatabaseOptions.settings`). */
  databaseSettings?: Record<string, string>;
}

/** Gives a service its connections (NATS, Postgres, blobs), its publisher and its RPC/projector host. */
@Module({})
export class MemexModule {
  static forService(options: MemexModuleOptions): DynamicModule {
    return {
      module: MemexModule,
      global: true,
      imports: [DiscoveryModule],
      providers: [
        ...connectionProviders(options.service, options.config, options.schema ?? null, options.databaseSettings),
        { provide: SERVICE, useValue: { service: options.service } },
        ServiceHost,
      ],
      exports: [CONFIG, BUS, DATABASE, EventPublisher, BlobStore, ServiceHost],
    };
  }
}

import { DiscoveryService } from '@nestjs/core';
import type { MethodDefinition } from '@memex/contracts';
import type { Migration } from '@memex/db';

/** Marks a provider method as the handler of an API method: `(params, call) => result`. */
export const RpcMethod = DiscoveryService.createDecorator<MethodDefinition>();

export interface ProjectorOptions {
  /** Also the Postgres schema it owns and the name `memex replay <name>` takes. */
  name: string;
  migrations: Migration[];
  /** One NATS subject filter; default every event (NATS 2.9 allows one filter per consumer). */
  filter?: string;
}

/** Marks a provider (implementing `Projection`) as the projector of its service's read model. */
export const Projector = DiscoveryService.createDecorator<ProjectorOptions>();

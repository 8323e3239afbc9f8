import { Module, type DynamicModule } from '@nestjs/common';
import type { MemexConfig } from '@memex/config';
import { MemexModule } from '@memex/runtime';
import { AuthService } from './auth/auth.service.js';
import { ScopesService } from './auth/scopes.service.js';
import { TokensProjector } from './auth/tokens.projector.js';
import { TokensService } from './auth/tokens.service.js';
import { Dispatcher } from './dispatcher.js';
import { EventsController } from './events/events.controller.js';
import { GrpcServer } from './grpc/grpc.server.js';
import { HealthController } from './http/health.controller.js';
import { RpcController } from './http/rpc.controller.js';
import { ContentController } from './web/content.controller.js';
import { SessionController } from './web/session.controller.js';
import { Sessions } from './web/sessions.js';
import { StaticController } from './web/static.controller.js';

/** The gateway: HTTP and gRPC in front, auth and scopes, the event stream, the web UI and its sessions; owns agent tokens. */
@Module({})
export class GatewayModule {
  static register(config: MemexConfig): DynamicModule {
    return {
      module: GatewayModule,
      imports: [MemexModule.forService({ service: 'gateway', config, schema: 'gateway' })],
      // StaticController last: its catch-all GET serves the web UI for every path the others leave.
      controllers: [
        RpcController,
        HealthController,
        EventsController,
        SessionController,
        ContentController,
        StaticController,
      ],
      providers: [TokensProjector, TokensService, AuthService, ScopesService, Sessions, Dispatcher, GrpcServer],
    };
  }
}

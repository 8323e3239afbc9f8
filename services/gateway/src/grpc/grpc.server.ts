import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { apiCatalog, grpcMethodName, MemexError, PROTO_PATH, type ErrorCode } from '@memex/contracts';
import { scopedFeed, type Bus } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import { BUS, CONFIG } from '@memex/runtime';
import { AuthService, type Principal } from '../auth/auth.service.js';
import { Dispatcher } from '../dispatcher.js';
import { fromStruct, toStruct, toValue, type ProtoStruct } from './struct.js';

const GRPC_STATUS: Record<ErrorCode, grpc.status> = {
  invalid_params: grpc.status.INVALID_ARGUMENT,
  unauthorized: grpc.status.UNAUTHENTICATED,
  forbidden: grpc.status.PERMISSION_DENIED,
  not_found: grpc.status.NOT_FOUND,
  conflict: grpc.status.ALREADY_EXISTS,
  too_large: grpc.status.RESOURCE_EXHAUSTED,
  timeout: grpc.status.DEADLINE_EXCEEDED,
  unavailable: grpc.status.UNAVAILABLE,
  internal: grpc.status.INTERNAL,
};

function toServiceError(error: unknown): grpc.ServiceError {
  const memex =
    error instanceof MemexError ? error : new MemexError('internal', String((error as Error)?.message ?? error));
  return Object.assign(new Error(`${memex.code}: ${memex.message}`), {
    code: GRPC_STATUS[memex.code],
    details: `${memex.code}: ${memex.message}`,
    metadata: new grpc.Metadata(),
  });
}

/** gRPC server from contracts/api/memex.proto: the same methods and auth as HTTP. */
@Injectable()
export class GrpcServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('memex:grpc');
  private server: grpc.Server | undefined;
  port = 0;

  constructor(
    @Inject(AuthService) private readonly auth: AuthService,
    @Inject(Dispatcher) private readonly dispatcher: Dispatcher,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(CONFIG) private readonly config: MemexConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const definition = protoLoader.loadSync(PROTO_PATH, {
      keepCase: true,
      longs: Number,
      defaults: true,
      oneofs: true,
    });
    const loaded = grpc.loadPackageDefinition(definition) as unknown as {
      memex: { v1: { Memex: { service: grpc.ServiceDefinition } } };
    };
    const implementation: grpc.UntypedServiceImplementation = {};
    for (const method of apiCatalog.list()) {
      implementation[grpcMethodName(method.name)] = (
        call: grpc.ServerUnaryCall<ProtoStruct, ProtoStruct>,
        callback: grpc.sendUnaryData<ProtoStruct>,
      ) => {
        this.principal(call.metadata)
          .then((principal) => this.dispatcher.call(method.name, fromStruct(call.request), principal))
          .then((result) => callback(null, toResult(result)))
          .catch((error) => callback(toServiceError(error)));
      };
    }
    implementation.Subscribe = (call: grpc.ServerWritableStream<{ from_seq: number; types: string[] }, unknown>) =>
      void this.subscribe(call);
    this.server = new grpc.Server();
    this.server.addService(loaded.memex.v1.Memex.service, implementation);
    this.port = await new Promise<number>((resolve, reject) =>
      this.server!.bindAsync(
        `${this.config.host}:${this.config.grpcPort}`,
        grpc.ServerCredentials.createInsecure(),
        (error, port) => (error ? reject(error) : resolve(port)),
      ),
    );
    this.logger.log(`gRPC on ${this.config.host}:${this.port}`);
  }

  private async subscribe(
    call: grpc.ServerWritableStream<{ from_seq: number; types: string[] }, unknown>,
  ): Promise<void> {
    const abort = new AbortController();
    call.on('cancelled', () => abort.abort());
    try {
      const { scope } = await this.principal(call.metadata);
      const feed = scopedFeed(this.bus, {
        scope,
        fromSeq: call.request.from_seq || 1,
        types: call.request.types,
        signal: abort.signal,
      });
      for await (const { seq, event } of feed) call.write({ seq, type: event.type, json: JSON.stringify(event) });
      call.end();
    } catch (error) {
      if (!abort.signal.aborted) call.destroy(toServiceError(error));
    }
  }

  private principal(metadata: grpc.Metadata): Promise<Principal> {
    const value = metadata.get('authorization')[0];
    return this.auth.authenticate(typeof value === 'string' ? value : value?.toString());
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  }
}

/** Results are objects for every method; anything else is wrapped so the Struct stays valid. */
function toResult(result: unknown): ProtoStruct {
  if (result && typeof result === 'object' && !Array.isArray(result))
    return toStruct(result as Record<string, unknown>);
  return { fields: { value: toValue(result) } };
}

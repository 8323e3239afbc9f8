import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { HEAD_PROTO_PATH } from '@memex/contracts';
import type { HeadCredentials } from '../domain/credentials.js';

// The messages of contracts/api/head.proto as proto-loader gives them (keepCase, oneofs).

export interface CallScope {
  owner: boolean;
  labels: string[];
  session: string;
}
export interface CallFrame {
  id: string;
  method: string;
  params_json: string;
  scope: CallScope | null;
}
export interface HeadFrame {
  frame?: 'call' | 'heartbeat' | 'turn_ended';
  call?: CallFrame;
  heartbeat?: { sent_at_ms: number };
  turn_ended?: { session: string; labels: string[] };
}
export type MemexFrame =
  | { hello: { memex_id: string; version: string } }
  | { reply: { id: string; result_json?: string; error_code?: string; error_message?: string } }
  | { heartbeat: { sent_at_ms: number } };

export interface SessionDigest {
  session: string;
  title: string;
  labels: string[];
  started_at: string;
  ended_at: string;
  asked: string[];
  decided: string[];
  found: string[];
  produced: string[];
  files: string[];
  hosts: string[];
  repos: string[];
  transcript_url: string;
  outputs: { name: string; content_type: string; data: Buffer }[];
  pages: { url: string; title: string; text: string; read_at: string }[];
  memories: { action: string; about: string; text: string }[];
  decisions: { kind: string; policy: string; workflow: string; host: string; detail: string; at: string }[];
}

/**
 * Everything the memex may ask of the head (seed §2.4), and nothing else: this interface is the
 * only code path to the head's methods, and the head refuses any other by the certificate's role.
 */
export interface HeadApi {
  workflowsStart(request: {
    name: string;
    input_json: string;
    dedupe_key: string;
    labels: string[];
  }): Promise<{ run_id: string; duplicate: boolean }>;
  templatesRun(request: {
    name: string;
    input_json: string;
    labels: string[];
    dedupe_key: string;
  }): Promise<{ session: string; duplicate: boolean }>;
  notify(request: {
    event: string;
    title: string;
    message: string;
    labels: string[];
    dedupe_key: string;
  }): Promise<{ duplicate: boolean }>;
  credentialsGet(request: { name: string }): Promise<{ secret: string; expires_at_ms: number }>;
  sessionsDigest(request: { since: string; session: string }): Promise<{ sessions: SessionDigest[] }>;
}

export const HEAD_METHODS = ['WorkflowsStart', 'TemplatesRun', 'Notify', 'CredentialsGet', 'SessionsDigest'] as const;

type HeadServiceClient = grpc.Client &
  Record<string, grpc.MethodDefinition<unknown, unknown> & ((...args: unknown[]) => unknown)>;

/** The head's gRPC service definition, loaded once (the fake head in tests serves the same one). */
export function headServiceDefinition(): grpc.ServiceClientConstructor {
  const definition = protoLoader.loadSync(HEAD_PROTO_PATH, {
    keepCase: true,
    longs: Number,
    defaults: true,
    oneofs: true,
  });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    memex: { head: { v1: { Head: grpc.ServiceClientConstructor } } };
  };
  return loaded.memex.head.v1.Head;
}

/** How long the memex waits for one of the head's unary answers. */
const HEAD_CALL_DEADLINE_MS = 15_000;

/** One HTTP/2 connection to the head with mutual TLS: the link stream and the five methods share it. */
export class HeadConnection {
  readonly client: HeadServiceClient;
  readonly api: HeadApi;

  constructor(credentials: HeadCredentials) {
    const Head = headServiceDefinition();
    const tls = grpc.credentials.createSsl(
      Buffer.from(credentials.caPem),
      Buffer.from(credentials.keyPem),
      Buffer.from(credentials.certPem),
    );
    this.client = new Head(credentials.linkAddress, tls, {
      'grpc.keepalive_time_ms': 20_000,
      'grpc.keepalive_timeout_ms': 10_000,
      'grpc.keepalive_permit_without_calls': 1,
    }) as HeadServiceClient;
    const unary =
      <Req, Res>(method: (typeof HEAD_METHODS)[number]) =>
      (request: Req): Promise<Res> =>
        new Promise((resolve, reject) => {
          const fn = this.client[method] as unknown as (
            req: Req,
            options: grpc.CallOptions,
            callback: (error: grpc.ServiceError | null, reply: Res) => void,
          ) => void;
          fn.call(this.client, request, { deadline: Date.now() + HEAD_CALL_DEADLINE_MS }, (error, reply) =>
            error ? reject(error) : resolve(reply),
          );
        });
    this.api = {
      workflowsStart: unary('WorkflowsStart'),
      templatesRun: unary('TemplatesRun'),
      notify: unary('Notify'),
      credentialsGet: unary('CredentialsGet'),
      sessionsDigest: unary('SessionsDigest'),
    };
  }

  openLink(): grpc.ClientDuplexStream<MemexFrame, HeadFrame> {
    const link = this.client.Link as unknown as () => grpc.ClientDuplexStream<MemexFrame, HeadFrame>;
    return link.call(this.client);
  }

  close(): void {
    this.client.close();
  }
}

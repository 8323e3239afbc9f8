import os from 'node:os';
import { EventEmitter } from 'node:events';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type * as grpc from '@grpc/grpc-js';
import { agentScope, isMemexError, MemexError, OWNER_SCOPE, type ResultOf, type HeadStatus } from '@memex/contracts';
import type { MemexConfig } from '@memex/config';
import type { Bus } from '@memex/bus';
import { BUS, CONFIG, MethodRouter, scopeRulesInForce, type HealthProblems, type Principal } from '@memex/runtime';
import { CredentialsStore, type HeadCredentials } from '../domain/credentials.js';
import { certificateFacts } from '../domain/pki.js';
import { HeadConnection, type CallFrame, type HeadApi, type HeadFrame, type MemexFrame } from './head-api.js';

const HEARTBEAT_MS = 10_000;
/** No frame from the head for this long: the connection is taken as dead and dialled again. */
const SILENCE_MS = 35_000;
const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 30_000;

type LinkState = ResultOf<typeof HeadStatus>['state'];

/**
 * The memex's side of the head link (seed §2.1): it dials the head with its enrolled client
 * certificate and keeps one stream open, answering the head's calls of memex.* methods within
 * the scope the head stamped on each, exactly as a token with those labels would be answered.
 * Reconnects with jittered exponential backoff, heartbeats both ways.
 */
@Injectable()
export class HeadLinkService implements OnApplicationBootstrap, OnApplicationShutdown, HealthProblems {
  private readonly logger = new Logger('memex:head-link');
  private readonly store: CredentialsStore;
  private readonly home: string;
  /** `turn-ended` (session, labels) and `connected` (HeadApi) for the knowledge and trigger parts. */
  readonly events = new EventEmitter();
  private connection: HeadConnection | undefined;
  private stream: grpc.ClientDuplexStream<MemexFrame, HeadFrame> | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  private backoffMs = BACKOFF_MIN_MS;
  private stopped = false;
  private state: LinkState = 'not_enrolled';
  private lastError: string | null = null;
  private connectedSince: Date | null = null;
  private lastHeartbeat: Date | null = null;
  private reconnects = 0;
  private callsRelayed = 0;

  constructor(
    @Inject(CONFIG) config: MemexConfig,
    @Inject(BUS) private readonly bus: Bus,
    private readonly router: MethodRouter,
  ) {
    this.store = new CredentialsStore(config.home);
    this.home = config.home;
  }

  onApplicationBootstrap(): void {
    const credentials = this.store.read();
    if (credentials) this.dial(credentials);
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    this.hangUp();
  }

  /** The head's API while the link is up; callers wait for `connected` otherwise. */
  get api(): HeadApi | undefined {
    return this.state === 'connected' ? this.connection?.api : undefined;
  }

  /** Switches to new credentials (after enrollment), or drops the link (undefined). */
  replace(credentials: HeadCredentials | undefined): void {
    this.hangUp();
    this.reconnects = 0;
    this.lastError = null;
    if (credentials) {
      this.store.write(credentials);
      this.dial(credentials);
    } else {
      this.store.erase();
      this.state = 'not_enrolled';
    }
  }

  status(): ResultOf<typeof HeadStatus> {
    const credentials = this.store.read();
    const facts = credentials ? certificateFacts(credentials.certPem) : undefined;
    return {
      enrolled: credentials !== undefined,
      url: credentials?.enrollUrl ?? null,
      subject: facts?.subject ?? null,
      not_after: facts?.notAfter.toISOString() ?? null,
      state: this.state,
      last_error: this.lastError,
      connected_since: this.connectedSince?.toISOString() ?? null,
      reconnects: this.reconnects,
      calls_relayed: this.callsRelayed,
      last_heartbeat: this.lastHeartbeat?.toISOString() ?? null,
    };
  }

  /** An enrolled memex whose link is down says why in its health (a revoked certificate, a head away). */
  async healthProblems(): Promise<string[]> {
    return this.state !== 'connected' && this.state !== 'not_enrolled' && this.lastError
      ? [`head link ${this.state}: ${this.lastError}`]
      : [];
  }

  private dial(credentials: HeadCredentials): void {
    if (this.stopped) return;
    this.state = 'connecting';
    this.connection ??= new HeadConnection(credentials);
    const stream = this.connection.openLink();
    this.stream = stream;
    stream.write({ hello: { memex_id: os.hostname(), version: '1' } });
    stream.on('data', (frame: HeadFrame) => this.received(frame));
    stream.on('error', (error: grpc.ServiceError) => this.lost(stream, error.details || error.message));
    stream.on('end', () => this.lost(stream, 'the head closed the link'));
    this.heartbeat = setInterval(() => stream.write({ heartbeat: { sent_at_ms: Date.now() } }), HEARTBEAT_MS);
    this.touch();
  }

  private received(frame: HeadFrame): void {
    if (this.state !== 'connected') {
      this.state = 'connected';
      this.connectedSince = new Date();
      this.backoffMs = BACKOFF_MIN_MS;
      this.lastError = null;
      this.logger.log('connected to the head');
      this.events.emit('connected', this.connection!.api);
    }
    this.touch();
    if (frame.call) void this.relay(frame.call);
    else if (frame.heartbeat) this.lastHeartbeat = new Date();
    else if (frame.turn_ended) this.events.emit('turn-ended', frame.turn_ended);
  }

  /** Any frame proves the head alive; silence for SILENCE_MS means a dead connection. */
  private touch(): void {
    clearTimeout(this.watchdog);
    const stream = this.stream;
    this.watchdog = setTimeout(
      () => stream && this.lost(stream, `no frame from the head for ${SILENCE_MS / 1000} s`),
      SILENCE_MS,
    );
  }

  private async relay(call: CallFrame): Promise<void> {
    const stream = this.stream;
    let reply: Extract<MemexFrame, { reply: unknown }>['reply'];
    try {
      const params: unknown = call.params_json ? JSON.parse(call.params_json) : {};
      const result = await this.router.call(call.method, params, await this.principal(call));
      reply = { id: call.id, result_json: JSON.stringify(result ?? null) };
    } catch (error) {
      const memex = isMemexError(error)
        ? error
        : error instanceof SyntaxError
          ? new MemexError('invalid_params', `params_json is not JSON: ${error.message}`)
          : new MemexError('internal', String((error as Error)?.message ?? error));
      reply = { id: call.id, error_code: memex.code, error_message: memex.message };
    }
    this.callsRelayed++;
    stream?.write({ reply });
  }

  /** The head decides the scope; the memex enforces it like a token's (a call can never widen it). */
  private async principal(call: CallFrame): Promise<Principal> {
    const scope = call.scope;
    if (!scope) throw new MemexError('forbidden', 'a call from the head must carry a scope');
    if (scope.owner) return { scope: OWNER_SCOPE, caller: { kind: 'user', id: 'owner' } };
    const session = scope.session || 'unnamed';
    return {
      // The rules as they are now: a change the owner made applies to the next call.
      scope: agentScope(`head:${session}`, scope.labels, await scopeRulesInForce(this.bus, this.home)),
      caller: { kind: 'session', id: `head:${session}` },
    };
  }

  private lost(stream: grpc.ClientDuplexStream<MemexFrame, HeadFrame>, reason: string): void {
    if (stream !== this.stream) return; // an older stream's last word
    this.lastError = reason;
    this.logger.warn(`head link lost: ${reason}`);
    this.hangUp(false);
    if (this.stopped) return;
    this.state = 'backing_off';
    this.reconnects++;
    const delay = this.backoffMs * (0.5 + Math.random() / 2);
    this.backoffMs = Math.min(this.backoffMs * 2, BACKOFF_MAX_MS);
    this.retry = setTimeout(() => {
      const credentials = this.store.read();
      if (credentials) this.dial(credentials);
    }, delay);
  }

  /** Ends the stream (and, unless only the stream is being redialled, the connection). */
  private hangUp(closeConnection = true): void {
    clearInterval(this.heartbeat);
    clearTimeout(this.watchdog);
    clearTimeout(this.retry);
    const stream = this.stream;
    this.stream = undefined;
    stream?.cancel();
    this.connectedSince = null;
    if (closeConnection) {
      this.connection?.close();
      this.connection = undefined;
    }
  }
}

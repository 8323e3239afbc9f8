import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import {
  jetstream,
  jetstreamManager,
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { MemexError } from '@memex/contracts';
import {
  CLAIM_SUBJECT_ROOT,
  CLAIMS_STREAM,
  EVENT_SUBJECT_ROOT,
  EVENTS_STREAM,
  JOB_SUBJECT_ROOT,
  JOBS_STREAM,
} from './subjects.js';
import { IDLE, orIdle } from './log-reader.js';
import { natsConnectOptions } from './nats-url.js';
import './answered-requests.js';

/** The log: every event, kept forever; the source of truth (DESIGN.md §3). */
export const EVENTS_STREAM_CONFIG: Partial<StreamConfig> & { name: string } = {
  name: EVENTS_STREAM,
  subjects: [`${EVENT_SUBJECT_ROOT}.>`],
  storage: StorageType.File,
  retention: RetentionPolicy.Limits,
  discard: DiscardPolicy.New,
  max_age: 0,
  max_msgs: -1,
  max_bytes: -1,
  max_msg_size: 1024 * 1024,
  duplicate_window: nanos(2 * 60 * 1000),
  num_replicas: 1,
  // Deletion must be able to erase an item's events (DESIGN.md §3).
  deny_delete: false,
  deny_purge: false,
  allow_direct: true,
};

/** Work for pipeline workers: each job is removed once a worker acks it. */
export const JOBS_STREAM_CONFIG: Partial<StreamConfig> & { name: string } = {
  name: JOBS_STREAM,
  subjects: [`${JOB_SUBJECT_ROOT}.>`],
  storage: StorageType.File,
  retention: RetentionPolicy.Workqueue,
  discard: DiscardPolicy.New,
  max_msg_size: 1024 * 1024,
  duplicate_window: nanos(10 * 60 * 1000),
  num_replicas: 1,
};

/**
 * Identity claims: which item an identity (a source + external_id, a Message-ID, a content hash)
 * belongs to, the first claim winning (expected-last-subject-sequence 0); the ingest service
 * writes and reads them. A stream of their own rather than events on the log: no read model
 * projects them, and two came with every message, so on the log every projector's consumer was
 * sent them to skip (100,000 of a 50,000-message import's 354,000 events, each delivered to ten
 * consumers). Nor are they a source of truth: each restates an `item.ingested`'s identity and
 * source; this is the unique index over them, where concurrent batches and replicas race for it.
 */
export const CLAIMS_STREAM_CONFIG: Partial<StreamConfig> & { name: string } = {
  // Kept as the log is (forever, on file); a deletion releases its items' claims.
  ...EVENTS_STREAM_CONFIG,
  name: CLAIMS_STREAM,
  subjects: [`${CLAIM_SUBJECT_ROOT}.>`],
};

/** One process's connection to NATS and JetStream. */
export class Bus {
  private readonly dropListeners = new Set<() => void>();
  private readonly reconnectListeners = new Set<() => void>();
  /** Between a drop and the reconnection. */
  private reconnecting: PromiseWithResolvers<void> | undefined;

  private constructor(
    readonly nc: NatsConnection,
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
  ) {
    void this.watchDrops();
  }

  /**
   * Calls `listener` when this connection next drops (NATS restarted, or closed this client as
   * stale): a request or reply in flight on it is gone, and its caller need not wait out its
   * timeout. Returns what stops listening.
   */
  onDrop(listener: () => void): () => void {
    this.dropListeners.add(listener);
    return () => this.dropListeners.delete(listener);
  }

  /**
   * Calls `listener` when this connection is next up again after a drop. A durable consumer's
   * reader reads again from where it stands then: what the server had sent into the dropped
   * connection, unacknowledged, would otherwise come again only after the consumer's ack wait.
   * Returns what stops listening.
   */
  onReconnect(listener: () => void): () => void {
    this.reconnectListeners.add(listener);
    return () => this.reconnectListeners.delete(listener);
  }

  /**
   * Resolves once this connection is up: at once, or when it reconnects after a drop. A request
   * made meanwhile waits in nats.js's buffer and goes out with the reconnection, and an answer
   * that nobody serves it (no responders) can be lost there: the caller then waited its whole timeout.
   */
  async connected(timeoutMs: number): Promise<void> {
    const { reconnecting } = this;
    if (!reconnecting) return;
    if ((await orIdle(reconnecting.promise, timeoutMs)) === IDLE)
      throw new MemexError('unavailable', `not connected to NATS for ${timeoutMs} ms`);
  }

  private async watchDrops(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type === 'reconnect') {
        this.reconnecting?.resolve();
        this.reconnecting = undefined;
        const listeners = [...this.reconnectListeners];
        this.reconnectListeners.clear();
        for (const listener of listeners) listener();
      }
      if (status.type !== 'disconnect') continue;
      this.reconnecting ??= Promise.withResolvers<void>();
      const listeners = [...this.dropListeners];
      this.dropListeners.clear();
      for (const listener of listeners) listener();
    }
  }

  static async connect(url: string, name: string): Promise<Bus> {
    const nc = await connect({
      ...natsConnectOptions(url),
      name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      // nats.js otherwise builds two Errors (stack traces) per request, each publish's ack wait
      // included: a JetStream publish cost 33-55 µs of client CPU with them, 17-19 without
      // (20,000 publishes of 1.5 KB, load 31). A timeout still says what timed out, only
      // without the caller's stack.
      noAsyncTraces: true,
    });
    const jsm = await jetstreamManager(nc);
    return new Bus(nc, jetstream(nc), jsm);
  }

  /** Creates the streams, or brings their configuration up to date. Safe to call from every process. */
  async ensureStreams(): Promise<void> {
    for (const config of [EVENTS_STREAM_CONFIG, JOBS_STREAM_CONFIG, CLAIMS_STREAM_CONFIG]) {
      const name = config.name;
      try {
        await this.jsm.streams.info(name);
        await this.jsm.streams.update(name, config);
      } catch (error) {
        if (!isNotFound(error)) throw error;
        try {
          await this.jsm.streams.add(config);
        } catch (addError) {
          // Another process created it between our two calls.
          if (!String(addError).includes('already in use')) throw addError;
        }
      }
    }
  }

  /** Whether a consumer may have several filter subjects (NATS 2.10 and later). */
  get takesSeveralFilters(): boolean {
    const [major = 0, minor = 0] = (this.nc.info?.version ?? '0.0').split('.').map(Number);
    return major > 2 || (major === 2 && minor >= 10);
  }

  /** The sequence of the last event in the log (0 when empty). */
  async lastSeq(): Promise<number> {
    const info = await this.jsm.streams.info(EVENTS_STREAM);
    return info.state.last_seq;
  }

  /**
   * The names of a stream's consumers, without their state: listing them (`jsm.consumers.list`)
   * has the server count each one's pending messages, which for a consumer with a subject filter
   * costs NATS 2.9 a pass over the stream's subjects (about 45 ms of its CPU at 200,000 events,
   * most of them each an aggregate's own subject).
   */
  async consumerNames(stream: string): Promise<string[]> {
    const names: string[] = [];
    for (let total = Infinity; names.length < total;) {
      const reply = await this.nc.request(`$JS.API.CONSUMER.NAMES.${stream}`, JSON.stringify({ offset: names.length }));
      const page = reply.json<{ total: number; consumers: string[] | null; error?: { description: string } }>();
      if (page.error) throw new Error(`listing the consumers of ${stream}: ${page.error.description}`);
      total = page.total;
      if (!page.consumers?.length) break;
      names.push(...page.consumers);
    }
    return names;
  }

  async close(): Promise<void> {
    if (this.nc.isClosed()) return;
    await this.nc.drain().catch(() => this.nc.close());
  }
}

export function isNotFound(error: unknown): boolean {
  const text = String((error as Error)?.message ?? error);
  return /not found/i.test(text);
}

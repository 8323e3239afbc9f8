import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { sha256 } from '@memex/blobs';
import { EventPublisher, newId } from '@memex/bus';
import {
  MemexError,
  type ParamsOf,
  type ResultOf,
  TokenCreated,
  TokenRevoked,
  TokensCreate,
  TokensList,
  TokensRevoke,
} from '@memex/contracts';
import type { MemexConfig } from '@memex/config';
import { CONFIG, DATABASE, RpcMethod, ServiceHost, type CallContext } from '@memex/runtime';
import type { GatewayDatabase } from './schema.js';

/** `mxa_` marks an agent token, `mxo_` the owner's: a leaked string says what it is. */
export function generateSecret(prefix: 'mxa' | 'mxo'): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

@Injectable()
export class TokensService {
  constructor(
    private readonly publisher: EventPublisher,
    @Inject(DATABASE) private readonly db: Kysely<GatewayDatabase>,
    @Inject(CONFIG) private readonly config: MemexConfig,
    private readonly host: ServiceHost,
  ) {}

  /**
   * Waits until the tokens the gateway checks hold the event at `seq` (a token made or revoked),
   * up to the min-seq timeout: the projector comes to it a moment after it is logged, seconds
   * under load, and until then a revoked token still worked and a new one did not yet.
   */
  private applied(seq: number): Promise<void> {
    return this.host.projector!.waitFor(seq, this.config.minSeqTimeoutMs);
  }

  /** Resolves once the change logged at `seq` holds; fails as `timeout` saying when `what` will. */
  async holds(seq: number, what: string): Promise<void> {
    await this.applied(seq).catch((error: unknown) => {
      throw new MemexError(
        'timeout',
        `${what} logged at ${seq}: it holds once the gateway has applied it (${(error as Error).message})`,
      );
    });
  }

  @RpcMethod(TokensCreate)
  async create(params: ParamsOf<typeof TokensCreate>, call: CallContext): Promise<ResultOf<typeof TokensCreate>> {
    const id = newId();
    const token = generateSecret('mxa');
    const labels = [...new Set(params.labels)].sort();
    const { seq } = await this.publisher.publish(TokenCreated, {
      subject: `token:${id}`,
      actor: call.caller,
      data: { id, name: params.name ?? (labels.join(',') || 'agent'), labels, sha256: sha256(token) },
    });
    // A read model late past the timeout still gets the secret back (it is shown once): the token works once applied.
    await this.applied(seq).catch(() => undefined);
    return { id, token, labels, seq };
  }

  @RpcMethod(TokensList)
  async list(): Promise<ResultOf<typeof TokensList>> {
    const rows = await this.db
      .selectFrom('tokens')
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    return {
      tokens: rows.map((row) => ({
        id: row.id,
        name: row.name,
        labels: row.labels,
        created_at: row.created_at.toISOString(),
        revoked_at: row.revoked_at?.toISOString() ?? null,
      })),
    };
  }

  @RpcMethod(TokensRevoke)
  async revoke(params: ParamsOf<typeof TokensRevoke>, call: CallContext): Promise<ResultOf<typeof TokensRevoke>> {
    const row = await this.db
      .selectFrom('tokens')
      .select(['id', 'revoked_at'])
      .where('id', '=', params.id)
      .executeTakeFirst();
    if (!row) throw new MemexError('not_found', `no token ${params.id}`);
    const { seq } = await this.publisher.publish(TokenRevoked, {
      subject: `token:${params.id}`,
      actor: call.caller,
      data: { id: params.id },
    });
    await this.holds(seq, `the revocation of token ${params.id}`);
    return { seq };
  }

  /** The active agent token with this secret, if any. */
  async findActive(secret: string): Promise<{ id: string; labels: string[] } | undefined> {
    return this.db
      .selectFrom('tokens')
      .select(['id', 'labels'])
      .where('sha256', '=', sha256(secret))
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
  }
}

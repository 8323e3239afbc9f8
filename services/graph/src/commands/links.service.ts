import { Inject, Injectable } from '@nestjs/common';
import { sql } from 'kysely';
import {
  EntityMerge,
  EntityMerged,
  EntityNamed,
  EntitySplit,
  EntitySplitEvent,
  LinkAdd,
  LinkAdded,
  LinkConfirmed,
  LinkRetract,
  LinkRetracted,
  MemexError,
  OWNER_SCOPE,
  type ParamsOf,
  type ResultOf,
  ReviewDecide,
  ReviewDismissed,
  type Scope,
} from '@memex/contracts';
import { EventPublisher, newId } from '@memex/bus';
import { DATABASE, RpcMethod, type CallContext } from '@memex/runtime';
import { linkId, parseRef, refString } from '../domain/keys.js';
import { makerOf } from '../projection/entities.js';
import { itemVisible, linkVisible, resolveEntity, type Db } from '../queries/access.js';
import { nameOfEntryId } from '../queries/name-review.js';
import { Consistent } from './consistent.js';

/**
 * A ref as events carry it: `entity:<id>` becomes the key of the thing it resolves to, other keys
 * are normalized. What a write touches must be visible to the caller exactly as a read would
 * show it: items must exist and be visible; an agent names only things it can see (a thing known
 * only from what it may not read is "not found", as it is to `entity.get`), so its links and
 * trail steps never reach, or reveal, what is hidden from it. The owner may name new things.
 */
export async function storedRef(db: Db, scope: Scope, ref: string): Promise<string> {
  if (ref.startsWith('entity:')) {
    const { id } = await resolveEntity(db, scope, { id: Number(ref.slice('entity:'.length)) });
    return foundingKey(db, id);
  }
  const parsed = parseRef(ref);
  if ('item' in parsed) await assertItemVisible(db, scope, parsed.item);
  else if (scope.kind !== 'owner') await resolveEntity(db, scope, { key: refString(parsed) });
  return refString(parsed);
}

export async function assertItemVisible(db: Db, scope: Scope, id: string): Promise<void> {
  const row = await sql`select 1 from items i where i.id = ${id} and ${itemVisible(scope)}`.execute(db);
  if (row.rows.length === 0) throw new MemexError('not_found', `no item ${id}`);
}

async function foundingKey(db: Db, id: number): Promise<string> {
  return (await sql<{ key: string }>`select key from entities where id = ${id}`.execute(db)).rows[0]!.key;
}

@Injectable()
export class LinksService {
  constructor(
    private readonly publisher: EventPublisher,
    private readonly consistent: Consistent,
    @Inject(DATABASE) private readonly db: Db,
  ) {}

  @RpcMethod(LinkAdd)
  async add(params: ParamsOf<typeof LinkAdd>, call: CallContext): Promise<ResultOf<typeof LinkAdd>> {
    const owner = call.scope.kind === 'owner';
    const evidence = params.evidence ?? [];
    const [src, dst] = await this.consistent.read(async () => {
      for (const entry of evidence) await assertItemVisible(this.db, call.scope, entry.item);
      return [await storedRef(this.db, call.scope, params.src), await storedRef(this.db, call.scope, params.dst)];
    });
    if (src === dst) throw new MemexError('invalid_params', `a link needs two different ends (both are ${src})`);
    if (!owner && evidence.length === 0) {
      throw new MemexError(
        'invalid_params',
        "an agent's link is an inference and needs evidence: at least one item it rests on",
      );
    }
    const madeBy = makerOf(call.caller);
    const id = linkId(src, params.rel, dst, madeBy);
    const labels = owner ? (params.labels ?? []) : call.scope.kind === 'agent' ? call.scope.labels : [];
    const { seq } = await this.publisher.publish(LinkAdded, {
      subject: `link:${id}`,
      actor: call.caller,
      labels: [...new Set(labels)].sort(),
      data: {
        link_id: id,
        src,
        rel: params.rel,
        dst,
        ...(params.valid_from ? { valid_from: params.valid_from } : {}),
        ...(params.valid_to ? { valid_to: params.valid_to } : {}),
        confidence: owner ? 1 : (params.confidence ?? 0.5),
        evidence,
        basis: owner ? 'observed' : 'inferred',
        made_by: madeBy,
        ...(params.names ? { names: params.names } : {}),
      },
    });
    return { link_id: id, seq };
  }

  @RpcMethod(LinkRetract)
  async retract(params: ParamsOf<typeof LinkRetract>, call: CallContext): Promise<ResultOf<typeof LinkRetract>> {
    const link = await this.link(params.link_id, call.scope);
    if (call.scope.kind !== 'owner' && link.made_by !== makerOf(call.caller)) {
      throw new MemexError(
        'forbidden',
        `link ${params.link_id} was made by ${link.made_by}; an agent retracts only its own links`,
      );
    }
    return this.publishRetract(params.link_id, call, params.reason);
  }

  /** A link the scope may see (one it may not is "not found", as it is absent from every read). */
  private async link(id: string, scope: Scope): Promise<{ made_by: string }> {
    return this.consistent.read(async () => {
      const row = (
        await sql<{
          made_by: string;
        }>`select l.made_by from links l where l.id = ${id} and ${linkVisible(scope)}`.execute(this.db)
      ).rows[0];
      if (!row) throw new MemexError('not_found', `no link ${id}`);
      return row;
    });
  }

  private async publishRetract(linkId: string, call: CallContext, reason?: string): Promise<{ seq: number }> {
    const { seq } = await this.publisher.publish(LinkRetracted, {
      subject: `link:${linkId}`,
      actor: call.caller,
      data: { link_id: linkId, ...(reason ? { reason } : {}) },
    });
    return { seq };
  }

  @RpcMethod(EntityMerge)
  async merge(params: ParamsOf<typeof EntityMerge>, call: CallContext): Promise<ResultOf<typeof EntityMerge>> {
    const [from, into] = await this.consistent.read(async () => [
      await this.thing(params.from),
      await this.thing(params.into),
    ]);
    if (from.id === into.id)
      throw new MemexError('conflict', `${params.from} and ${params.into} are already one thing (${into.key})`);
    if (from.kind !== into.kind)
      throw new MemexError('invalid_params', `cannot merge a ${from.kind} into a ${into.kind}`);
    const mergeId = newId();
    const { seq } = await this.publisher.publish(EntityMerged, {
      subject: `entity:${into.key}`,
      actor: call.caller,
      data: { merge_id: mergeId, from: from.key, into: into.key },
    });
    return { merge_id: mergeId, seq };
  }

  private async thing(ref: string): Promise<{ id: number; key: string; kind: string }> {
    const { id } = await resolveEntity(
      this.db,
      OWNER_SCOPE,
      ref.startsWith('entity:') ? { id: Number(ref.slice(7)) } : { key: ref },
    );
    return (
      await sql<{ id: number; key: string; kind: string }>`select id, key, kind from entities where id = ${id}`.execute(
        this.db,
      )
    ).rows[0]!;
  }

  @RpcMethod(EntitySplit)
  async split(params: ParamsOf<typeof EntitySplit>, call: CallContext): Promise<ResultOf<typeof EntitySplit>> {
    if ((params.merge_id === undefined) === (params.key === undefined))
      throw new MemexError('invalid_params', 'pass exactly one of merge_id and key');
    const key = params.key === undefined ? null : refString(parseRef(params.key));
    const row = await this.consistent.read(async () => {
      const found = (
        await sql<{ merge_id: string; key: string }>`
        select m.merge_id, e.key from merges m join entities e on e.id = m.from_entity
        where ${key === null ? sql`m.merge_id = ${params.merge_id}` : sql`${key} = any(m.keys)`}
        order by m.at desc, m.merge_id desc limit 1`.execute(this.db)
      ).rows[0];
      if (!found) throw new MemexError('not_found', `no merge ${params.merge_id ?? `of ${params.key}`} to undo`);
      return found;
    });
    const { seq } = await this.publisher.publish(EntitySplitEvent, {
      subject: `entity:${row.key}`,
      actor: call.caller,
      data: { merge_id: row.merge_id },
    });
    return { merge_id: row.merge_id, seq };
  }

  @RpcMethod(ReviewDecide)
  async decide(params: ParamsOf<typeof ReviewDecide>, call: CallContext): Promise<ResultOf<typeof ReviewDecide>> {
    const [kind, ...rest] = params.id.split(':');
    if (kind === 'merge' && rest.length === 2) {
      if (params.decision === 'reject') {
        const { seq } = await this.publisher.publish(ReviewDismissed, {
          subject: `review:${params.id}`,
          actor: call.caller,
          data: { suggestion: params.id },
        });
        return { seq };
      }
      const { seq } = await this.merge({ from: `entity:${rest[1]}`, into: `entity:${rest[0]}` }, call);
      return { seq };
    }
    if (kind === 'name' && rest.length === 2 && /^\d+$/.test(rest[0]!)) {
      if (params.decision === 'reject') {
        const { seq } = await this.publisher.publish(ReviewDismissed, {
          subject: `review:${params.id}`,
          actor: call.caller,
          data: { suggestion: params.id },
        });
        return { seq };
      }
      const thing = await this.db.selectFrom('entities').select('key').where('id', '=', rest[0]!).executeTakeFirst();
      if (!thing) throw new MemexError('not_found', `no thing ${rest[0]} to name`);
      const { seq } = await this.publisher.publish(EntityNamed, {
        subject: `entity:${thing.key}`,
        actor: call.caller,
        data: { key: thing.key, name: nameOfEntryId(rest[1]!) },
      });
      return { seq };
    }
    if (kind === 'link' && rest.length === 1) {
      const id = rest[0]!;
      await this.link(id, call.scope);
      if (params.decision === 'reject') return this.publishRetract(id, call, 'rejected in review');
      const { seq } = await this.publisher.publish(LinkConfirmed, {
        subject: `link:${id}`,
        actor: call.caller,
        data: { link_id: id },
      });
      return { seq };
    }
    throw new MemexError(
      'invalid_params',
      `"${params.id}" is not a review entry id (merge:<id>:<id>, name:<id>:<name> or link:<id>)`,
    );
  }
}

import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import {
  FaceClusterNamed,
  FaceClustersMerged,
  FaceMoved,
  FacesMerge,
  FacesMove,
  FacesName,
  MemexError,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { EventPublisher } from '@memex/bus';
import { DATABASE, RpcMethod, type CallContext } from '@memex/runtime';
import type { MediaDatabase } from '../projection/schema.js';
import { PeopleSync } from './people.js';

/** A graph person key made from a name when the user names a cluster without one: `person:ada-lovelace`. */
export function personKeyOf(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-|-$/g, '');
  return `person:${slug || 'unnamed'}`;
}

/**
 * The user's corrections of the face clusters, as events (they outrank the model on replay and
 * on a re-run): naming a cluster, moving a face, merging two clusters. Each then tells the graph
 * who is in the photos it changed.
 */
@Injectable()
export class FaceCorrections {
  constructor(
    @Inject(DATABASE) private readonly db: Kysely<MediaDatabase>,
    private readonly publisher: EventPublisher,
    private readonly people: PeopleSync,
  ) {}

  private async cluster(clusterId: string) {
    const row = await this.db
      .selectFrom('face_clusters')
      .selectAll()
      .where('cluster_id', '=', clusterId)
      .executeTakeFirst();
    if (!row) throw new MemexError('not_found', `no face cluster ${clusterId}`);
    if (row.merged_into)
      throw new MemexError('conflict', `face cluster ${clusterId} was merged into ${row.merged_into}`);
    return row;
  }

  @RpcMethod(FacesName)
  async name(params: ParamsOf<typeof FacesName>, call: CallContext): Promise<ResultOf<typeof FacesName>> {
    await this.cluster(params.cluster_id);
    const name = params.name.trim();
    if (!name) throw new MemexError('invalid_params', 'a face cluster needs a name that is not blank');
    const { seq } = await this.publisher.publish(FaceClusterNamed, {
      subject: `face_cluster:${params.cluster_id}`,
      actor: call.caller,
      data: { cluster_id: params.cluster_id, name, person_key: params.person_key ?? personKeyOf(name) },
    });
    await this.people.afterApplied(seq, await this.people.itemsOf([params.cluster_id]), call.caller);
    return { seq };
  }

  @RpcMethod(FacesMove)
  async move(params: ParamsOf<typeof FacesMove>, call: CallContext): Promise<ResultOf<typeof FacesMove>> {
    const face = await this.db
      .selectFrom('faces')
      .select(['item_id', 'model'])
      .where('face_id', '=', params.face_id)
      .executeTakeFirst();
    if (!face) throw new MemexError('not_found', `no face ${params.face_id}`);
    if (params.to_cluster) {
      const to = await this.cluster(params.to_cluster);
      if (to.model !== face.model)
        throw new MemexError(
          'invalid_params',
          `face ${params.face_id} is ${face.model}'s; cluster ${to.cluster_id} is ${to.model}'s`,
        );
    }
    const { seq } = await this.publisher.publish(FaceMoved, {
      subject: `item:${face.item_id}`,
      actor: call.caller,
      data: { face_id: params.face_id, to_cluster: params.to_cluster },
    });
    await this.people.afterApplied(seq, [face.item_id], call.caller);
    return { seq };
  }

  @RpcMethod(FacesMerge)
  async merge(params: ParamsOf<typeof FacesMerge>, call: CallContext): Promise<ResultOf<typeof FacesMerge>> {
    if (params.from === params.into)
      throw new MemexError('invalid_params', 'a face cluster cannot be merged into itself');
    const [from, into] = [await this.cluster(params.from), await this.cluster(params.into)];
    if (from.model !== into.model)
      throw new MemexError(
        'invalid_params',
        `clusters of different face models (${from.model}, ${into.model}) cannot be merged`,
      );
    const items = await this.people.itemsOf([params.from, params.into]);
    const { seq } = await this.publisher.publish(FaceClustersMerged, {
      subject: `face_cluster:${params.from}`,
      actor: call.caller,
      data: { from: params.from, into: params.into },
    });
    await this.people.afterApplied(seq, items, call.caller);
    return { seq };
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import { FacesClusters, FacesCrop, FacesList, MemexError, type ParamsOf, type ResultOf } from '@memex/contracts';
import { BlobStore } from '@memex/blobs';
import { visibleTo } from '@memex/db';
import { DATABASE, RpcMethod, type CallContext } from '@memex/runtime';
import type { MediaDatabase } from '../projection/schema.js';

/** Faces and their clusters, counting and showing only faces in items within the caller's scope. */
@Injectable()
export class FacesQueries {
  constructor(
    @Inject(DATABASE) private readonly db: Kysely<MediaDatabase>,
    private readonly blobs: BlobStore,
  ) {}

  private visibleFaces(call: CallContext) {
    return this.db
      .selectFrom('faces as f')
      .innerJoin('items as i', 'i.item_id', 'f.item_id')
      .where(visibleTo(call.scope, { kind: 'i.kind', labels: 'i.labels', spam: 'i.spam' }));
  }

  @RpcMethod(FacesClusters)
  async clusters(params: ParamsOf<typeof FacesClusters>, call: CallContext): Promise<ResultOf<typeof FacesClusters>> {
    const rows = await this.visibleFaces(call)
      .innerJoin('face_clusters as c', 'c.cluster_id', 'f.cluster_id')
      .select([
        'c.cluster_id',
        'c.name',
        'c.person_key',
        sql<number>`count(*)::int`.as('faces'),
        sql<number>`count(distinct f.item_id)::int`.as('items'),
        sql<string>`(array_agg(f.face_id order by f.score desc, f.face_id))[1]`.as('cover_face_id'),
      ])
      .groupBy(['c.cluster_id', 'c.name', 'c.person_key'])
      .orderBy(sql`count(*)`, 'desc')
      .orderBy('c.cluster_id')
      .limit(params.limit ?? 100)
      .execute();
    const { unclustered } = await this.visibleFaces(call)
      .select(sql<number>`count(*)::int`.as('unclustered'))
      .where('f.cluster_id', 'is', null)
      .executeTakeFirstOrThrow();
    return { clusters: rows, unclustered };
  }

  @RpcMethod(FacesList)
  async list(params: ParamsOf<typeof FacesList>, call: CallContext): Promise<ResultOf<typeof FacesList>> {
    if (!params.cluster_id && !params.item_id)
      throw new MemexError('invalid_params', 'say which faces: a cluster_id, an item_id or both');
    let query = this.visibleFaces(call)
      .leftJoin('face_clusters as c', 'c.cluster_id', 'f.cluster_id')
      .select([
        'f.face_id',
        'f.item_id',
        'f.box',
        'f.score',
        'f.frame_at',
        'f.model',
        'f.cluster_id',
        'c.name',
        'c.person_key',
        sql<boolean>`exists (select 1 from face_moves m where m.face_id = f.face_id)`.as('corrected'),
      ]);
    if (params.cluster_id) query = query.where('f.cluster_id', '=', params.cluster_id);
    if (params.item_id) query = query.where('f.item_id', '=', params.item_id);
    const rows = await query
      .orderBy('f.item_id')
      .orderBy('f.face_id')
      .limit(params.limit ?? 500)
      .execute();
    return {
      faces: rows.map(({ name, person_key, ...face }) => ({
        ...face,
        person: name && person_key ? { key: person_key, name } : null,
      })),
    };
  }

  @RpcMethod(FacesCrop)
  async crop(params: ParamsOf<typeof FacesCrop>, call: CallContext): Promise<ResultOf<typeof FacesCrop>> {
    const face = await this.visibleFaces(call)
      .select('f.crop_sha256')
      .where('f.face_id', '=', params.face_id)
      .executeTakeFirst();
    if (!face) throw new MemexError('not_found', `no face ${params.face_id}`);
    return { content_type: 'image/webp', data: (await this.blobs.get(face.crop_sha256)).toString('base64') };
  }
}

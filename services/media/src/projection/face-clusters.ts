import { sql, type Transaction } from 'kysely';
import type { MediaDatabase } from './schema.js';

type Trx = Transaction<MediaDatabase>;

/**
 * Density-based clustering as Immich does it (its facial-recognition job): a face joins the
 * cluster of its nearest clustered neighbour within `maxDistance` (cosine) when it has at least
 * `minFaces − 1` neighbours; a dense spot with no cluster yet becomes one, taking its unclustered
 * neighbours along; a face in a sparse spot waits unclustered until enough like it arrive.
 */
export interface FaceClustering {
  minFaces: number;
  maxDistance: number;
}

/**
 * MEMEX_FACE_MIN_FACES (default 3) and MEMEX_FACE_MAX_DISTANCE (default 0.5): Immich's defaults.
 * On the faces test set (human's FaceRes descriptors) two faces of one person were 0.08 apart at
 * the median, of two people 0.60 at the least. A replay with other values clusters differently;
 * the corrections still hold.
 */
export function faceClusteringFromEnv(env: NodeJS.ProcessEnv = process.env): FaceClustering {
  const minFaces = Number(env['MEMEX_FACE_MIN_FACES'] ?? 3);
  const maxDistance = Number(env['MEMEX_FACE_MAX_DISTANCE'] ?? 0.5);
  return {
    minFaces: Number.isInteger(minFaces) && minFaces >= 1 ? minFaces : 3,
    maxDistance: maxDistance > 0 && maxDistance < 2 ? maxDistance : 0.5,
  };
}

/** A cluster's id from the face that founded it (`fc_<item>_<n>`): the same on every replay. */
export function clusterIdOf(faceId: string): string {
  return `fc_${faceId.replace(':', '_')}`;
}

/** Where merges sent a cluster: follows merged_into to the cluster that holds its faces now. */
export async function currentCluster(trx: Trx, clusterId: string): Promise<string> {
  let id = clusterId;
  for (let hops = 0; hops < 100; hops++) {
    const row = await trx
      .selectFrom('face_clusters')
      .select('merged_into')
      .where('cluster_id', '=', id)
      .executeTakeFirst();
    if (!row?.merged_into) return id;
    id = row.merged_into;
  }
  return id;
}

/**
 * Places a newly stored face: where the user moved it if they did (the model never overrides
 * that), else by density among the faces of the same model that the user has not set aside.
 */
export async function placeFace(trx: Trx, faceId: string, clustering: FaceClustering): Promise<void> {
  const moved = await trx
    .selectFrom('face_moves')
    .select('to_cluster')
    .where('face_id', '=', faceId)
    .executeTakeFirst();
  if (moved) {
    const to = moved.to_cluster ? await currentCluster(trx, moved.to_cluster) : null;
    await trx.updateTable('faces').set({ cluster_id: to }).where('face_id', '=', faceId).execute();
    return;
  }
  const neighbours = (
    await sql<{ face_id: string; cluster_id: string | null; distance: number }>`
      select n.face_id, n.cluster_id, n.embedding <=> f.embedding as distance
      from faces f join faces n on n.model = f.model and n.face_id <> f.face_id
      where f.face_id = ${faceId}
        and n.embedding <=> f.embedding <= ${clustering.maxDistance}
        and not exists (select 1 from face_moves m where m.face_id = n.face_id)
      order by distance, n.face_id`.execute(trx)
  ).rows;
  if (neighbours.length + 1 < clustering.minFaces) return;
  const nearestClustered = neighbours.find((n) => n.cluster_id !== null);
  if (nearestClustered) {
    await trx
      .updateTable('faces')
      .set({ cluster_id: nearestClustered.cluster_id })
      .where('face_id', '=', faceId)
      .execute();
    return;
  }
  const clusterId = clusterIdOf(faceId);
  const { model } = await trx
    .selectFrom('faces')
    .select('model')
    .where('face_id', '=', faceId)
    .executeTakeFirstOrThrow();
  await trx
    .insertInto('face_clusters')
    .values({ cluster_id: clusterId, model, name: null, person_key: null, merged_into: null })
    .onConflict((oc) => oc.column('cluster_id').doUpdateSet({ merged_into: null }))
    .execute();
  await trx
    .updateTable('faces')
    .set({ cluster_id: clusterId })
    .where('face_id', 'in', [faceId, ...neighbours.map((n) => n.face_id)])
    .execute();
}

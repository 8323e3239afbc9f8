import { Injectable } from '@nestjs/common';
import type { Transaction, Updateable } from 'kysely';
import {
  FaceClusterNamed,
  FaceClustersMerged,
  FaceMoved,
  FacesDetected,
  ItemDeleted,
  ItemIngested,
  MediaAnalysisFailed,
  PeopleSeen,
  PhotoAnalyzed,
  PhotoTagged,
  VideoAnalyzed,
  decodeVector,
  type EventOf,
  type Keyframe,
  type Place,
  type Rendition,
} from '@memex/contracts';
import { BlobStore } from '@memex/blobs';
import { On, Projector } from '@memex/runtime';
import { positionOf, timeKnown } from '../domain/media-item.js';
import { currentCluster, faceClusteringFromEnv, placeFace } from './face-clusters.js';
import { mediaMigrations } from './migrations.js';
import type { AnalysisFailure, ItemsTable, MediaDatabase } from './schema.js';

type Trx = Transaction<MediaDatabase>;

/** The item kinds the media read model holds. */
export const MEDIA_KINDS = new Set(['photo', 'video', 'audio']);

/**
 * The media read model from the log: a row per photo, video or recording from item.ingested (its
 * metadata, its scope), renditions or keyframes and place from photo.analyzed / video.analyzed
 * for the same revision, gone on item.deleted.
 * Rendition blobs are the media service's own: a deletion removes them here (deleting a blob
 * twice is harmless, so a replay that applies the deletion again changes nothing).
 */
@Injectable()
@Projector({ name: 'media', migrations: mediaMigrations })
export class MediaProjector {
  private readonly clustering = faceClusteringFromEnv();

  constructor(private readonly blobs: BlobStore) {}

  @On(ItemIngested)
  async itemIngested(trx: Trx, event: EventOf<typeof ItemIngested>, seq: number): Promise<void> {
    const { data } = event;
    if (!MEDIA_KINDS.has(data.kind)) return;
    if (await this.deleted(trx, data.id)) return;
    const gps = positionOf(data);
    const row = {
      revision: data.revision,
      title: data.title,
      kind: data.kind,
      labels: event.labels,
      spam: event.spam ?? false,
      // Undated items carry the time they were logged; the handler's meta says whether it knew.
      occurred_at: timeKnown(data) ? new Date(event.occurred_at) : null,
      meta: JSON.stringify(data.meta),
      latitude: gps?.latitude ?? null,
      longitude: gps?.longitude ?? null,
      // The pipeline reads it anew: a failure of what came before no longer stands.
      analysis_failure: null,
      failed_at: null,
      seq,
    };
    await trx
      .insertInto('items')
      .values({
        item_id: data.id,
        ...row,
        analyzed_revision: null,
        renditions: '[]',
        rendition_problem: null,
        keyframes: '[]',
        place: null,
        place_key: null,
      })
      .onConflict((oc) => oc.column('item_id').doUpdateSet(row))
      .execute();
  }

  @On(PhotoAnalyzed)
  async photoAnalyzed(trx: Trx, { data }: EventOf<typeof PhotoAnalyzed>, seq: number): Promise<void> {
    await this.analyzed(trx, seq, data, data.renditions, {
      renditions: JSON.stringify(data.renditions),
      rendition_problem: data.rendition_problem,
    });
  }

  @On(VideoAnalyzed)
  async videoAnalyzed(trx: Trx, { data }: EventOf<typeof VideoAnalyzed>, seq: number): Promise<void> {
    await this.analyzed(trx, seq, data, data.keyframes, {
      keyframes: JSON.stringify(data.keyframes),
      rendition_problem: data.keyframe_problem,
    });
  }

  /**
   * An analysis applies to the revision it read; one of an older revision says nothing about the
   * item as it is now. One that arrives after the item's deletion has its images deleted too.
   */
  private async analyzed(
    trx: Trx,
    seq: number,
    data: { item_id: string; revision: number; place: Place | null },
    images: Array<Rendition | Keyframe>,
    set: Pick<Updateable<ItemsTable>, 'renditions' | 'keyframes' | 'rendition_problem'>,
  ): Promise<void> {
    const item = await trx
      .selectFrom('items')
      .select(['revision'])
      .where('item_id', '=', data.item_id)
      .executeTakeFirst();
    if (!item) {
      if (await this.deleted(trx, data.item_id)) await this.removeBlobs(images);
      return;
    }
    if (data.revision !== item.revision) return;
    await trx
      .updateTable('items')
      .set({
        ...set,
        analyzed_revision: data.revision,
        analysis_failure: null,
        failed_at: null,
        place: data.place ? JSON.stringify(data.place) : null,
        place_key: data.place?.key ?? null,
        seq,
      })
      .where('item_id', '=', data.item_id)
      .execute();
  }

  /**
   * The pipeline gave up on the revision the item is at: kept, with why, until an analysis comes
   * (a retry's photo.analyzed clears it; one of its later steps failing again sets it again).
   */
  @On(MediaAnalysisFailed)
  async analysisFailed(trx: Trx, event: EventOf<typeof MediaAnalysisFailed>): Promise<void> {
    const { item_id, revision, ...failure } = event.data;
    await trx
      .updateTable('items')
      .set({
        analysis_failure: JSON.stringify(failure satisfies AnalysisFailure),
        failed_at: new Date(event.recorded_at),
      })
      .where('item_id', '=', item_id)
      .where('revision', '=', revision)
      .execute();
  }

  /**
   * The faces of the revision the item is at replace those an earlier reading found (their crops
   * deleted unless the new reading made the same bytes); each is then placed, in reading order,
   * so a replay clusters exactly as the live run did.
   */
  @On(FacesDetected)
  async facesDetected(trx: Trx, { data }: EventOf<typeof FacesDetected>, seq: number): Promise<void> {
    const crops = new Set(data.faces.map((face) => face.crop_sha256));
    const item = await trx
      .selectFrom('items')
      .select('revision')
      .where('item_id', '=', data.item_id)
      .executeTakeFirst();
    if (!item) {
      if (await this.deleted(trx, data.item_id)) await this.deleteBlobs(crops);
      return;
    }
    if (data.revision !== item.revision) return;
    await trx.updateTable('items').set({ faces_revision: data.revision }).where('item_id', '=', data.item_id).execute();
    const earlier = await trx
      .deleteFrom('faces')
      .where('item_id', '=', data.item_id)
      .returning('crop_sha256')
      .execute();
    await this.deleteBlobs(earlier.map((face) => face.crop_sha256).filter((sha) => !crops.has(sha)));
    for (const face of data.faces) {
      await trx
        .insertInto('faces')
        .values({
          face_id: face.face_id,
          item_id: data.item_id,
          model: data.model,
          box: JSON.stringify(face.box),
          score: face.score,
          frame_at: face.frame_at,
          crop_sha256: face.crop_sha256,
          embedding: `[${decodeVector(face.embedding, data.dims).join(',')}]`,
          cluster_id: null,
          seq,
        })
        .execute();
      await placeFace(trx, face.face_id, this.clustering);
    }
  }

  @On(FaceClusterNamed)
  async faceClusterNamed(trx: Trx, { data }: EventOf<typeof FaceClusterNamed>): Promise<void> {
    await trx
      .updateTable('face_clusters')
      .set({ name: data.name, person_key: data.person_key })
      .where('cluster_id', '=', await currentCluster(trx, data.cluster_id))
      .execute();
  }

  /** A user's move is kept (a later reading of the photo puts the face back where the user said) and applied now. */
  @On(FaceMoved)
  async faceMoved(trx: Trx, { data }: EventOf<typeof FaceMoved>): Promise<void> {
    const itemId = data.face_id.split(':')[0]!;
    if (await this.deleted(trx, itemId)) return;
    await trx
      .insertInto('face_moves')
      .values({ face_id: data.face_id, item_id: itemId, to_cluster: data.to_cluster })
      .onConflict((oc) => oc.column('face_id').doUpdateSet({ to_cluster: data.to_cluster }))
      .execute();
    const to = data.to_cluster ? await currentCluster(trx, data.to_cluster) : null;
    await trx.updateTable('faces').set({ cluster_id: to }).where('face_id', '=', data.face_id).execute();
  }

  /** `from`'s faces go to `into`; later faces that would join `from` find `into` through merged_into. `into` keeps its name, or takes `from`'s. */
  @On(FaceClustersMerged)
  async faceClustersMerged(trx: Trx, { data }: EventOf<typeof FaceClustersMerged>): Promise<void> {
    const from = await currentCluster(trx, data.from);
    const into = await currentCluster(trx, data.into);
    if (from === into) return;
    const named = await trx
      .selectFrom('face_clusters')
      .select(['name', 'person_key'])
      .where('cluster_id', '=', from)
      .executeTakeFirst();
    await trx.updateTable('face_clusters').set({ merged_into: into }).where('cluster_id', '=', from).execute();
    if (named?.name)
      await trx
        .updateTable('face_clusters')
        .set({ name: named.name, person_key: named.person_key })
        .where('cluster_id', '=', into)
        .where('name', 'is', null)
        .execute();
    await trx.updateTable('faces').set({ cluster_id: into }).where('cluster_id', '=', from).execute();
  }

  /** Tags of the revision the item is at replace earlier ones. */
  @On(PhotoTagged)
  async photoTagged(trx: Trx, { data }: EventOf<typeof PhotoTagged>): Promise<void> {
    await trx
      .updateTable('items')
      .set({ tags: data.tags.map((t) => t.tag), caption: data.caption })
      .where('item_id', '=', data.item_id)
      .where('revision', '=', data.revision)
      .execute();
  }

  @On(PeopleSeen)
  async peopleSeen(trx: Trx, { data }: EventOf<typeof PeopleSeen>): Promise<void> {
    await trx
      .updateTable('items')
      .set({ people: JSON.stringify(data.people) })
      .where('item_id', '=', data.item_id)
      .execute();
  }

  @On(ItemDeleted)
  async itemDeleted(trx: Trx, event: EventOf<typeof ItemDeleted>): Promise<void> {
    const id = event.data.id;
    const gone = await trx
      .deleteFrom('items')
      .where('item_id', '=', id)
      .returning(['renditions', 'keyframes'])
      .executeTakeFirst();
    await trx
      .insertInto('tombstones')
      .values({ item_id: id })
      .onConflict((oc) => oc.doNothing())
      .execute();
    if (gone) await this.removeBlobs([...gone.renditions, ...gone.keyframes]);
    // Its faces, their crops and embeddings, and the user's moves of them go with it.
    const faces = await trx.deleteFrom('faces').where('item_id', '=', id).returning('crop_sha256').execute();
    await this.deleteBlobs(faces.map((face) => face.crop_sha256));
    await trx.deleteFrom('face_moves').where('item_id', '=', id).execute();
  }

  private async deleted(trx: Trx, id: string): Promise<boolean> {
    return (
      (await trx.selectFrom('tombstones').select('item_id').where('item_id', '=', id).executeTakeFirst()) !== undefined
    );
  }

  private async removeBlobs(images: Array<Rendition | Keyframe>): Promise<void> {
    await this.deleteBlobs(images.map((image) => image.sha256));
  }

  private async deleteBlobs(shas: Iterable<string>): Promise<void> {
    for (const sha of shas) await this.blobs.delete(sha);
  }
}

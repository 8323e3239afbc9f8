import { Injectable } from '@nestjs/common';
import type { Transaction, Updateable } from 'kysely';
import {
  ItemDeleted,
  ItemIngested,
  PhotoAnalyzed,
  VideoAnalyzed,
  type EventOf,
  type Keyframe,
  type Place,
  type Rendition,
} from '@memex/contracts';
import { BlobStore } from '@memex/blobs';
import { On, Projector } from '@memex/runtime';
import { mediaMigrations } from './migrations.js';
import type { ItemsTable, MediaDatabase } from './schema.js';

type Trx = Transaction<MediaDatabase>;

/** The item kinds the media read model holds. */
export const MEDIA_KINDS = new Set(['photo', 'video', 'audio']);

interface Gps {
  latitude: number;
  longitude: number;
}

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
  constructor(private readonly blobs: BlobStore) {}

  @On(ItemIngested)
  async itemIngested(trx: Trx, event: EventOf<typeof ItemIngested>, seq: number): Promise<void> {
    const { data } = event;
    if (!MEDIA_KINDS.has(data.kind)) return;
    if (await this.deleted(trx, data.id)) return;
    const gps = (data.meta['gps'] ?? null) as Gps | null;
    const row = {
      revision: data.revision,
      title: data.title,
      kind: data.kind,
      labels: event.labels,
      spam: event.spam ?? false,
      // Undated items carry the time they were logged; the handler's meta says whether it knew.
      occurred_at: data.meta['timeSource'] || data.meta['createdAt'] ? new Date(event.occurred_at) : null,
      meta: JSON.stringify(data.meta),
      latitude: gps?.latitude ?? null,
      longitude: gps?.longitude ?? null,
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
        place: data.place ? JSON.stringify(data.place) : null,
        place_key: data.place?.key ?? null,
        seq,
      })
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
  }

  private async deleted(trx: Trx, id: string): Promise<boolean> {
    return (
      (await trx.selectFrom('tombstones').select('item_id').where('item_id', '=', id).executeTakeFirst()) !== undefined
    );
  }

  private async removeBlobs(images: Array<Rendition | Keyframe>): Promise<void> {
    for (const image of images) await this.blobs.delete(image.sha256);
  }
}

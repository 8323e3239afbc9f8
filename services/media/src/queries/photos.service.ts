import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely, type SqlBool } from 'kysely';
import {
  MediaEvents,
  MediaGet,
  MediaKeyframe,
  MediaMoments,
  MediaPlaces,
  MediaRendition,
  MemexError,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { BlobStore } from '@memex/blobs';
import { visibleTo } from '@memex/db';
import { DATABASE, RpcMethod, type CallContext } from '@memex/runtime';
import { clusterEvents, findTrips } from '../domain/events.js';
import { loadMoments } from './moments.js';
import { isMotionClip, livePhotoOf } from './live-photos.js';
import type { AnalysisFailure, MediaDatabase } from '../projection/schema.js';

/** Photos, videos and recordings as the media read model holds them, always within the caller's scope. */
@Injectable()
export class PhotosService {
  constructor(
    @Inject(DATABASE) private readonly db: Kysely<MediaDatabase>,
    private readonly blobs: BlobStore,
  ) {}

  private photo(itemId: string, call: CallContext) {
    return this.db
      .selectFrom('items')
      .selectAll()
      .where('item_id', '=', itemId)
      .where(visibleTo(call.scope))
      .executeTakeFirst();
  }

  @RpcMethod(MediaGet)
  async get(params: ParamsOf<typeof MediaGet>, call: CallContext): Promise<ResultOf<typeof MediaGet>> {
    const row = await this.photo(params.item_id, call);
    // Out of scope reads exactly like absent.
    if (!row) throw new MemexError('not_found', `no photo ${params.item_id}`);
    const analyzed = row.analyzed_revision === row.revision;
    return {
      item_id: row.item_id,
      kind: row.kind,
      title: row.title,
      occurred_at: row.occurred_at?.toISOString() ?? null,
      meta: row.meta,
      status: analyzed ? 'analyzed' : row.analysis_failure ? 'failed' : 'pending',
      analysis_problem: row.analysis_failure?.reason ?? null,
      renditions: analyzed ? row.renditions : [],
      rendition_problem: analyzed ? row.rendition_problem : null,
      keyframes: analyzed ? row.keyframes : [],
      place: analyzed ? row.place : null,
      faces:
        row.faces_revision === row.revision
          ? (
              await this.db
                .selectFrom('faces')
                .select(sql<number>`count(*)::int`.as('n'))
                .where('item_id', '=', row.item_id)
                .executeTakeFirstOrThrow()
            ).n
          : null,
      tags: row.tags,
      caption: row.caption,
      people: row.people,
      live_photo: await livePhotoOf(this.db, row, call.scope),
    };
  }

  @RpcMethod(MediaRendition)
  async rendition(
    params: ParamsOf<typeof MediaRendition>,
    call: CallContext,
  ): Promise<ResultOf<typeof MediaRendition>> {
    const row = await this.photo(params.item_id, call);
    if (!row) throw new MemexError('not_found', `no photo ${params.item_id}`);
    const name = params.name ?? 'thumb';
    const rendition = row.renditions.find((r) => r.name === name);
    if (!rendition) {
      const why =
        row.rendition_problem ??
        (row.analyzed_revision === row.revision ? 'none was made' : notReadYet(row.analysis_failure));
      throw new MemexError('not_found', `photo ${params.item_id} has no ${name}: ${why}`);
    }
    return this.picture(rendition);
  }

  @RpcMethod(MediaKeyframe)
  async keyframe(params: ParamsOf<typeof MediaKeyframe>, call: CallContext): Promise<ResultOf<typeof MediaKeyframe>> {
    const row = await this.photo(params.item_id, call);
    if (!row) throw new MemexError('not_found', `no video ${params.item_id}`);
    const frame = row.analyzed_revision === row.revision ? row.keyframes.find((k) => k.at === params.at) : undefined;
    if (!frame) {
      const why =
        row.analyzed_revision !== row.revision
          ? notReadYet(row.analysis_failure)
          : row.keyframes.length > 0
            ? `its keyframes are at ${row.keyframes.map((k) => k.at).join(', ')} s`
            : (row.rendition_problem ?? 'it has none');
      throw new MemexError('not_found', `video ${params.item_id} has no keyframe at ${params.at} s: ${why}`);
    }
    return this.picture(frame);
  }

  /** A WebP picture from the blob store, as the rendition and keyframe methods answer it. */
  private async picture(stored: { sha256: string; width: number; height: number }) {
    const webp = await this.blobs.get(stored.sha256);
    return {
      content_type: 'image/webp' as const,
      width: stored.width,
      height: stored.height,
      data: webp.toString('base64'),
    };
  }

  @RpcMethod(MediaMoments)
  async moments(params: ParamsOf<typeof MediaMoments>, call: CallContext): Promise<ResultOf<typeof MediaMoments>> {
    const row = await this.photo(params.item_id, call);
    if (!row) throw new MemexError('not_found', `no recording ${params.item_id}`);
    const transcript = row.meta['transcript'] as
      { segments: Array<{ start: number; end: number; text: string }> } | null | undefined;
    const words = params.q.toLowerCase().split(/\s+/).filter(Boolean);
    const moments = (transcript?.segments ?? []).filter((segment) => {
      const text = segment.text.toLowerCase();
      return words.every((word) => text.includes(word));
    });
    return { moments };
  }

  @RpcMethod(MediaPlaces)
  async places(params: ParamsOf<typeof MediaPlaces>, call: CallContext): Promise<ResultOf<typeof MediaPlaces>> {
    const rows = await this.db
      .selectFrom('items')
      .select([
        'place_key',
        sql<string>`(array_agg(place::text))[1]`.as('place'),
        sql<number>`count(*)::int`.as('photos'),
        sql<Date | null>`min(occurred_at)`.as('first'),
        sql<Date | null>`max(occurred_at)`.as('last'),
      ])
      .where('place_key', 'is not', null)
      .where(visibleTo(call.scope))
      .where(sql<SqlBool>`not ${isMotionClip()}`)
      .groupBy('place_key')
      .orderBy(sql`count(*)`, 'desc')
      .orderBy('place_key')
      .limit(params.limit ?? 100)
      .execute();
    return {
      places: rows.map((r) => ({
        place: JSON.parse(r.place),
        photos: r.photos,
        first: r.first?.toISOString() ?? null,
        last: r.last?.toISOString() ?? null,
      })),
    };
  }

  @RpcMethod(MediaEvents)
  async events(params: ParamsOf<typeof MediaEvents>, call: CallContext): Promise<ResultOf<typeof MediaEvents>> {
    const moments = await loadMoments(this.db, call.scope, params);
    const iso = (ms: number) => new Date(ms).toISOString();
    const { home, trips } = findTrips(moments);
    return {
      home,
      events: clusterEvents(moments).map((e) => ({
        start: iso(e.start),
        end: iso(e.end),
        items: e.items,
        place: e.placeKey ? { key: e.placeKey, name: e.placeName ?? e.placeKey } : null,
      })),
      trips: trips.map((t) => ({
        start: iso(t.start),
        end: iso(t.end),
        nights: t.nights,
        places: t.places,
        items: t.items,
      })),
    };
  }
}

/** Why an item has no pictures yet: the pipeline has not come to it, or gave up on it. */
function notReadYet(failure: AnalysisFailure | null): string {
  return failure ? `the media pipeline gave up on it: ${failure.reason}` : 'the media pipeline has not read it yet';
}

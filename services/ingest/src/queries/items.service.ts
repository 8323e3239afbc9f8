import fs from 'node:fs/promises';
import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import {
  CONTENT_CHUNK_BYTES,
  ItemsContent,
  ItemsGet,
  MemexError,
  safeFileName,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { BlobStore } from '@memex/blobs';
import { visibleTo } from '@memex/db';
import { Locations, LocationUnreachable } from '@memex/locations';
import { DATABASE, RpcMethod, type CallContext } from '@memex/runtime';
import type { IngestDatabase } from '../projection/schema.js';

@Injectable()
export class ItemsService {
  constructor(
    @Inject(DATABASE) private readonly db: Kysely<IngestDatabase>,
    private readonly blobs: BlobStore,
    private readonly locations: Locations,
  ) {}

  /** Tier 2's summary of the item, with the model that wrote it (null until one has). */
  private async summary(id: string): Promise<{ text: string; made_by: string } | null> {
    const row = (
      await sql<{
        summary: string;
        made_by: string;
      }>`select summary, made_by from summaries where item = ${id}`.execute(this.db)
    ).rows[0];
    return row ? { text: row.summary, made_by: row.made_by } : null;
  }

  /** Where media placed a photo or video (null until it has, or when it has no position). */
  private async place(id: string): Promise<{ key: string; name: string; country: string } | null> {
    const { rows } = await sql<{ key: string; name: string; country: string }>`
      select key, name, country from places where item = ${id}`.execute(this.db);
    return rows[0] ?? null;
  }

  @RpcMethod(ItemsGet)
  async get(params: ParamsOf<typeof ItemsGet>, call: CallContext): Promise<ResultOf<typeof ItemsGet>> {
    const row = await this.db
      .selectFrom('items')
      .selectAll()
      .where('id', '=', params.id)
      .where(visibleTo(call.scope))
      .executeTakeFirst();
    // Out of scope reads exactly like absent: a scope never reveals that an item exists.
    if (!row) throw new MemexError('not_found', `no item ${params.id}`);
    return {
      id: row.id,
      kind: row.kind,
      title: row.title,
      text: row.text,
      labels: row.labels,
      source: { kind: row.source_kind, id: row.source_id },
      occurred_at: row.occurred_at?.toISOString() ?? null,
      added_at: row.added_at.toISOString(),
      made_by: { kind: row.made_by_kind, id: row.made_by_id },
      meta: row.meta,
      spam: row.spam,
      origin: row.origin as 'imported' | 'mirrored' | null,
      content_type: row.content_type,
      size: row.size,
      location: row.location,
      unreachable: row.unreachable_since
        ? { since: row.unreachable_since.toISOString(), why: row.unreachable_why ?? '' }
        : null,
      revision: row.revision,
      summary: await this.summary(row.id),
      place: await this.place(row.id),
      parent_id: row.parent_id,
    };
  }

  /** The original bytes, a range at a time (a reply must fit in one NATS message). */
  @RpcMethod(ItemsContent)
  async content(params: ParamsOf<typeof ItemsContent>, call: CallContext): Promise<ResultOf<typeof ItemsContent>> {
    const row = await this.db
      .selectFrom('items')
      .select(['id', 'content_type', 'content_sha256', 'meta', 'location', 'unreachable_since', 'unreachable_why'])
      .where('id', '=', params.id)
      .where(visibleTo(call.scope))
      .executeTakeFirst();
    if (!row) throw new MemexError('not_found', `no item ${params.id}`);
    if (!row.content_sha256 || !row.content_type) {
      throw new MemexError('not_found', `item ${params.id} has no original bytes (only ingested items have)`);
    }
    const filename = typeof row.meta['filename'] === 'string' ? row.meta['filename'] : null;
    const range = (size: number, offset: number, bytes: Buffer) => {
      const end = offset + bytes.length;
      return {
        id: row.id,
        content_type: row.content_type!,
        filename: safeFileName(filename),
        original_filename: filename,
        size,
        offset,
        data: bytes.toString('base64'),
        next_offset: end < size ? end : null,
      };
    };
    if (row.location !== null) {
      try {
        const { size } = await this.locations.stat(row.location);
        const offset = Math.min(params.offset ?? 0, size);
        return range(
          size,
          offset,
          await this.locations.read(
            row.location,
            offset,
            Math.min(params.length ?? CONTENT_CHUNK_BYTES, size - offset),
          ),
        );
      } catch (error) {
        if (!(error instanceof LocationUnreachable)) throw error;
        const since = row.unreachable_since
          ? ` (unreachable since ${row.unreachable_since.toISOString()}: ${row.unreachable_why})`
          : '';
        throw new MemexError('unavailable', `item ${params.id} is read in place and ${error.message}${since}`);
      }
    }
    const handle = await fs.open(this.blobs.pathOf(row.content_sha256), 'r').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT')
        throw new MemexError('not_found', `the bytes of item ${params.id} are missing from the blob store`);
      throw error;
    });
    try {
      const size = (await handle.stat()).size;
      const offset = Math.min(params.offset ?? 0, size);
      const buffer = Buffer.alloc(Math.min(params.length ?? CONTENT_CHUNK_BYTES, size - offset));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
      return range(size, offset, buffer.subarray(0, bytesRead));
    } finally {
      await handle.close();
    }
  }
}

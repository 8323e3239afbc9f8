import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { MemexError, noteMarkdownOf, NotePut, NotesPut, type ParamsOf, type ResultOf } from '@memex/contracts';
import { EventPublisher, newId } from '@memex/bus';
import { DATABASE, RpcMethod, type CallContext } from '@memex/runtime';
import type { IngestDatabase } from '../projection/schema.js';

/** A note's title when none is given: its first line, shortened. */
export function titleOf(body: string): string {
  const first = body
    .trim()
    .split('\n', 1)[0]!
    .replace(/^#+\s*/, '')
    .trim();
  return first.length > 120 ? `${first.slice(0, 119)}…` : first;
}

@Injectable()
export class NotesService {
  constructor(
    private readonly publisher: EventPublisher,
    @Inject(DATABASE) private readonly db: Kysely<IngestDatabase>,
  ) {}

  /** Writes a note attributed to the caller. Replacing one is allowed to whoever may see it. */
  @RpcMethod(NotesPut)
  async put(params: ParamsOf<typeof NotesPut>, call: CallContext): Promise<ResultOf<typeof NotesPut>> {
    const id = params.id ?? newId();
    if (params.id) {
      const existing = await this.db.selectFrom('items').select(['kind']).where('id', '=', id).executeTakeFirst();
      const deleted = await this.db.selectFrom('tombstones').select('id').where('id', '=', id).executeTakeFirst();
      if (deleted) throw new MemexError('not_found', `note ${id} was deleted`);
      if (existing && existing.kind !== 'note')
        throw new MemexError('conflict', `item ${id} is a ${existing.kind}, not a note`);
    }
    const labels = [...new Set(params.labels ?? (call.scope.kind === 'agent' ? call.scope.labels : []))].sort();
    const { seq } = await this.publisher.publish(NotePut, {
      subject: `item:${id}`,
      actor: call.caller,
      labels,
      kind: 'note',
      data: {
        id,
        title: params.title?.trim() || titleOf(params.body),
        body: params.body,
        markdown: noteMarkdownOf(params.body),
        ...(params.id ? { replaces: true } : {}),
      },
    });
    return { id, seq };
  }
}

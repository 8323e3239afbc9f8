import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import { PeopleSeen, type Actor } from '@memex/contracts';
import { EventPublisher } from '@memex/bus';
import { DATABASE, ServiceHost } from '@memex/runtime';
import type { MediaDatabase } from '../projection/schema.js';

/** How long a change waits for the media read model to apply it before saying who is in the photos. */
const READ_MODEL_WAIT_MS = 60_000;

type Person = { key: string; name: string; faces: number };

/**
 * Tells the graph who is in each photo (faces.people_seen) whenever that changes: after the
 * events that can change it (new faces, a naming, a move, a merge) are in the read model, it
 * compares each item's named faces with what it last said and says it again only if different.
 */
@Injectable()
export class PeopleSync {
  constructor(
    @Inject(DATABASE) private readonly db: Kysely<MediaDatabase>,
    private readonly publisher: EventPublisher,
    private readonly host: ServiceHost,
  ) {}

  /** After the event at `seq` is applied, the items' people as the clusters now say, applied before it returns. */
  async afterApplied(seq: number, itemIds: string[], actor: Actor): Promise<void> {
    await this.host.projector!.waitFor(seq, READ_MODEL_WAIT_MS);
    let told = 0;
    for (const itemId of [...new Set(itemIds)].sort()) {
      const item = await this.db
        .selectFrom('items')
        .select(['people', 'labels', 'kind', 'spam'])
        .where('item_id', '=', itemId)
        .executeTakeFirst();
      if (!item) continue;
      const people = (
        await sql<Person>`
          select c.person_key as key, c.name, count(*)::int as faces
          from faces f join face_clusters c on c.cluster_id = f.cluster_id
          where f.item_id = ${itemId} and c.person_key is not null
          group by c.person_key, c.name order by c.person_key`.execute(this.db)
      ).rows;
      if (JSON.stringify(people) === JSON.stringify(item.people)) continue;
      ({ seq: told } = await this.publisher.publish(PeopleSeen, {
        subject: `item:${itemId}`,
        actor,
        labels: item.labels,
        kind: item.kind,
        spam: item.spam,
        data: { item_id: itemId, people },
      }));
    }
    // The caller's next read (the photo it named a face on) shows the people.
    if (told > 0) await this.host.projector!.waitFor(told, READ_MODEL_WAIT_MS);
  }

  /** The items with a face in any of these clusters (as the read model holds them now). */
  async itemsOf(clusterIds: string[]): Promise<string[]> {
    if (clusterIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('faces')
      .select('item_id')
      .distinct()
      .where('cluster_id', 'in', clusterIds)
      .execute();
    return rows.map((r) => r.item_id);
  }
}

import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { CalendarBrief, ContextBrief, MemexError, type ParamsOf, type ResultOf } from '@memex/contracts';
import { callMethod, type Bus } from '@memex/bus';
import { visibleTo } from '@memex/db';
import { BUS, DATABASE, RpcMethod, type CallContext } from '@memex/runtime';
import type { CalendarDatabase } from '../projection/schema.js';

/** memex.calendar.brief: the event from the calendar, the brief from the graph (which owns people and threads). */
@Injectable()
export class BriefQueries {
  constructor(
    @Inject(DATABASE) private readonly db: Kysely<CalendarDatabase>,
    @Inject(BUS) private readonly bus: Bus,
  ) {}

  @RpcMethod(CalendarBrief)
  async brief(params: ParamsOf<typeof CalendarBrief>, call: CallContext): Promise<ResultOf<typeof CalendarBrief>> {
    const event = await this.db
      .selectFrom('events')
      .selectAll()
      .where('uid', '=', params.uid)
      .where('rid', '=', '')
      .where(visibleTo(call.scope))
      .executeTakeFirst();
    if (!event) throw new MemexError('not_found', `no event ${JSON.stringify(params.uid)} in the calendar`);
    const people = [
      ...new Set([
        event.organizer?.address,
        ...event.attendees.filter((a) => a.status !== 'declined').map((a) => a.address),
      ]),
    ].filter((address): address is string => Boolean(address));
    // The graph resolves `person:<address>` and `event:<UID>` labels to its things; the caller's scope goes along.
    const brief = await callMethod(
      this.bus,
      ContextBrief,
      // min_seq goes along: the graph waits for the same writes the calendar waited for.
      {
        labels: [...people.map((a) => `person:${a}`), `event:${event.uid}`],
        text: event.summary,
        budget_bytes: params.budget_bytes,
        min_seq: params.min_seq,
      },
      { scope: call.scope },
    );
    return {
      summary: event.summary,
      start: event.start.toISOString(),
      end: event.end.toISOString(),
      location: event.location,
      attendees: event.attendees,
      brief,
    };
  }
}

import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { ContactCandidateDismissed, ContactsCandidates, MailList, MemexError, type ResultOf } from '@memex/contracts';
import { callMethod, EventPublisher, type Bus } from '@memex/bus';
import { BUS, DATABASE, ServiceHost } from '@memex/runtime';
import type { CalendarDatabase } from '../projection/schema.js';
import { GoogleContactsWrites } from './google-contacts-writes.js';

type Candidate = ResultOf<typeof ContactsCandidates>['candidates'][number];

/** Sent messages read per page, and at most (the most recent). */
const SENT_PAGE = 500;
const SENT_READ_MAX = 5_000;

/**
 * Contacts from mail (seed §6.5): the people the owner wrote to from an account who are not its
 * Google contacts, offered — never added — until the owner accepts one (then created at Google
 * like memex.contacts.create) or declines it (contact_candidate.dismissed: not offered again).
 * What was sent is read through mail-sync's API (the SENT view), never its tables.
 */
@Injectable()
export class ContactCandidates {
  constructor(
    @Inject(DATABASE) private readonly db: Kysely<CalendarDatabase>,
    @Inject(BUS) private readonly bus: Bus,
    private readonly publisher: EventPublisher,
    private readonly host: ServiceHost,
    private readonly writes: GoogleContactsWrites,
  ) {}

  async list(account: string, limit: number): Promise<{ candidates: Candidate[]; read: number }> {
    const own = account.toLowerCase();
    const byAddress = new Map<string, Candidate>();
    let read = 0;
    let cursor: string | undefined;
    do {
      const page = await callMethod(this.bus, MailList, {
        view: 'label',
        label: 'SENT',
        limit: SENT_PAGE,
        ...(cursor ? { cursor } : {}),
      });
      for (const message of page.messages) {
        if (message.account !== `gmail:${own}` && message.account !== own) continue;
        read++;
        for (const to of message.to) {
          const address = to.address.toLowerCase();
          if (!address || address === own) continue;
          const seen = byAddress.get(address);
          if (seen) {
            seen.sent++;
            if (!seen.name && to.name) seen.name = to.name;
          } else byAddress.set(address, { address, name: to.name ?? '', sent: 1, last_sent: message.date });
        }
      }
      cursor = page.next_cursor ?? undefined;
    } while (cursor && read < SENT_READ_MAX);
    await this.host.projector?.waitFor(await this.bus.lastSeq(), 60_000);
    const known = await this.knownAddresses(own);
    return {
      candidates: [...byAddress.values()]
        .filter((c) => !known.has(c.address))
        .sort((a, b) => b.sent - a.sent || b.last_sent.localeCompare(a.last_sent) || a.address.localeCompare(b.address))
        .slice(0, limit),
      read,
    };
  }

  async decide(
    account: string,
    address: string,
    accept: boolean,
    name: string | undefined,
  ): Promise<{ resource_name: string | null; seq: number }> {
    const own = account.toLowerCase();
    const wanted = address.toLowerCase();
    if (!accept) {
      const { seq } = await this.publisher.publish(ContactCandidateDismissed, {
        subject: `contacts:${own}`,
        actor: { kind: 'user', id: 'owner' },
        data: { account: own, address: wanted },
      });
      return { resource_name: null, seq };
    }
    await this.host.projector?.waitFor(await this.bus.lastSeq(), 60_000);
    if ((await this.knownAddresses(own)).has(wanted)) {
      throw new MemexError('conflict', `${wanted} is already a Google contact of ${own}`);
    }
    const candidate = name ? undefined : (await this.list(own, 500)).candidates.find((c) => c.address === wanted);
    const { resourceName, seq } = await this.writes.create(own, {
      name: name ?? (candidate?.name || wanted),
      emails: [wanted],
    });
    return { resource_name: resourceName, seq };
  }

  /** Addresses on the account's Google contacts, and those the owner declined. */
  private async knownAddresses(account: string): Promise<Set<string>> {
    // A contact mirrored before its addresses were kept (emails null) is not known here until Google next changes it.
    const contacts = await this.db
      .selectFrom('google_contacts')
      .select('emails')
      .where('account', '=', account)
      .execute();
    const dismissed = await this.db
      .selectFrom('contact_candidates_dismissed')
      .select('address')
      .where('account', '=', account)
      .execute();
    return new Set([...contacts.flatMap((c) => c.emails ?? []), ...dismissed.map((d) => d.address)]);
  }
}

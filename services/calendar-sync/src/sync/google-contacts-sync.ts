import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import {
  AccountsToken,
  ContactsSyncProgressed,
  ContactSynced,
  Ingest,
  ItemsDelete,
  MemexError,
  OWNER_SCOPE,
  rpcSubject,
  type Actor,
  type ResultOf,
} from '@memex/contracts';
import { callMethod, callRpc, draftOf, EventPublisher, type Bus } from '@memex/bus';
import {
  brokeredAuth,
  googleEndpoints,
  GOOGLE_SCOPES,
  httpStatus,
  peopleApi,
  withRetry,
  type people_v1,
} from '@memex/google';
import { BUS, DATABASE, ServiceHost } from '@memex/runtime';
import { contactFields, PERSON_FIELDS, vcardOf } from '../domain/google-contact.js';
import type { CalendarDatabase } from '../projection/schema.js';
import { AccountRuns } from './account-runs.js';

export interface ContactsSyncReport {
  account: string;
  mode: 'first' | 'incremental' | 'resync';
  changed: number;
  seq: number;
}

function connector(account: string): Actor {
  return { kind: 'connector', id: `google-contacts:${account}` };
}

/** Google says the sync token is no good any more: 410, or 400 EXPIRED_SYNC_TOKEN. */
function expiredToken(error: unknown): boolean {
  const status = httpStatus(error);
  const body = JSON.stringify((error as { response?: { data?: unknown } }).response?.data ?? '');
  return status === 410 || (status === 400 && /EXPIRED_SYNC_TOKEN|sync token/i.test(body));
}

/**
 * Google Contacts → memex (People v1): each contact becomes a vCard item under `contacts:<account>`
 * through memex.ingest (as the connector), so it is read by the same contacts handler as a `.vcf`
 * and joins the graph's people the same way (its groups become the card's CATEGORIES). First sync
 * lists everything, then People sync tokens; an expired token lists everything again and mirrors
 * only what changed (by etag); a contact deleted at Google has its item deleted.
 */
@Injectable()
export class GoogleContactsSync {
  /** Its runs, and the accounts whose last one failed. */
  readonly runs: AccountRuns<ContactsSyncReport>;

  constructor(
    @Inject(DATABASE) private readonly db: Kysely<CalendarDatabase>,
    @Inject(BUS) private readonly bus: Bus,
    private readonly publisher: EventPublisher,
    private readonly host: ServiceHost,
  ) {
    this.runs = new AccountRuns(db, host, GOOGLE_SCOPES.contacts, (account) => this.syncAccount(account));
  }

  /** Syncs every account with the contacts scope (or one); one run at a time. */
  syncAll(only?: string): Promise<ContactsSyncReport[]> {
    return this.runs.run(only);
  }

  private async syncAccount(account: string): Promise<ContactsSyncReport> {
    const api = this.api(account);
    const groups = await this.groups(api);
    const state = await this.db
      .selectFrom('google_contact_accounts')
      .select('sync_token')
      .where('account', '=', account)
      .executeTakeFirst();
    let mode: ContactsSyncReport['mode'] = state?.sync_token ? 'incremental' : 'first';
    let result: { changed: number; syncToken: string | null };
    try {
      result = await this.list(api, account, groups, state?.sync_token ?? null);
    } catch (error) {
      if (!expiredToken(error)) throw error;
      mode = 'resync';
      result = await this.list(api, account, groups, null);
    }
    const { seq } = await this.publisher.publish(ContactsSyncProgressed, {
      subject: `gcontacts:${account}`,
      actor: connector(account),
      data: { account, sync_token: result.syncToken, mode, changed: result.changed },
    });
    return { account, mode, changed: result.changed, seq };
  }

  /** The People client for an account (access tokens from mail-sync). */
  api(account: string): people_v1.People {
    return peopleApi(
      brokeredAuth(() => callMethod(this.bus, AccountsToken, { account, scope: 'contacts' })),
      googleEndpoints(),
    );
  }

  /** The names of the account's own contact groups, by resource name. */
  async groups(api: people_v1.People): Promise<Map<string, string>> {
    const groups = new Map<string, string>();
    let pageToken: string | undefined;
    do {
      const page = await withRetry(() => api.contactGroups.list({ pageToken, pageSize: 1000 }));
      for (const g of page.data.contactGroups ?? []) {
        if (g.resourceName && g.groupType === 'USER_CONTACT_GROUP')
          groups.set(g.resourceName, g.formattedName ?? g.name ?? g.resourceName);
      }
      pageToken = page.data.nextPageToken ?? undefined;
    } while (pageToken);
    return groups;
  }

  private async list(
    api: people_v1.People,
    account: string,
    groups: Map<string, string>,
    syncToken: string | null,
  ): Promise<{ changed: number; syncToken: string | null }> {
    const held = new Map(
      (
        await this.db
          .selectFrom('google_contacts')
          .select(['resource_name', 'etag', 'item_id'])
          .where('account', '=', account)
          .execute()
      ).map((r) => [r.resource_name, r]),
    );
    const seen = new Set<string>();
    let changed = 0;
    let pageToken: string | undefined;
    let nextSyncToken: string | null = null;
    do {
      const page = await withRetry(() =>
        api.people.connections.list({
          resourceName: 'people/me',
          personFields: PERSON_FIELDS,
          pageSize: 1000,
          pageToken,
          requestSyncToken: true,
          syncToken: syncToken ?? undefined,
        }),
      );
      const changes: people_v1.Schema$Person[] = [];
      for (const person of page.data.connections ?? []) {
        if (!person.resourceName) continue;
        seen.add(person.resourceName);
        const known = held.get(person.resourceName);
        if (person.metadata?.deleted) {
          if (known) changed += await this.remove(account, person.resourceName, known.item_id);
        } else if (known?.etag !== person.etag) changes.push(person);
      }
      changed += await this.mirror(account, changes, groups);
      pageToken = page.data.nextPageToken ?? undefined;
      nextSyncToken = page.data.nextSyncToken ?? null;
    } while (pageToken);
    if (syncToken === null) {
      for (const [resourceName, known] of held)
        if (!seen.has(resourceName)) changed += await this.remove(account, resourceName, known.item_id);
    }
    return { changed, syncToken: nextSyncToken };
  }

  /** Each changed contact as a vCard item (created, or updated under the same external id). */
  async mirror(account: string, people: people_v1.Schema$Person[], groups: Map<string, string>): Promise<number> {
    if (people.length === 0) return 0;
    const answer = await callRpc<ResultOf<typeof Ingest>>(
      this.bus,
      rpcSubject(Ingest),
      {
        method: Ingest.name,
        params: {
          items: people.map((p) => ({
            type: 'text/vcard',
            data: Buffer.from(vcardOf(p, groups)).toString('base64'),
            source: { kind: 'contacts', id: account },
            external_id: p.resourceName!,
          })),
        },
        scope: OWNER_SCOPE,
        caller: connector(account),
      },
      120_000,
    );
    const drafts = answer.results.flatMap((r, i) => {
      if (r.status === 'rejected' || !r.id) return [];
      const person = people[i]!;
      return [
        draftOf(ContactSynced, {
          subject: `gcontact:${account}/${person.resourceName}`,
          actor: connector(account),
          data: {
            account,
            resource_name: person.resourceName!,
            etag: person.etag ?? '',
            item_id: r.id,
            fields: contactFields(person),
            emails: (person.emailAddresses ?? []).flatMap((e) => (e.value ? [e.value.toLowerCase()] : [])),
          },
        }),
      ];
    });
    if (drafts.length > 0) await this.publisher.publishAll(drafts);
    return drafts.length;
  }

  private async remove(account: string, resourceName: string, itemId: string): Promise<number> {
    try {
      await callRpc(
        this.bus,
        rpcSubject(ItemsDelete),
        { method: ItemsDelete.name, params: { id: itemId }, scope: OWNER_SCOPE, caller: connector(account) },
        60_000,
      );
    } catch (error) {
      if (!(error instanceof MemexError && error.code === 'not_found')) throw error;
    }
    await this.publisher.publish(ContactSynced, {
      subject: `gcontact:${account}/${resourceName}`,
      actor: connector(account),
      data: { account, resource_name: resourceName, etag: '', item_id: null },
    });
    return 1;
  }
}

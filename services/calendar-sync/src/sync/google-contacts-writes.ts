import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { MemexError } from '@memex/contracts';
import type { Bus } from '@memex/bus';
import { httpStatus, withRetry, type people_v1 } from '@memex/google';
import { BUS, DATABASE, ServiceHost } from '@memex/runtime';
import { contactFields, PERSON_FIELDS } from '../domain/google-contact.js';
import type { CalendarDatabase, ContactFields } from '../projection/schema.js';
import { GoogleContactsSync } from './google-contacts-sync.js';

export type ContactEdit = Partial<ContactFields>;

/** The contact group of the contacts the memex created. */
export const MEMEX_GROUP = 'memex';

/** The request body fields and People's `updatePersonFields` for an edit. */
function bodyOf(edit: ContactEdit): { fields: string[]; body: people_v1.Schema$Person } {
  const fields: string[] = [];
  const body: people_v1.Schema$Person = {};
  if (edit.name !== undefined) {
    fields.push('names');
    body.names = [{ unstructuredName: edit.name }];
  }
  if (edit.phones !== undefined) {
    fields.push('phoneNumbers');
    body.phoneNumbers = edit.phones.map((value) => ({ value }));
  }
  if (edit.addresses !== undefined) {
    fields.push('addresses');
    body.addresses = edit.addresses.map((formattedValue) => ({ formattedValue }));
  }
  return { fields, body };
}

/** People answers a stale etag with 400 FAILED_PRECONDITION. */
function staleEtag(error: unknown): boolean {
  const status = httpStatus(error);
  const body = JSON.stringify((error as { response?: { data?: unknown } }).response?.data ?? '');
  return status === 412 || (status === 400 && /FAILED_PRECONDITION|failedPrecondition|etag/i.test(body));
}

/**
 * memex → Google Contacts (People v1 updateContact with the contact's etag): a name, phones or
 * addresses. When the contact changed at Google since the memex read it, it is re-read: a field
 * the other side changed meanwhile is refused (conflict), never overwritten; others merge. What
 * Google answers is mirrored again, so the memex's card is Google's.
 */
@Injectable()
export class GoogleContactsWrites {
  constructor(
    @Inject(DATABASE) private readonly db: Kysely<CalendarDatabase>,
    @Inject(BUS) private readonly bus: Bus,
    private readonly host: ServiceHost,
    private readonly contacts: GoogleContactsSync,
  ) {}

  /**
   * A new Google contact (a person known from mail, once the owner confirms it), in the contact
   * group "memex" so the contacts the memex made stay separable (seed §6.5); mirrored at once.
   */
  async create(
    account: string,
    contact: { name: string; emails: string[]; phones?: string[] },
  ): Promise<{ resourceName: string; seq: number }> {
    const api = this.contacts.api(account);
    const groups = await this.contacts.groups(api);
    let group = [...groups].find(([, name]) => name === MEMEX_GROUP)?.[0];
    if (!group) {
      const created = await withRetry(() =>
        api.contactGroups.create({ requestBody: { contactGroup: { name: MEMEX_GROUP } } }),
      );
      group = created.data.resourceName!;
      groups.set(group, MEMEX_GROUP);
    }
    const person = (
      await withRetry(() =>
        api.people.createContact({
          personFields: PERSON_FIELDS,
          requestBody: {
            names: [{ unstructuredName: contact.name }],
            emailAddresses: contact.emails.map((value) => ({ value })),
            phoneNumbers: (contact.phones ?? []).map((value) => ({ value })),
            memberships: [{ contactGroupMembership: { contactGroupResourceName: group } }],
          },
        }),
      )
    ).data;
    await this.contacts.mirror(account, [person], groups);
    return { resourceName: person.resourceName!, seq: await this.bus.lastSeq() };
  }

  async update(account: string, resourceName: string, edit: ContactEdit): Promise<{ seq: number; merged: boolean }> {
    await this.host.projector?.waitFor(await this.bus.lastSeq(), 60_000);
    const held = await this.db
      .selectFrom('google_contacts')
      .select(['etag', 'fields'])
      .where('account', '=', account)
      .where('resource_name', '=', resourceName)
      .executeTakeFirst();
    if (!held)
      throw new MemexError(
        'not_found',
        `no Google contact ${resourceName} of ${account} in the memex (memex contacts sync first)`,
      );
    const { fields, body } = bodyOf(edit);
    if (fields.length === 0)
      throw new MemexError('invalid_params', 'nothing to change: give a name, phones or addresses');
    const api = this.contacts.api(account);
    const write = (etag: string) =>
      withRetry(() =>
        api.people.updateContact({
          resourceName,
          updatePersonFields: fields.join(','),
          personFields: PERSON_FIELDS,
          requestBody: { ...body, etag },
        }),
      );
    let merged = false;
    let answer: people_v1.Schema$Person;
    try {
      answer = (await write(held.etag)).data;
    } catch (error) {
      if (!staleEtag(error)) throw error;
      const current = (await withRetry(() => api.people.get({ resourceName, personFields: PERSON_FIELDS }))).data;
      const now = contactFields(current);
      const base = held.fields;
      const changed = (Object.keys(edit) as Array<keyof ContactFields>).filter(
        (f) => edit[f] !== undefined && (!base || JSON.stringify(base[f]) !== JSON.stringify(now[f])),
      );
      if (changed.length > 0) {
        throw new MemexError(
          'conflict',
          `${resourceName} changed at Google since the memex read it (${changed.map((f) => `${f}: ${JSON.stringify(now[f])} there`).join('; ')}); nothing was overwritten: sync and try again`,
        );
      }
      answer = (await write(current.etag ?? '')).data;
      merged = true;
    }
    await this.contacts.mirror(account, [answer], await this.contacts.groups(api));
    return { seq: await this.bus.lastSeq(), merged };
  }
}

import { Injectable } from '@nestjs/common';
import {
  CalendarCreate,
  CalendarDelete,
  CalendarRsvp,
  CalendarSync,
  CalendarUpdate,
  ContactsCandidates,
  ContactsCandidatesDecide,
  ContactsCreate,
  ContactsSync,
  ContactsUpdate,
  MemexError,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { RpcMethod } from '@memex/runtime';
import { GoogleCalendarSync } from '../sync/google-calendar-sync.js';
import { GoogleCalendarWrites, type InstanceTarget } from '../sync/google-calendar-writes.js';
import { GoogleContactsSync } from '../sync/google-contacts-sync.js';
import { ContactCandidates } from '../sync/contact-candidates.js';
import { GoogleContactsWrites } from '../sync/google-contacts-writes.js';

function instanceTarget(recurrenceId: string | undefined, following: boolean | undefined): InstanceTarget | undefined {
  if (following && !recurrenceId) {
    throw new MemexError('invalid_params', 'following needs recurrence_id: the instance the series splits at');
  }
  return recurrenceId ? { recurrenceId, following: following ?? false } : undefined;
}

/** memex.calendar.sync and memex.contacts.sync (now rather than at the next poll), and the writes to Google. */
@Injectable()
export class CalendarCommands {
  constructor(
    private readonly sync: GoogleCalendarSync,
    private readonly writes: GoogleCalendarWrites,
    private readonly contacts: GoogleContactsSync,
    private readonly contactWrites: GoogleContactsWrites,
    private readonly candidates: ContactCandidates,
  ) {}

  @RpcMethod(ContactsCandidates)
  async contactCandidates(params: ParamsOf<typeof ContactsCandidates>): Promise<ResultOf<typeof ContactsCandidates>> {
    return this.candidates.list(params.account, params.limit ?? 50);
  }

  @RpcMethod(ContactsCandidatesDecide)
  decideCandidate(
    params: ParamsOf<typeof ContactsCandidatesDecide>,
  ): Promise<ResultOf<typeof ContactsCandidatesDecide>> {
    return this.candidates.decide(params.account, params.address, params.accept, params.name);
  }

  @RpcMethod(ContactsCreate)
  async createContact({
    account,
    ...contact
  }: ParamsOf<typeof ContactsCreate>): Promise<ResultOf<typeof ContactsCreate>> {
    const { resourceName, seq } = await this.contactWrites.create(account, contact);
    return { resource_name: resourceName, seq };
  }

  @RpcMethod(ContactsUpdate)
  updateContact({
    account,
    resource_name,
    ...edit
  }: ParamsOf<typeof ContactsUpdate>): Promise<ResultOf<typeof ContactsUpdate>> {
    return this.contactWrites.update(account, resource_name, edit);
  }

  @RpcMethod(ContactsSync)
  async syncContacts(params: ParamsOf<typeof ContactsSync>): Promise<ResultOf<typeof ContactsSync>> {
    const reports = await this.contacts.syncAll(params.account);
    return {
      accounts: reports.map(({ account, mode, changed }) => ({ account, mode, changed })),
      seq: Math.max(0, ...reports.map((r) => r.seq)),
    };
  }

  @RpcMethod(CalendarSync)
  async syncNow(params: ParamsOf<typeof CalendarSync>): Promise<ResultOf<typeof CalendarSync>> {
    const reports = await this.sync.syncAll(params.account);
    return {
      accounts: reports.map(({ account, calendars }) => ({ account, calendars })),
      seq: Math.max(0, ...reports.map((r) => r.seq)),
    };
  }

  @RpcMethod(CalendarRsvp)
  rsvp(params: ParamsOf<typeof CalendarRsvp>): Promise<ResultOf<typeof CalendarRsvp>> {
    return this.writes.rsvp(params.uid, params.response);
  }

  @RpcMethod(CalendarUpdate)
  update({
    uid,
    recurrence_id,
    following,
    ...change
  }: ParamsOf<typeof CalendarUpdate>): Promise<ResultOf<typeof CalendarUpdate>> {
    return this.writes.update(uid, change, instanceTarget(recurrence_id, following));
  }

  @RpcMethod(CalendarDelete)
  delete({ uid, recurrence_id, following }: ParamsOf<typeof CalendarDelete>): Promise<ResultOf<typeof CalendarDelete>> {
    return this.writes.delete(uid, instanceTarget(recurrence_id, following));
  }

  @RpcMethod(CalendarCreate)
  create(params: ParamsOf<typeof CalendarCreate>): Promise<ResultOf<typeof CalendarCreate>> {
    const { account, calendar_id, time_zone, ...event } = params;
    return this.writes.create(account, calendar_id ?? 'primary', {
      ...event,
      ...(time_zone ? { timeZone: time_zone } : {}),
    });
  }
}

import { googleError, type FakeGoogleServer, type FakeRequest, type FakeResponse } from '@memex/google/testing';
import type { people_v1 } from '@memex/google';

type FakePerson = people_v1.Schema$Person & { resourceName: string; changedAt: number };

/**
 * Google People v1 as the tests need it, on a FakeGoogleServer (real HTTP, real REST JSON):
 * contactGroups.list and people.connections.list with pages and sync tokens (deleted contacts
 * come back with metadata.deleted in an incremental list; an expired token answers 400
 * EXPIRED_SYNC_TOKEN, as People does).
 */
export class FakePeople {
  private readonly people = new Map<string, FakePerson>();
  private readonly groups = new Map<string, string>();
  private changes = 0;
  private generation = 1;

  constructor(server: FakeGoogleServer) {
    server.route('GET', /^\/v1\/contactGroups$/, () => this.contactGroups());
    server.route('GET', /^\/v1\/people\/me\/connections$/, (req) => this.connections(req));
    server.route('GET', /^\/v1\/people\/(c[^/:]+)$/, (req) => this.get(`people/${req.params[0]}`));
    server.route('POST', /^\/v1\/people:createContact$/, (req) => {
      const resourceName = `people/c${1000 + this.changes}`;
      this.put({
        ...(req.body as people_v1.Schema$Person),
        names: ((req.body as people_v1.Schema$Person).names ?? []).map((n) => ({
          ...n,
          displayName: n.unstructuredName ?? n.displayName,
        })),
        resourceName,
      });
      return this.get(resourceName);
    });
    server.route('POST', /^\/v1\/contactGroups$/, (req) => {
      const name = (req.body as { contactGroup?: { name?: string } }).contactGroup?.name ?? '';
      const resourceName = this.addGroup(`g${this.groups.size + 1}`, name);
      return { status: 200, body: { resourceName, name, formattedName: name, groupType: 'USER_CONTACT_GROUP' } };
    });
    server.route('PATCH', /^\/v1\/people\/(c[^/:]+):updateContact$/, (req) =>
      this.update(req, `people/${req.params[0]}`),
    );
  }

  addGroup(id: string, name: string): string {
    this.groups.set(`contactGroups/${id}`, name);
    return `contactGroups/${id}`;
  }

  put(person: people_v1.Schema$Person & { resourceName: string }): void {
    const changedAt = ++this.changes;
    this.people.set(person.resourceName, { ...person, etag: `%${changedAt}`, changedAt });
  }

  remove(resourceName: string): void {
    const changedAt = ++this.changes;
    this.people.set(resourceName, { resourceName, etag: `%${changedAt}`, metadata: { deleted: true }, changedAt });
  }

  /** A change made at Google by someone else: the given fields replaced, a new etag. */
  edit(resourceName: string, change: people_v1.Schema$Person): void {
    const { changedAt: _, etag: __, ...current } = this.people.get(resourceName)!;
    this.put({ ...current, ...change, resourceName });
  }

  person(resourceName: string): people_v1.Schema$Person | undefined {
    return this.people.get(resourceName);
  }

  /** How many contacts (not deleted) Google holds. */
  count(): number {
    return [...this.people.values()].filter((p) => !p.metadata?.deleted).length;
  }

  private get(resourceName: string): FakeResponse {
    const person = this.people.get(resourceName);
    if (!person || person.metadata?.deleted) return googleError(404, 'Requested entity was not found.', 'notFound');
    const { changedAt: _, ...body } = person;
    return { status: 200, body };
  }

  /** updateContact: the etag in the body must be the current one (400 FAILED_PRECONDITION otherwise). */
  private update(req: FakeRequest, resourceName: string): FakeResponse {
    const person = this.people.get(resourceName);
    if (!person || person.metadata?.deleted) return googleError(404, 'Requested entity was not found.', 'notFound');
    const body = req.body as people_v1.Schema$Person;
    if (body.etag !== person.etag)
      return googleError(
        400,
        'Request person.etag is different than the current person.etag. Clear local cache and get the latest person.',
        'failedPrecondition',
      );
    const fields = (req.url.searchParams.get('updatePersonFields') ?? '').split(',') as Array<
      keyof people_v1.Schema$Person
    >;
    const change = Object.fromEntries(fields.map((f) => [f, body[f]]));
    if (change.names)
      change.names = (body.names ?? []).map((n) => ({ ...n, displayName: n.unstructuredName ?? n.displayName }));
    this.edit(resourceName, change);
    return this.get(resourceName);
  }

  expireTokens(): void {
    this.generation++;
  }

  private contactGroups(): FakeResponse {
    return {
      status: 200,
      body: {
        contactGroups: [
          {
            resourceName: 'contactGroups/myContacts',
            groupType: 'SYSTEM_CONTACT_GROUP',
            name: 'myContacts',
            formattedName: 'My Contacts',
          },
          ...[...this.groups].map(([resourceName, name]) => ({
            resourceName,
            groupType: 'USER_CONTACT_GROUP',
            name,
            formattedName: name,
          })),
        ],
        totalItems: this.groups.size + 1,
      },
    };
  }

  private connections(req: FakeRequest): FakeResponse {
    const q = req.url.searchParams;
    const token = q.get('syncToken');
    let since = 0;
    if (token) {
      const [, generation, seq] = /^ps-(\d+)-(\d+)$/.exec(token) ?? [];
      if (Number(generation) !== this.generation)
        return googleError(
          400,
          'Sync token is expired. Clear local cache and retry call without the sync token.',
          'EXPIRED_SYNC_TOKEN',
        );
      since = Number(seq);
    }
    const all = [...this.people.values()]
      .filter((p) => p.changedAt > since && (token || !p.metadata?.deleted))
      .sort((a, b) => a.changedAt - b.changedAt);
    const offset = Number(q.get('pageToken') ?? 0);
    const size = Number(q.get('pageSize') ?? 100);
    const more = offset + size < all.length;
    return {
      status: 200,
      body: {
        connections: all.slice(offset, offset + size).map(({ changedAt: _, ...p }) => p),
        totalPeople: all.length,
        ...(more
          ? { nextPageToken: String(offset + size) }
          : q.get('requestSyncToken') === 'true'
            ? { nextSyncToken: `ps-${this.generation}-${this.changes}` }
            : {}),
      },
    };
  }
}

import { sql } from 'kysely';
import { linkId } from '../domain/keys.js';
import { isOrganization, OrgLedger, type DomainWriter } from '../domain/orgs.js';
import { prune, type Trx } from './entities.js';
import { dropLinks, type LinkRow } from './links.js';

/** Who made the links read from mail headers: the structure tier, version 1 of these rules. */
export const MAIL_STRUCTURE_MAKER = 'ingest@1';
/** How sure an address's domain says where its owner works (once the domain is an organization). */
export const WORKS_AT_CONFIDENCE = 0.7;

/**
 * New messages' `works_at` links to the organizations of their people's domains (`OrgLedger`
 * decides which domains are organizations), each message's pushed onto its own links in order:
 * when a message makes a domain an organization, the people met at it before get theirs then,
 * resting on each of their messages. The ledger reads, once, what decides it — each distinct
 * person, name and evidence at the domains that are no organization yet, not every message (a
 * vanity domain's owner is in all of theirs) — and the messages of a domain only when it becomes one.
 */
export async function addOrgLinks(trx: Trx, messages: { writers: DomainWriter[]; links: LinkRow[] }[]): Promise<void> {
  const domains = [...new Set(messages.flatMap((m) => m.writers.map((w) => w.domain)))];
  if (domains.length === 0) return;
  const orgs = new Set(
    (
      await sql<{ domain: string }>`select domain from org_domains where domain = any(${domains}::text[])`.execute(trx)
    ).rows.map((r) => r.domain),
  );
  const seen = await writersAt(
    trx,
    domains.filter((d) => !orgs.has(d)),
    'distinct',
  );
  const ledger = new OrgLedger(
    orgs,
    Map.groupBy(seen, (w) => w.domain),
  );
  /** The message that made each domain an organization. */
  const madeBy = new Map<string, LinkRow[]>();
  for (const message of messages) {
    const before = ledger.promoted.size;
    message.links.push(...worksAtLinks(ledger.take(message.writers)));
    for (const domain of [...ledger.promoted].slice(before)) madeBy.set(domain, message.links);
  }
  if (ledger.promoted.size === 0) return insertWriters(trx, ledger.added);
  await sql`insert into org_domains (domain) select unnest(${[...ledger.promoted]}::text[])`.execute(trx);
  // The earlier messages of the people at a domain that became one: each is evidence of their works_at.
  const earlier = new Set(seen.map((w) => w.domain));
  const stored = await writersAt(
    trx,
    [...ledger.promoted].filter((d) => earlier.has(d)),
    'all',
  );
  for (const [domain, writers] of Map.groupBy(stored, (w) => w.domain))
    madeBy.get(domain)!.push(...worksAtLinks(writers));
  await insertWriters(trx, ledger.added);
}

/** The messages' writers, kept whatever their domain is (a deletion decides again from the rest). */
async function insertWriters(trx: Trx, added: DomainWriter[]): Promise<void> {
  if (added.length === 0) return;
  await sql`insert into domain_writers (domain, person, name, counts, standing, item, at)
    select * from unnest(${added.map((w) => w.domain)}::text[], ${added.map((w) => w.person)}::text[],
      ${added.map((w) => w.name)}::text[], ${added.map((w) => w.counts)}::boolean[], ${added.map((w) => w.standing)}::text[],
      ${added.map((w) => w.item)}::text[], ${added.map((w) => w.at)}::timestamptz[])
    on conflict do nothing`.execute(trx);
}

/**
 * The writers stored at the domains: every message's (`all`), or what decides whether the domain
 * is an organization (`distinct`): each person, name, count and evidence once, with their first message.
 */
async function writersAt(trx: Trx, domains: string[], rows: 'all' | 'distinct'): Promise<DomainWriter[]> {
  if (domains.length === 0) return [];
  const found = await sql<{
    domain: string;
    person: string;
    name: string;
    counts: boolean;
    standing: string | null;
    item: string;
    at: Date | null;
  }>`${
    rows === 'all'
      ? sql`select domain, person, name, counts, standing, item, at from domain_writers
          where domain = any(${domains}::text[])`
      : sql`select domain, person, name, counts, standing, min(item) as item, min(at) as at from domain_writers
          where domain = any(${domains}::text[]) group by domain, person, name, counts, standing`
  } order by domain, at, item, person`.execute(trx);
  return found.rows.map((r) => ({
    ...r,
    address: r.person.slice('person:'.length),
    sent: false,
    at: r.at?.toISOString() ?? null,
  }));
}

/**
 * A works_at link per writer, resting on the message that showed them at the domain (one row per
 * message, each its own `via`, so deleting one message takes only its evidence).
 */
function worksAtLinks(writers: DomainWriter[]): LinkRow[] {
  const seen = new Set<string>();
  return writers.flatMap((w): LinkRow[] => {
    if (seen.has(`${w.person} ${w.domain} ${w.item}`)) return [];
    seen.add(`${w.person} ${w.domain} ${w.item}`);
    const org = `org:${w.domain}`;
    return [
      {
        id: linkId(w.person, 'works_at', org, MAIL_STRUCTURE_MAKER),
        src: { key: w.person, kind: 'person' },
        rel: 'works_at',
        dst: { key: org, kind: 'org' },
        validFrom: w.at,
        validTo: null,
        confidence: WORKS_AT_CONFIDENCE,
        basis: 'inferred',
        madeBy: MAIL_STRUCTURE_MAKER,
        vis: null,
        evidence: [{ item: w.item, part: '', quote: null }],
        via: w.item,
      },
    ];
  });
}

/**
 * A deleted message's people no longer count at their domains: an organization the rest of its
 * mail no longer makes one is none again (its mail-made works_at links go, the things left bare
 * are pruned), as a replay without the message builds it.
 */
export async function forgetDomainWriters(trx: Trx, item: string): Promise<void> {
  const gone = await sql<{ domain: string }>`delete from domain_writers where item = ${item} returning domain`.execute(
    trx,
  );
  const orgs = (
    await sql<{ domain: string }>`
      select domain from org_domains where domain = any(${[...new Set(gone.rows.map((r) => r.domain))]}::text[])`.execute(
      trx,
    )
  ).rows.map((r) => r.domain);
  const left = Map.groupBy(await writersAt(trx, orgs, 'distinct'), (w) => w.domain);
  const none = orgs.filter((d) => !isOrganization(left.get(d) ?? []));
  if (none.length === 0) return;
  await sql`delete from org_domains where domain = any(${none}::text[])`.execute(trx);
  const links = await sql<{ id: string }>`
    select id from links where rel = 'works_at' and made_by = ${MAIL_STRUCTURE_MAKER}
      and dst_key = any(${none.map((d) => `org:${d}`)}::text[])`.execute(trx);
  const touched = await dropLinks(
    trx,
    links.rows.map((r) => r.id),
  );
  await prune(trx, [...new Set(touched)].sort());
}

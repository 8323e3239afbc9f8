import { sql } from 'kysely';
import { linkId } from '../domain/keys.js';
import { OrgLedger, type DomainWriter } from '../domain/orgs.js';
import type { Trx } from './entities.js';
import type { LinkRow } from './links.js';

/** Who made the links read from mail headers: the structure tier, version 1 of these rules. */
export const MAIL_STRUCTURE_MAKER = 'ingest@1';
/** How sure an address's domain says where its owner works (once the domain is an organization). */
export const WORKS_AT_CONFIDENCE = 0.7;

/**
 * New messages' `works_at` links to the organizations of their people's domains (`OrgLedger`
 * decides which domains are organizations), each message's pushed onto its own links in order:
 * when a message makes a domain an organization, the people met at it before get theirs then,
 * resting on their own messages. The ledger's state is read once for the messages' domains and
 * written back once (org_domains, domain_writers).
 */
export async function addOrgLinks(trx: Trx, messages: { writers: DomainWriter[]; links: LinkRow[] }[]): Promise<void> {
  const domains = [...new Set(messages.flatMap((m) => m.writers.map((w) => w.domain)))];
  if (domains.length === 0) return;
  const orgs = new Map(
    (
      await sql<{ domain: string; evidence: string }>`
        select domain, evidence from org_domains where domain = any(${domains}::text[])`.execute(trx)
    ).rows.map((r) => [r.domain, r.evidence]),
  );
  const stored = await sql<{
    domain: string;
    person: string;
    name: string;
    counts: boolean;
    item: string;
    at: Date | null;
  }>`
    select domain, person, name, counts, item, at from domain_writers
    where domain = any(${domains}::text[]) and domain <> all(${[...orgs.keys()]}::text[]) order by domain, at, item, person`.execute(
    trx,
  );
  const writers = Map.groupBy(
    stored.rows.map((r): DomainWriter => ({
      ...r,
      address: r.person.slice('person:'.length),
      sent: false,
      at: r.at?.toISOString() ?? null,
      standing: null,
    })),
    (w) => w.domain,
  );
  const ledger = new OrgLedger(orgs, writers);
  for (const message of messages) message.links.push(...worksAtLinks(ledger.take(message.writers)));
  if (ledger.promoted.size > 0) {
    const promoted = [...ledger.promoted];
    await sql`insert into org_domains (domain, evidence)
      select * from unnest(${promoted.map(([d]) => d)}::text[], ${promoted.map(([, e]) => e)}::text[])`.execute(trx);
    await sql`delete from domain_writers where domain = any(${promoted.map(([d]) => d)}::text[])`.execute(trx);
  }
  const kept = ledger.kept();
  if (kept.length > 0)
    await sql`insert into domain_writers (domain, person, name, counts, item, at)
      select * from unnest(${kept.map((w) => w.domain)}::text[], ${kept.map((w) => w.person)}::text[],
        ${kept.map((w) => w.name)}::text[], ${kept.map((w) => w.counts)}::boolean[], ${kept.map((w) => w.item)}::text[],
        ${kept.map((w) => w.at)}::timestamptz[])
      on conflict do nothing`.execute(trx);
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

/** A deleted message's people no longer count at their domains. */
export async function forgetDomainWriters(trx: Trx, item: string): Promise<void> {
  await sql`delete from domain_writers where item = ${item}`.execute(trx);
}

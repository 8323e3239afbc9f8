import { foldText } from './keys.js';
import { isPersonalDomain, orgDomainOf, registrableDomain, type Participant } from './mail.js';

/**
 * When a mail domain is an organization. An address says where its owner writes from, not that
 * the domain is a firm's: one person's vanity domain is theirs. A domain is an organization only
 * with evidence — several people at it, a suffix only institutions get (a university's .ac.uk, a
 * government's .gov), or a mailing list it hosts — and until then it is the domain of the people
 * seen at it (shown on their cards). Whether it is one is a function of the messages that show
 * people at it (`isOrganization`), whatever their order: a message deleted takes its evidence
 * back, so the graph is what a replay of the messages left would build.
 */

/** One of a message's people at a domain that may be an organization's. */
export interface DomainWriter {
  domain: string;
  /** The person's key (`person:<address>`). */
  person: string;
  address: string;
  /** Their display name folded (case, accents), '' when the message gives none. */
  name: string;
  /** They sent the message. */
  sent: boolean;
  /**
   * Whether they count among the domain's people: a sender, a recipient the message names, or one
   * a colleague (another address at the domain) writes to; not an unnamed recipient from outside
   * (a vanity domain's aliases that shops and services write to).
   */
  counts: boolean;
  item: string;
  at: string | null;
  /** What makes the domain an organization whoever else is at it, or null. */
  standing: string | null;
}

/** Top-level domains only institutions get. */
const INSTITUTION_TLDS = new Set(['edu', 'gov', 'mil', 'int']);
/** Second-level labels under a country's domain that only institutions (or companies, in Japan and Korea) get. */
const INSTITUTION_SECOND = new Set(['ac', 'edu', 'gov', 'gouv', 'gob', 'go', 'gv', 'mil', 'ltd', 'plc']);
const COMPANY_SECOND: Record<string, string[]> = { jp: ['co', 'or'], kr: ['co', 'or'] };

/** The suffix that makes a domain an institution's (`.ac.uk`, `.edu`, `.co.jp`), or null. */
export function institutionSuffix(domain: string): string | null {
  const labels = domain.split('.');
  const tld = labels[labels.length - 1]!;
  if (INSTITUTION_TLDS.has(tld)) return `.${tld}`;
  const second = labels.length >= 3 ? labels[labels.length - 2]! : '';
  if (tld.length === 2 && (INSTITUTION_SECOND.has(second) || COMPANY_SECOND[tld]?.includes(second)))
    return `.${second}.${tld}`;
  return null;
}

/**
 * What makes `domain` an organization whoever writes from it: an institution's suffix, or the
 * message's List-Id naming a list the domain hosts.
 */
export function standingEvidence(domain: string, mailingList: string | null): string | null {
  const suffix = institutionSuffix(domain);
  if (suffix) return `an institution's domain (${suffix})`;
  if (mailingList && registrableDomain(mailingList) === domain) return `it hosts the mailing list ${mailingList}`;
  return null;
}

/** Evidence a domain's people give once there are several. */
export const SEVERAL_PEOPLE = 'several people write from it';

/** Whether the writers seen at a domain make it an organization. */
export function isOrganization(writers: DomainWriter[]): boolean {
  return writers.some((w) => w.standing !== null) || peopleCount(writers) > 1;
}

/** What makes a domain an organization, in words: an institution's suffix, a list it hosts, its people. */
export function evidenceOf(writers: Pick<DomainWriter, 'standing'>[]): string {
  const standing = writers.flatMap((w) => (w.standing ? [w.standing] : [])).sort();
  return standing[0] ?? SEVERAL_PEOPLE;
}

/**
 * A message's person at a domain that may be an organization; null for free mail, gateways, a
 * name-keyed person (no address) and a domain named after the person (their own: `isPersonalDomain`).
 */
export function domainWriterOf(
  p: Participant,
  item: string,
  at: string | null,
  mailingList: string | null,
): DomainWriter | null {
  const domain = orgDomainOf(p.address);
  if (!domain || p.key || isPersonalDomain(domain, p)) return null;
  const name = foldText(p.name);
  return {
    domain,
    person: `person:${p.address}`,
    address: p.address,
    name,
    sent: p.rel === 'sent',
    counts: p.rel === 'sent' || name !== '',
    item,
    at,
    standing: standingEvidence(domain, mailingList),
  };
}

/**
 * How many people the writers are: addresses that share a name are one person (a vanity domain's
 * aliases under its owner's name), and an address is one person under all its names.
 */
export function peopleCount(writers: DomainWriter[]): number {
  const counted = writers.filter((w) => w.counts);
  const parent = new Map<string, string>();
  const find = (x: string): string => {
    let root = x;
    while (parent.get(root) !== root) root = parent.get(root)!;
    parent.set(x, root);
    return root;
  };
  const union = (a: string, b: string) => parent.set(find(a), find(b));
  for (const w of counted) {
    const address = `a:${w.address}`;
    if (!parent.has(address)) parent.set(address, address);
    if (!w.name) continue;
    const name = `n:${w.name}`;
    if (!parent.has(name)) parent.set(name, name);
    union(address, name);
  }
  return new Set(counted.map((w) => find(`a:${w.address}`))).size;
}

/**
 * The domains seen so far: which are organizations, and the people at each that is not one yet.
 * `take` reads a message's writers in order.
 */
export class OrgLedger {
  /** Domains that became organizations in this ledger's messages. */
  readonly promoted = new Set<string>();
  /** Every writer met in this ledger's messages (with `counts` as the whole message decides it). */
  readonly added: DomainWriter[] = [];

  constructor(
    private readonly orgs: Set<string>,
    private readonly writers: Map<string, DomainWriter[]>,
  ) {}

  /**
   * One message's writers: those that work at an organization — each of them when their domain
   * is one, and every writer met before at a domain this message makes one.
   */
  take(message: DomainWriter[]): DomainWriter[] {
    const works: DomainWriter[] = [];
    const colleague = (w: DomainWriter) =>
      message.some((s) => s.sent && s.domain === w.domain && s.address !== w.address);
    for (const writer of message.map((w) => (w.counts || !colleague(w) ? w : { ...w, counts: true }))) {
      this.added.push(writer);
      if (this.orgs.has(writer.domain)) {
        works.push(writer);
        continue;
      }
      const seen = [...(this.writers.get(writer.domain) ?? []), writer];
      if (!isOrganization(seen)) {
        this.writers.set(writer.domain, seen);
        continue;
      }
      this.orgs.add(writer.domain);
      this.promoted.add(writer.domain);
      this.writers.delete(writer.domain);
      works.push(...seen);
    }
    return works;
  }
}

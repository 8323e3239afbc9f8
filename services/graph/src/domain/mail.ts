import type { Address, KindAndMeta, MailMeta } from '@memex/contracts';
import { slugify } from './keys.js';

/**
 * What the graph reads from an email's `meta` (item.ingested's, typed by its kind: from/to/cc/bcc
 * as `{name, address}` lists, threadKey, spam), and the rules that turn addresses into people
 * and organizations.
 */

export interface Participant {
  /**
   * How a message names its people; `attended` for the people and the event of a calendar item,
   * `listed` for a contact card's, `located_at` for the place of a photo or video, `appears_in`
   * for the named people whose faces are in it, `paper` for what a paper names (itself, its
   * authors, the papers it cites), `part_of` for a photo's events and trips.
   */
  rel: 'sent' | 'received' | 'cc' | 'bcc' | 'attended' | 'listed' | 'located_at' | 'appears_in' | 'paper' | 'part_of';
  address: string;
  /** The display name as written, '' when none (or when it only repeats the address). */
  name: string;
  /** The thing named when it is not the person of `address` (a calendar item's `event:<UID>`, a photo's place). */
  key?: string;
}

/** What participantsOf reads of a message. */
type MessagePeople = Pick<MailMeta, 'from' | 'to' | 'cc' | 'bcc' | 'replyTo' | 'mailingList' | 'originalFrom'>;

const FIELDS: ['from' | 'to' | 'cc' | 'bcc', Participant['rel']][] = [
  ['from', 'sent'],
  ['to', 'received'],
  ['cc', 'cc'],
  ['bcc', 'bcc'],
];

const ADDRESS = /^[^@\s<>()]+@[^@\s<>()]+$/;

/** Hosts that relay other people's mail under their own addresses (news gateways, group services). */
export const GATEWAY_DOMAINS = ['gmane.org', 'gmane.io', 'googlegroups.com', 'groups.io', 'freelists.org'];

/** A display name a list rewrote: "Ann Lee via dev-list" (DMARC From munging). */
const VIA = /^(.+?)\s+via\s+\S.*$/i;

/**
 * gmane's munged address: the writer's local part, a dash and a hash of their domain
 * (`laijs-BthXqXjhjHXQFUHtdCDX3A@public.gmane.org`): the domain cannot be had back.
 */
const GMANE_MUNGED = /^[^@]+-[A-Za-z0-9+/]{6,}@(?:public\.)?gmane\.(?:org|io)$/;

/** A list's address that keeps the writer's: `saravanak=google.com@groups.io` is saravanak@google.com. */
const EQUALS_MUNGED = /^([^@=]+)=([a-z0-9-]+(?:\.[a-z0-9-]+)+)@([^@]+)$/;

const addressOf = (entry: Address) => entry.address.trim().toLowerCase();

/**
 * An address that is a mailing list's or a gateway's, not a person's: at a gateway's domain
 * (gmane's munged `ann-Xyz@public.gmane.org`), or the list's own (List-Id `<dev.lists.example.org>`
 * posts at dev@lists.example.org).
 */
export function isListAddress(address: string, mailingList: string | null): boolean {
  const domain = registrableDomain(address.slice(address.lastIndexOf('@') + 1));
  if (domain && GATEWAY_DOMAINS.includes(domain)) return true;
  if (!mailingList) return false;
  const dot = mailingList.indexOf('.');
  return dot > 0 && address === `${mailingList.slice(0, dot)}@${mailingList.slice(dot + 1)}`;
}

/** The list's hosts: a gateway, or the registrable domain of the List-Id (`dev.lists.example.org`). */
function isListHost(host: string, mailingList: string | null): boolean {
  const domain = registrableDomain(host);
  if (!domain) return false;
  return GATEWAY_DOMAINS.includes(domain) || (mailingList !== null && registrableDomain(mailingList) === domain);
}

/**
 * The writer's own address inside one a list wrote for them (`saravanak=google.com@groups.io` is
 * saravanak@google.com): in a From, or in any field at a list's host; null for any other address.
 */
export function restoredAddress(address: string, mailingList: string | null, sender: boolean): string | null {
  const equals = EQUALS_MUNGED.exec(address);
  if (!equals || !(sender || isListHost(equals[3]!, mailingList))) return null;
  const own = `${equals[1]}@${equals[2]}`;
  return ADDRESS.test(own) && registrableDomain(equals[2]!) && !isListAddress(own, mailingList) ? own : null;
}

/**
 * The person behind an address a list or gateway wrote in place of theirs when only their name is
 * left, keyed `person:<name in words>` as a paper's authors are: gmane's
 * `jane.doe-Re5JQ…@public.gmane.org` (in any field), "Jane Doe via Group" <group@googlegroups.com>
 * (as the sender). Null without a name, and for a list's own address among the recipients.
 */
function namedOnly(entry: Address, sender: boolean): Pick<Participant, 'address' | 'name' | 'key'> | null {
  const address = addressOf(entry);
  const via = VIA.exec(entry.name);
  const name = cleanName(via ? via[1]! : entry.name, address);
  if (!name || !(sender || GMANE_MUNGED.test(address))) return null;
  return { address: '', name, key: `person:${slugify(name)}` };
}

/**
 * Each distinct person of a message once per relation, in header order; malformed addresses are
 * skipped. A list or gateway that rewrote the sender ("Ann via dev-list" <dev@lists…>, gmane's
 * munged addresses, a From that X-Original-From contradicts) is not a person: the sender is the
 * person X-Original-From names, else the Reply-To's, under the name the list showed, else whom the
 * rewritten address still names (`restoredAddress`), else whom its name does (`namedOnly`). A
 * list's own address among the recipients is nobody; a gmane-munged recipient is whom its name says.
 */
export function participantsOf(meta: MessagePeople): Participant[] {
  const mailingList = meta.mailingList;
  const person = (entry: Address) => ADDRESS.test(addressOf(entry)) && !isListAddress(addressOf(entry), mailingList);
  const original = (meta.originalFrom ?? []).find(person);
  const replyTo = original ?? meta.replyTo.find(person);
  const out: Participant[] = [];
  const seen = new Set<string>();
  const add = (rel: Participant['rel'], who: Pick<Participant, 'address' | 'name' | 'key'>) => {
    const id = `${rel} ${who.key ?? `person:${who.address}`}`;
    if (seen.has(id)) return;
    seen.add(id);
    out.push({ rel, ...who });
  };
  for (const [field, rel] of FIELDS) {
    for (const entry of meta[field]) {
      const address = addressOf(entry);
      const sender = rel === 'sent';
      const via = VIA.exec(entry.name);
      const shown = via ? via[1]! : entry.name;
      const restored = (!sender || !original) && restoredAddress(address, mailingList, sender);
      if (restored) {
        add(rel, { address: restored, name: cleanName(shown, restored) });
        continue;
      }
      const rewritten = sender && (via || (original && addressOf(original) !== address));
      if (isListAddress(address, mailingList) || rewritten) {
        if (sender && replyTo)
          add(rel, { address: addressOf(replyTo), name: cleanName(shown || replyTo.name, addressOf(replyTo)) });
        else {
          const named = namedOnly(entry, sender);
          if (named) add(rel, named);
        }
        continue;
      }
      if (ADDRESS.test(address)) add(rel, { address, name: cleanName(entry.name, address) });
    }
  }
  return out;
}

/**
 * When an item happened, or null when that is unknown: services/ingest says a message is undated
 * with `dateSource: null` (and stamps the event with the import time), and a time more than a
 * day after the event was recorded is a wrong clock, not a fact. Undated items are never recent.
 */
export function knownTime(event: { occurred_at: string; recorded_at: string; data: KindAndMeta }): string | null {
  const { data } = event;
  // Ingest marks any item with no plausible date of its own `undated` (mail also says dateSource null).
  if (data.meta.undated === true || (data.kind === 'email' && data.meta.dateSource === null)) return null;
  if (Date.parse(event.occurred_at) > Date.parse(event.recorded_at) + 86_400_000) return null;
  return event.occurred_at;
}

/** A display name worth keeping: quotes and stray brackets off, not an address, not empty. */
export function cleanName(raw: string, address: string): string {
  const name = raw
    .replace(/\s+/g, ' ')
    .replace(/^["'\s]+|["'\s]+$/g, '')
    .trim();
  if (!name || name.includes('@') || name.toLowerCase() === address) return '';
  return name.length > 200 ? name.slice(0, 200) : name;
}

/**
 * Free-mail providers: an address there says nothing about where its owner works, so they make
 * no organization. A `*` stands for any top-level part (yahoo.co.uk, gmx.de, yandex.ru…).
 */
export const FREE_MAIL_DOMAINS = [
  'gmail.com',
  'googlemail.com',
  'yahoo.*',
  'ymail.com',
  'rocketmail.com',
  'hotmail.*',
  'outlook.*',
  'live.*',
  'msn.com',
  'passport.com',
  'aol.*',
  'aim.com',
  'icloud.com',
  'me.com',
  'mac.com',
  'gmx.*',
  'web.de',
  'freenet.de',
  't-online.de',
  'proton.me',
  'protonmail.com',
  'protonmail.ch',
  'pm.me',
  'tutanota.com',
  'tuta.io',
  'yandex.*',
  'ya.ru',
  'mail.ru',
  'bk.ru',
  'inbox.ru',
  'list.ru',
  'rambler.ru',
  'qq.com',
  'foxmail.com',
  '163.com',
  '126.com',
  'yeah.net',
  'sina.com',
  'sina.cn',
  'sohu.com',
  'aliyun.com',
  'naver.com',
  'daum.net',
  'hanmail.net',
  'rediffmail.com',
  'zoho.com',
  'zohomail.com',
  'fastmail.com',
  'fastmail.fm',
  'hey.com',
  'mail.com',
  'email.com',
  'usa.com',
  'inbox.com',
  'lycos.com',
  'excite.com',
  'laposte.net',
  'orange.fr',
  'wanadoo.fr',
  'free.fr',
  'sfr.fr',
  'libero.it',
  'virgilio.it',
  'tiscali.it',
  'seznam.cz',
  'wp.pl',
  'o2.pl',
  'onet.pl',
  'interia.pl',
  'btinternet.com',
  'comcast.net',
  'verizon.net',
  'att.net',
  'sbcglobal.net',
  'bellsouth.net',
  'cox.net',
  'charter.net',
  'earthlink.net',
  'juno.com',
  'shaw.ca',
  'rogers.com',
  'sympatico.ca',
  'bigpond.com',
  'optusnet.com.au',
  'uol.com.br',
  'bol.com.br',
  'terra.com.br',
  'gmx.net',
  'posteo.de',
  'mailbox.org',
  'disroot.org',
  'riseup.net',
  'duck.com',
  'mailinator.com',
];

const exact = new Set(FREE_MAIL_DOMAINS.filter((d) => !d.endsWith('.*')));
const anyTld = new Set(FREE_MAIL_DOMAINS.filter((d) => d.endsWith('.*')).map((d) => d.slice(0, -2)));

/** Second-level labels under which country domains register names (acme.co.uk, acme.com.au). */
const SECOND_LEVEL = new Set([
  'co',
  'com',
  'net',
  'org',
  'ac',
  'edu',
  'gov',
  'ne',
  'or',
  'go',
  'gv',
  'mil',
  'ltd',
  'plc',
  'gob',
  'nic',
]);

/** The registrable domain of a host name: mail.cs.example.ac.uk → example.ac.uk. */
export function registrableDomain(host: string): string | null {
  const labels = host.toLowerCase().replace(/\.$/, '').split('.');
  if (labels.length < 2 || labels.some((l) => !/^[a-z0-9-]+$/.test(l) || l.startsWith('-'))) return null;
  const tld = labels[labels.length - 1]!;
  if (!/^[a-z]{2,}$/.test(tld) && !/^xn--/.test(tld)) return null;
  const second = labels[labels.length - 2]!;
  const take = tld.length === 2 && SECOND_LEVEL.has(second) && labels.length >= 3 ? 3 : 2;
  return labels.slice(-take).join('.');
}

export function isFreeMail(domain: string): boolean {
  if (exact.has(domain)) return true;
  const name = domain.slice(0, domain.indexOf('.'));
  return anyTld.has(name);
}

/**
 * A domain named after the one person writing from it, by their whole name or their whole local
 * part (ann@annlee.example, jo@jo.example): their own, not an organization. The evidence is the
 * address and its owner's name against the domain's name, so the answer does not depend on the
 * order mail arrives in. A domain named after a surname alone (shaw.example) stays an
 * organization: several people may share it (a family, a firm); a company named after its
 * founder loses only the works_at links of that founder's own mail.
 */
export function isPersonalDomain(domain: string, participant: Pick<Participant, 'address' | 'name'>): boolean {
  const label = domain.slice(0, domain.indexOf('.'));
  const fold = (text: string) => text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
  const parts: string[] = fold(participant.name).match(/[\p{L}\p{N}]+/gu) ?? [];
  const local = fold(participant.address.slice(0, participant.address.lastIndexOf('@'))).replace(/[^\p{L}\p{N}]/gu, '');
  return label === local || (parts.length > 1 && label === parts.join(''));
}

/** The organization an address points at, or null (free mail, a gateway, no real domain). */
export function orgDomainOf(address: string): string | null {
  const host = address.slice(address.lastIndexOf('@') + 1);
  const domain = registrableDomain(host);
  if (!domain || isFreeMail(domain) || GATEWAY_DOMAINS.includes(domain)) return null;
  return domain;
}

import { linkId, refString } from '../domain/keys.js';
import type { ContactCardFacts } from '../domain/calendar.js';
import type { LinkRow } from './links.js';

/** A card's distinct phone numbers in E.164, as the contacts handler read them (cards read before it did have none). */
export function cardPhones(card: ContactCardFacts): string[] {
  return [...new Set((card.phones ?? []).flatMap((p) => (p.e164 ? [p.e164] : [])))];
}

/**
 * `person:<address> has_phone phone:<E.164>` from a contact card, the card as evidence: the
 * same phone thing a mail signature names (tier 0 reads phones into E.164 by the same rule), so
 * a contact and a person known from mail with one number meet there — and two people with one
 * number are a merge the review queue asks about, never made silently.
 */
export function cardPhoneLink(
  person: string,
  phone: string,
  itemId: string,
  at: string | null,
  maker: string,
): LinkRow {
  const dst = { key: `phone:${phone}`, kind: 'phone' };
  return {
    id: linkId(person, 'has_phone', refString(dst), maker),
    src: { key: person, kind: 'person' },
    rel: 'has_phone',
    dst,
    validFrom: at,
    validTo: null,
    confidence: 1,
    basis: 'observed',
    madeBy: maker,
    vis: null,
    evidence: [{ item: itemId, part: '', quote: null }],
    via: itemId,
  };
}

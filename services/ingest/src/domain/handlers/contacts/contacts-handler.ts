import { Type, type Static } from '@sinclair/typebox';
import { CalendarFormatError, readContactsCsv, readVCards, type ContactCard } from '@memex/icalendar';
import {
  baseType,
  RejectedItem,
  type AttachmentItem,
  type ContactItem,
  type ContactsMeta,
  type IngestHandler,
} from '../handler.js';
import { charsetParam, decodeText, sha256Hex } from '../text.js';

export const CONTACTS_LIMIT_BYTES = 50 * 1024 * 1024;

export const contactsAttributesSchema = Type.Object(
  {
    filename: Type.Optional(Type.String({ minLength: 1, description: "The file's name." })),
    modified: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'When the file was last changed (memex import folder sends it).',
      }),
    ),
    title: Type.Optional(
      Type.String({ minLength: 1, description: 'A title for the item (default: the name on the card).' }),
    ),
  },
  { additionalProperties: false },
);
type ContactsAttributes = Static<typeof contactsAttributesSchema>;

function searchText(cards: ContactCard[]): string {
  return cards
    .map((c) =>
      [
        c.fullName,
        ...c.nicknames,
        [c.title, c.organization].filter(Boolean).join(', '),
        ...c.emails.map((e) => e.address),
        ...c.phones.map((p) => p.number),
        ...c.addresses.map((a) => [a.street, a.locality, a.region, a.postalCode, a.country].filter(Boolean).join(', ')),
        c.note,
      ]
        .filter(Boolean)
        .join('\n'),
    )
    .join('\n\n');
}

/**
 * A vCard file (2.1, 3.0 or 4.0; one card or an address book), or an address book exported as
 * CSV (`text/csv`: the document handler hands over a CSV whose columns are a contact's). Each
 * photo inside a card becomes a `photo` attachment child, so its bytes are a blob like any other;
 * the card keeps the child's position. Cards are matched to people by address and phone downstream.
 */
export async function parseContacts(input: {
  bytes: Buffer;
  type: string;
  attributes: Record<string, unknown>;
}): Promise<ContactItem> {
  const attributes = input.attributes as ContactsAttributes;
  const csv = baseType(input.type) === 'text/csv';
  let cards: ContactCard[];
  const warnings: string[] = [];
  try {
    const text = decodeText(input.bytes, charsetParam(input.type)).text;
    if (csv) {
      const read = readContactsCsv(text);
      cards = read.cards;
      const unnamed = read.unnamedRows;
      if (unnamed.length > 0)
        warnings.push(
          `left out ${unnamed.length === 1 ? 'a row that names' : `${unnamed.length} rows that name`} no one (no name, organization, e-mail or phone): row ${unnamed.slice(0, 10).join(', ')}${unnamed.length > 10 ? '…' : ''}`,
        );
    } else cards = readVCards(text);
  } catch (error) {
    if (error instanceof CalendarFormatError) throw new RejectedItem(error.reason);
    throw error;
  }
  const children: AttachmentItem[] = [];
  const meta: ContactsMeta = {
    format: csv ? 'csv' : 'vcard',
    filename: attributes.filename ?? null,
    cards: cards.map((card) => ({
      ...card,
      photos: card.photos.map(({ bytes, mediaType, uri }) => {
        if (!bytes) return { mediaType, uri, child: null };
        const contentType = mediaType ?? 'application/octet-stream';
        children.push({
          kind: 'attachment',
          identity: `sha256:${sha256Hex(bytes)}`,
          title: `photo of ${card.fullName}`,
          text: '',
          occurredAt: null,
          warnings: [],
          contentBytes: bytes,
          meta: {
            filename: null,
            contentType,
            size: bytes.length,
            contentId: null,
            inline: false,
            parsedAs: null,
            document: null,
            email: null,
            unreadable: null,
          },
        });
        return { mediaType, uri, child: children.length - 1 };
      }),
    })),
  };
  const first = cards[0]!;
  return {
    kind: 'contact',
    identity: `sha256:${sha256Hex(input.bytes)}`,
    title:
      attributes.title ??
      (cards.length === 1 ? first.fullName : `${first.fullName} and ${cards.length - 1} more contacts`),
    text: searchText(cards),
    occurredAt: attributes.modified ?? null,
    warnings,
    children,
    meta,
  };
}

export const contactsHandler: IngestHandler = {
  name: 'contacts',
  types: ['text/vcard', 'text/x-vcard', 'text/directory'],
  attributesSchema: contactsAttributesSchema,
  identityRule:
    'Content hash (sha256 of the bytes). The same source and external_id with new content updates the item.',
  limitBytes: CONTACTS_LIMIT_BYTES,
  produces: ['contact', 'attachment'],
  updatable: true,
  parse: parseContacts,
};

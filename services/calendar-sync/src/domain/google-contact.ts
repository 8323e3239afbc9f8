import type { people_v1 } from '@memex/google';
import type { ContactFields } from '../projection/schema.js';

/** The People API fields a contact is read with. */
export const PERSON_FIELDS =
  'names,emailAddresses,phoneNumbers,organizations,addresses,biographies,memberships,metadata';

function text(value: string): string {
  return value
    .replace(/\\/g, '\\\\')
    .replace(/\r?\n/g, '\\n')
    .replace(/[,;]/g, (c) => `\\${c}`);
}

function typed(name: string, type: string | null | undefined, value: string): string {
  return `${name}${type ? `;TYPE=${text(type).toUpperCase()}` : ''}:${value}`;
}

/**
 * A Google contact as a vCard 3.0 (what Google Contacts exports), so that it is read by the same
 * contacts handler as a `.vcf` file: its groups (their names) become CATEGORIES, the labels the
 * card carries.
 */
export function vcardOf(person: people_v1.Schema$Person, groupNames: Map<string, string>): string {
  const name = person.names?.[0];
  const groups = (person.memberships ?? [])
    .map((m) => groupNames.get(m.contactGroupMembership?.contactGroupResourceName ?? ''))
    .filter((g): g is string => Boolean(g));
  const lines = [
    'BEGIN:VCARD',
    'VERSION:3.0',
    `UID:${person.resourceName}`,
    `FN:${text(name?.displayName ?? person.emailAddresses?.[0]?.value ?? person.resourceName ?? '')}`,
    `N:${[name?.familyName, name?.givenName, name?.middleName, name?.honorificPrefix, name?.honorificSuffix].map((p) => text(p ?? '')).join(';')}`,
    ...(person.emailAddresses ?? []).filter((e) => e.value).map((e) => typed('EMAIL', e.type, e.value!)),
    ...(person.phoneNumbers ?? []).filter((p) => p.value).map((p) => typed('TEL', p.type, p.value!)),
    ...(person.organizations ?? [])
      .slice(0, 1)
      .flatMap((o) => [...(o.name ? [`ORG:${text(o.name)}`] : []), ...(o.title ? [`TITLE:${text(o.title)}`] : [])]),
    ...(person.biographies ?? [])
      .slice(0, 1)
      .filter((b) => b.value)
      .map((b) => `NOTE:${text(b.value!)}`),
    ...(groups.length > 0 ? [`CATEGORIES:${groups.map(text).join(',')}`] : []),
    'END:VCARD',
    '',
  ];
  return lines.join('\r\n');
}

/** The fields the memex writes back, as a contact has them. */
export function contactFields(person: people_v1.Schema$Person): ContactFields {
  return {
    name: person.names?.[0]?.displayName ?? person.names?.[0]?.unstructuredName ?? '',
    phones: (person.phoneNumbers ?? []).map((p) => p.value ?? '').filter(Boolean),
    addresses: (person.addresses ?? []).map((a) => a.formattedValue ?? '').filter(Boolean),
  };
}

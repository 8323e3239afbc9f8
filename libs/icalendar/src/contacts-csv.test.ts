import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isContactsCsv, parseCsv, readContactsCsv } from './contacts-csv.js';

const csv = (rows: string[][]) =>
  rows.map((row) => row.map((f) => (/[",\n]/.test(f) ? `"${f.replaceAll('"', '""')}"` : f)).join(',')).join('\r\n');

test('RFC 4180: quoted commas, line breaks and doubled quotes; CRLF or LF; a blank line an empty record', () => {
  assert.deepEqual(parseCsv('a,"b, c","say ""hi""\nthere"\r\n\r\nd,,e\n'), [
    ['a', 'b, c', 'say "hi"\nthere'],
    [''],
    ['d', '', 'e'],
  ]);
});

test("Google Contacts' CSV (2024): names, labelled e-mails and phones, organization, address, labels", () => {
  const header = [
    'First Name',
    'Middle Name',
    'Last Name',
    'Name Prefix',
    'Name Suffix',
    'Nickname',
    'Organization Name',
    'Organization Title',
    'Birthday',
    'Notes',
    'Labels',
    'E-mail 1 - Label',
    'E-mail 1 - Value',
    'E-mail 2 - Label',
    'E-mail 2 - Value',
    'Phone 1 - Label',
    'Phone 1 - Value',
    'Address 1 - Label',
    'Address 1 - Formatted',
    'Address 1 - Street',
    'Address 1 - City',
    'Address 1 - Region',
    'Address 1 - Postal Code',
    'Address 1 - Country',
    'Website 1 - Value',
  ];
  const ann = [
    'Ann',
    'B.',
    'Lee',
    'Dr.',
    '',
    'Annie',
    'Acme, Inc.',
    'CTO',
    '1980-05-17',
    'Met at "RustConf"\nin 2019',
    '* myContacts ::: Friends',
    '* Work',
    'ann@acme.example',
    'Home',
    'ann.lee@mail.example ::: annie@mail.example',
    'Mobile',
    '+1 415 555 0100',
    'Home',
    '1 Main St\nSpringfield',
    '1 Main St',
    'Springfield',
    'IL',
    '62701',
    'USA',
    'https://ann.example',
  ];
  const [card] = readContactsCsv(csv([header, ann])).cards;
  assert.equal(card!.fullName, 'Dr. Ann B. Lee');
  assert.deepEqual(card!.name, { given: 'Ann', additional: 'B.', family: 'Lee', prefix: 'Dr.', suffix: '' });
  assert.deepEqual(card!.emails, [
    { address: 'ann@acme.example', types: ['work'] },
    { address: 'ann.lee@mail.example', types: ['home'] },
    { address: 'annie@mail.example', types: ['home'] },
  ]);
  assert.deepEqual(card!.phones, [{ number: '+1 415 555 0100', e164: '+14155550100', types: ['cell'] }]);
  assert.equal(card!.organization, 'Acme, Inc.');
  assert.equal(card!.title, 'CTO');
  assert.equal(card!.birthday, '1980-05-17');
  assert.equal(card!.note, 'Met at "RustConf"\nin 2019');
  assert.deepEqual(card!.categories, ['Friends']);
  assert.deepEqual(card!.nicknames, ['Annie']);
  assert.deepEqual(card!.urls, ['https://ann.example']);
  assert.deepEqual(card!.addresses, [
    {
      street: '1 Main St',
      locality: 'Springfield',
      region: 'IL',
      postalCode: '62701',
      country: 'USA',
      types: ['home'],
    },
  ]);
});

test("Google's older CSV (Name, Given Name, E-mail 1 - Type) and Outlook's (E-mail Address, Business Phone)", () => {
  const google = readContactsCsv(
    csv([
      [
        'Name',
        'Given Name',
        'Family Name',
        'Group Membership',
        'E-mail 1 - Type',
        'E-mail 1 - Value',
        'Phone 1 - Type',
        'Phone 1 - Value',
        'Organization 1 - Name',
        'Organization 1 - Title',
      ],
      [
        'Bob Stone',
        'Bob',
        'Stone',
        '* My Contacts',
        '* Other',
        'bob@stone.example',
        'Work',
        '020 7946 0018',
        'Stone & Co',
        'Mason',
      ],
    ]),
  ).cards;
  assert.equal(google[0]!.fullName, 'Bob Stone');
  assert.deepEqual(google[0]!.emails, [{ address: 'bob@stone.example', types: [] }]);
  assert.deepEqual(google[0]!.phones[0]!.types, ['work']);
  assert.equal(google[0]!.organization, 'Stone & Co');
  const outlook = readContactsCsv(
    csv([
      [
        'Title',
        'First Name',
        'Middle Name',
        'Last Name',
        'Suffix',
        'Company',
        'Department',
        'Job Title',
        'Business Street',
        'Business City',
        'Business Postal Code',
        'Business Country/Region',
        'Business Fax',
        'Business Phone',
        'Mobile Phone',
        'E-mail Address',
        'E-mail Type',
        'E-mail Display Name',
        'E-mail 2 Address',
        'Notes',
      ],
      [
        'Mr.',
        'Carl',
        '',
        'Diaz',
        '',
        'Diaz GmbH',
        'Sales',
        'Head of Sales',
        'Hauptstr. 1',
        'Berlin',
        '10115',
        'Germany',
        '+49 30 901820',
        '+49 30 9018200',
        '+49 151 23456789',
        'carl@diaz.example',
        'SMTP',
        'Carl Diaz (carl@diaz.example)',
        'carl.diaz@mail.example',
        '',
      ],
    ]),
  ).cards;
  const carl = outlook[0]!;
  assert.equal(carl.fullName, 'Carl Diaz');
  assert.deepEqual(
    carl.emails.map((e) => e.address),
    ['carl@diaz.example', 'carl.diaz@mail.example'],
  );
  assert.deepEqual(
    carl.phones.map((p) => [p.e164, p.types]),
    [
      ['+4930901820', ['work', 'fax']],
      ['+49309018200', ['work']],
      ['+4915123456789', ['cell']],
    ],
  );
  assert.deepEqual(carl.addresses, [
    { street: 'Hauptstr. 1', locality: 'Berlin', region: '', postalCode: '10115', country: 'Germany', types: ['work'] },
  ]);
  assert.equal(carl.title, 'Head of Sales');
});

test("LinkedIn's Connections.csv, its notes above the header; a connection with no e-mail still a card", () => {
  const text =
    'Notes:\n"When exporting your connection data, you may notice that some of the email addresses are missing."\n\n' +
    'First Name,Last Name,URL,Email Address,Company,Position,Connected On\n' +
    'Dana,Wu,https://www.linkedin.com/in/danawu,dana@wu.example,Initech,Engineer,12 Mar 2021\n' +
    'Eve,Park,https://www.linkedin.com/in/evepark,,Globex,CFO,01 Feb 2020\n';
  assert.equal(isContactsCsv(text), true);
  const { cards } = readContactsCsv(text);
  assert.deepEqual(
    cards.map((c) => [c.fullName, c.emails.map((e) => e.address), c.organization, c.title, c.urls]),
    [
      ['Dana Wu', ['dana@wu.example'], 'Initech', 'Engineer', ['https://www.linkedin.com/in/danawu']],
      ['Eve Park', [], 'Globex', 'CFO', ['https://www.linkedin.com/in/evepark']],
    ],
  );
});

test('a CSV of anything else is no address book', () => {
  for (const text of [
    'date,amount,payee\n2024-01-02,12.50,Cafe\n',
    'Name,Score\nAnn,3\n',
    'email,subscribed\na@b.example,yes\n',
    '',
  ])
    assert.equal(isContactsCsv(text), false, text);
  assert.throws(() => readContactsCsv('date,amount\n1,2\n'), /not an address book/);
  assert.throws(() => readContactsCsv('First Name,Last Name,E-mail Address\n'), /no contacts in it/);
});

test('a row with nothing to name a contact by is left out and counted; one with only a phone is a card', () => {
  const { cards, unnamedRows } = readContactsCsv(
    'First Name,Last Name,E-mail Address,Mobile Phone,Notes\nAnn,Lee,ann@lee.example,,\n,,,,just a note\n,,,+1 415 555 0100,\n',
  );
  assert.deepEqual(
    cards.map((c) => c.fullName),
    ['Ann Lee', '+1 415 555 0100'],
  );
  assert.deepEqual(unnamedRows, [3]);
});

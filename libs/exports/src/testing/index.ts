import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import yazl from 'yazl';

/**
 * A Google Takeout built for tests (no third-party data): Mail with X-Gmail-Labels, Google Photos
 * with a year folder, an album with metadata.json holding a copy of a photo, and Takeout's own
 * files; the newer one adds a message, changes one message's labels and adds a photo.
 */

export interface SampleMail {
  gmailId: string;
  labels: string;
  subject: string;
  date: string;
}

/** An mbox as Takeout writes it: the Gmail id on the `From ` line, X-GM-THRID and X-Gmail-Labels first. */
function takeoutMbox(messages: SampleMail[]): string {
  return messages
    .map(
      (m) =>
        `From ${m.gmailId}@xxx Tue Jun 04 07:30:00 +0000 2024\n` +
        `X-GM-THRID: ${m.gmailId}\nX-Gmail-Labels: ${m.labels}\n` +
        `From: Ann <ann@example.com>\nTo: me@example.com\nSubject: ${m.subject}\nDate: ${m.date}\n` +
        `Message-ID: <${m.gmailId}@example.com>\n\n${m.subject}: the body.\n`,
    )
    .join('\n');
}

const sidecar = (title: string, seconds: number, latitude: number, longitude: number, description = '') => ({
  title,
  description,
  photoTakenTime: { timestamp: String(seconds), formatted: '' },
  geoData: { latitude, longitude, altitude: 0 },
});

async function jpeg(colour: { r: number; g: number; b: number }): Promise<Buffer> {
  return sharp({ create: { width: 64, height: 48, channels: 3, background: colour } })
    .jpeg()
    .toBuffer();
}

export const FIRST_MAIL: SampleMail[] = [
  {
    gmailId: '1001',
    labels: 'Inbox,Important,Opened,Category Promotions,Work/Acme',
    subject: 'Offer',
    date: 'Mon, 3 Jun 2024 09:00:00 +0200',
  },
  {
    gmailId: '1002',
    labels: 'Archived,Unread,Starred,Family',
    subject: 'Photos of the kids',
    date: 'Tue, 4 Jun 2024 18:15:00 +0000',
  },
  { gmailId: '1003', labels: 'Spam,Opened', subject: 'You won', date: 'Wed, 5 Jun 2024 01:00:00 +0000' },
  { gmailId: '1004', labels: 'Trash,Opened', subject: 'Old newsletter', date: 'Thu, 6 Jun 2024 12:00:00 +0000' },
  { gmailId: '1005', labels: 'Sent,Opened', subject: 'Re: lunch', date: 'Fri, 7 Jun 2024 12:30:00 -0400' },
];

/** A Takeout folder: Mail, Google Photos (a year folder, an album with metadata.json holding a copy of a photo), and Takeout's own files. */
async function writeTakeout(root: string, mail: SampleMail[], extraPhoto: boolean): Promise<void> {
  const rome = await jpeg({ r: 200, g: 80, b: 40 });
  const colosseum = await jpeg({ r: 40, g: 80, b: 200 });
  write(root, {
    'Takeout/archive_browser.html': '<html>Takeout</html>',
    'Takeout/Mail/All mail Including Spam and Trash.mbox': takeoutMbox(mail),
    'Takeout/Mail/User Settings/Filters.xml': '<feed/>',
    'Takeout/Google Photos/Photos from 2019/IMG_0001.jpg': rome,
    'Takeout/Google Photos/Photos from 2019/IMG_0001.jpg.supplemental-metadata.json': JSON.stringify(
      sidecar('IMG_0001.jpg', 1562265000, 41.8902, 12.4922, 'Evening in Rome'),
    ),
    'Takeout/Google Photos/Rome 2019/metadata.json': JSON.stringify({ title: 'Rome 2019', description: '' }),
    'Takeout/Google Photos/Rome 2019/IMG_0001.jpg': rome,
    'Takeout/Google Photos/Rome 2019/IMG_0001.jpg.supplemental-metadata.json': JSON.stringify(
      sidecar('IMG_0001.jpg', 1562265000, 41.8902, 12.4922, 'Evening in Rome'),
    ),
    'Takeout/Google Photos/Rome 2019/IMG_0002.jpg': colosseum,
    'Takeout/Google Photos/Rome 2019/IMG_0002.jpg.json': JSON.stringify(
      sidecar('IMG_0002.jpg', 1562351400, 41.8902, 12.4922),
    ),
  });
  if (extraPhoto) {
    write(root, {
      'Takeout/Google Photos/Photos from 2020/IMG_0100.jpg': await jpeg({ r: 20, g: 160, b: 20 }),
      'Takeout/Google Photos/Photos from 2020/IMG_0100.jpg.json': JSON.stringify(
        sidecar('IMG_0100.jpg', 1590000000, 51.5007, -0.1246),
      ),
    });
  }
}

/** The newer export's mail: message 1002 read now and labelled Travel too, and a new message 1006. */
export const NEWER_MAIL: SampleMail[] = [
  ...FIRST_MAIL.map((m) => (m.gmailId === '1002' ? { ...m, labels: 'Archived,Opened,Starred,Family,Travel' } : m)),
  { gmailId: '1006', labels: 'Inbox,Unread', subject: 'Dinner?', date: 'Mon, 2 Dec 2024 19:00:00 +0000' },
];

/** Writes the sample Takeout under `root` (the first export, or the newer one). */
export function buildTakeout(root: string, which: 'first' | 'newer'): Promise<void> {
  return writeTakeout(root, which === 'first' ? FIRST_MAIL : NEWER_MAIL, which === 'newer');
}

function write(root: string, files: Record<string, string | Buffer>): void {
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), content);
  }
}

/**
 * Zips a folder as Google Takeout splits an export, `<stem>-001.zip`, `<stem>-002.zip`… in `dir`:
 * `partOf` picks each file's part by its path (with `/`), so a photo and its sidecar can be in
 * different parts, as Takeout's are. Returns the parts' paths.
 */
export async function zipTakeout(
  folder: string,
  dir: string,
  stem: string,
  parts: number,
  partOf: (key: string) => number,
): Promise<string[]> {
  const zips = Array.from({ length: parts }, () => new yazl.ZipFile());
  const walk = (at: string): string[] =>
    fs
      .readdirSync(at, { withFileTypes: true })
      .flatMap((entry) => (entry.isDirectory() ? walk(path.join(at, entry.name)) : [path.join(at, entry.name)]));
  for (const file of walk(folder).sort()) {
    const key = path.relative(folder, file).split(path.sep).join('/');
    zips[partOf(key)]!.addFile(file, key);
  }
  fs.mkdirSync(dir, { recursive: true });
  return Promise.all(
    zips.map((zip, i) => {
      const out = path.join(dir, `${stem}-${String(i + 1).padStart(3, '0')}.zip`);
      zip.end();
      return new Promise<string>((resolve, reject) =>
        zip.outputStream
          .pipe(fs.createWriteStream(out))
          .on('close', () => resolve(out))
          .on('error', reject),
      );
    }),
  );
}

/** A zip of `members` (path → content) written to `file`, as Takeout writes its parts (deflated). */
export async function zipOf(file: string, members: Record<string, string | Buffer>): Promise<string> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of Object.entries(members)) zip.addBuffer(Buffer.from(content), name);
  zip.end();
  await new Promise<void>((resolve) => zip.outputStream.pipe(fs.createWriteStream(file)).on('close', () => resolve()));
  return file;
}

const CENTRAL_HEADER = 0x02014b50;

/**
 * Damages a member of a zip file in place, as a bad download or disk does: `method` sets the
 * compression method its headers name (one yauzl cannot read), `garble` overwrites 20 bytes in
 * the middle of its stored data.
 */
export function damageZipMember(file: string, name: string, damage: { method?: number; garble?: boolean }): void {
  const bytes = fs.readFileSync(file);
  for (let at = bytes.indexOf('PK'); at >= 0; at = bytes.indexOf('PK', at + 1)) {
    if (bytes.readUInt32LE(at) !== CENTRAL_HEADER) continue;
    if (bytes.subarray(at + 46, at + 46 + bytes.readUInt16LE(at + 28)).toString() !== name) continue;
    const local = bytes.readUInt32LE(at + 42);
    if (damage.method !== undefined) {
      bytes.writeUInt16LE(damage.method, at + 10);
      bytes.writeUInt16LE(damage.method, local + 8);
    }
    if (damage.garble) {
      const data = local + 30 + bytes.readUInt16LE(local + 26) + bytes.readUInt16LE(local + 28);
      const middle = data + Math.floor(bytes.readUInt32LE(at + 20) / 2);
      bytes.fill(0xff, middle - 10, middle + 10);
    }
  }
  fs.writeFileSync(file, bytes);
}

/** An `<emailAddress>` of an Outlook for Mac archive's message. */
const olmAddress = (name: string, address: string) =>
  `<emailAddress OPFContactEmailAddressAddress="${address}" OPFContactEmailAddressName="${name}"/>`;

/**
 * An Outlook for Mac archive (.olm) as Outlook writes one, built for tests (no third-party data):
 * a message with a PDF attachment in Inbox, an HTML one read in Inbox/Projects, one sent (whose
 * attachment the archive lost, and one it names outside the archive), one whose XML is cut short, the attachment's file,
 * two contacts (one empty), a calendar of five appointments in one file (one repeating weekly, one all-day, one by a
 * pattern not read, one without a start), a task and the categories.
 */
export async function buildOlm(file: string): Promise<string> {
  const account = 'Accounts/ann@example.com';
  const messages = `${account}/com.microsoft.__Messages`;
  const email = (fields: string) =>
    `<?xml version="1.0" encoding="UTF-8"?>\n<emails><email>${fields}</email></emails>\n`;
  return zipOf(file, {
    [`${messages}/Inbox/message_00000.xml`]: email(
      `<OPFMessageCopySubject>Quarterly report &amp; figures</OPFMessageCopySubject>` +
        `<OPFMessageCopySenderAddress>${olmAddress('Bob Stone', 'bob@example.org')}</OPFMessageCopySenderAddress>` +
        `<OPFMessageCopyToAddresses>${olmAddress('Ann Lee', 'ann@example.com')}${olmAddress('Cy', 'cy@example.com')}</OPFMessageCopyToAddresses>` +
        `<OPFMessageCopyCCAddresses>${olmAddress('Dee', 'dee@example.com')}</OPFMessageCopyCCAddresses>` +
        `<OPFMessageCopySentTime>2022-05-26T17:55:40</OPFMessageCopySentTime>` +
        `<OPFMessageCopyReceivedTime>2022-05-26T17:56:02</OPFMessageCopyReceivedTime>` +
        `<OPFMessageCopyMessageID>report-2022@example.org</OPFMessageCopyMessageID>` +
        `<OPFMessageCopyBody>The report is attached.</OPFMessageCopyBody>` +
        `<OPFMessageGetIsRead>0</OPFMessageGetIsRead>` +
        `<OPFMessageCopyAttachmentList><messageAttachment OPFAttachmentName="report.pdf" ` +
        `OPFAttachmentContentType="application/pdf" OPFAttachmentURL="${account}/com.microsoft.__Attachments/report.pdf"/>` +
        `</OPFMessageCopyAttachmentList>`,
    ),
    [`${account}/com.microsoft.__Attachments/report.pdf`]: '%PDF-1.4\n% the quarterly report\n',
    [`${messages}/Inbox/Projects/message_00001.xml`]: email(
      `<OPFMessageCopySubject>Re: Quarterly report &amp; figures</OPFMessageCopySubject>` +
        `<OPFMessageCopySenderAddress>${olmAddress('Cy', 'cy@example.com')}</OPFMessageCopySenderAddress>` +
        `<OPFMessageCopyToAddresses>${olmAddress('Bob Stone', 'bob@example.org')}</OPFMessageCopyToAddresses>` +
        `<OPFMessageCopySentTime>2022-05-27T08:00:00</OPFMessageCopySentTime>` +
        `<OPFMessageCopyMessageID>reply-2022@example.com</OPFMessageCopyMessageID>` +
        `<OPFMessageCopyInReplyTo>&lt;report-2022@example.org&gt;</OPFMessageCopyInReplyTo>` +
        `<OPFMessageCopyHTMLBody>&lt;p&gt;Figures look &lt;b&gt;good&lt;/b&gt;.&lt;/p&gt;</OPFMessageCopyHTMLBody>` +
        `<OPFMessageGetIsRead>1</OPFMessageGetIsRead>`,
    ),
    [`${messages}/Sent Items/message_00002.xml`]: email(
      `<OPFMessageCopySubject xml:space="preserve">Lunch?</OPFMessageCopySubject>` +
        `<OPFMessageCopySenderAddress>${olmAddress('Ann Lee', 'ann@example.com')}</OPFMessageCopySenderAddress>` +
        `<OPFMessageCopyToAddresses>${olmAddress('Bob Stone', 'bob@example.org')}</OPFMessageCopyToAddresses>` +
        `<OPFMessageCopySentTime>2022-05-28T11:00:00</OPFMessageCopySentTime>` +
        `<OPFMessageCopyBody>Lunch on Friday?</OPFMessageCopyBody>` +
        `<OPFMessageCopyAttachmentList><messageAttachment OPFAttachmentName="menu.pdf" ` +
        `OPFAttachmentContentType="application/pdf" OPFAttachmentURL="${account}/com.microsoft.__Attachments/menu.pdf"/>` +
        // A path out of the archive, to a file beside it on disk.
        `<messageAttachment OPFAttachmentName="secret.txt" OPFAttachmentURL="../secret.txt"/>` +
        `</OPFMessageCopyAttachmentList>`,
    ),
    [`${messages}/Inbox/message_00003.xml`]: '<?xml version="1.0"?>\n<emails><email><OPFMessageCopySubject>Cut',
    [`${account}/com.microsoft.__Contacts/Address Book/contact_00000.xml`]:
      `<?xml version="1.0" encoding="UTF-8"?>\n<contacts><contact>` +
      `<OPFContactCopyDisplayName>Bob Stone</OPFContactCopyDisplayName><OPFContactCopyFirstName>Bob</OPFContactCopyFirstName>` +
      `<OPFContactCopyLastName>Stone</OPFContactCopyLastName><OPFContactCopyBusinessCompany>Stone &amp; Sons</OPFContactCopyBusinessCompany>` +
      `<OPFContactCopyBusinessTitle>Director</OPFContactCopyBusinessTitle>` +
      `<OPFContactCopyEmailAddressList><contactEmailAddress OPFContactEmailAddressAddress="bob@example.org" OPFContactEmailAddressType="0"/>` +
      `<contactEmailAddress OPFContactEmailAddressAddress="bob.stone@example.net" OPFContactEmailAddressType="1"/></OPFContactCopyEmailAddressList>` +
      `<OPFContactCopyCellPhone>+44 20 7946 0958</OPFContactCopyCellPhone><OPFContactCopyBusinessFax>+44 20 7946 0000</OPFContactCopyBusinessFax>` +
      `<OPFContactCopyBusinessStreetAddress>1 High Street</OPFContactCopyBusinessStreetAddress>` +
      `<OPFContactCopyBusinessCity>London</OPFContactCopyBusinessCity><OPFContactCopyBusinessZip>EC1A 1BB</OPFContactCopyBusinessZip>` +
      `<OPFContactCopyBusinessCountry>United Kingdom</OPFContactCopyBusinessCountry>` +
      `<OPFContactCopyBirthday>1970-03-14T00:00:00</OPFContactCopyBirthday>` +
      `<OPFContactCopyNotes>&lt;p&gt;Met at the &lt;b&gt;2021&lt;/b&gt; fair.&lt;/p&gt;</OPFContactCopyNotes>` +
      `</contact></contacts>\n`,
    [`${account}/com.microsoft.__Contacts/Address Book/contact_00001.xml`]: '<contacts><contact/></contacts>',
    // An older archive: a calendar's appointments in one file.
    [`${account}/com.microsoft.__Calendars/Calendar/Calendar.xml`]:
      `<?xml version="1.0" encoding="UTF-8"?>\n<appointments>` +
      `<appointment><OPFCalendarEventCopyUUID>review-1</OPFCalendarEventCopyUUID>` +
      `<OPFCalendarEventCopySummary>Budget review</OPFCalendarEventCopySummary>` +
      `<OPFCalendarEventCopyStartTime>2022-06-01T09:00:00</OPFCalendarEventCopyStartTime>` +
      `<OPFCalendarEventCopyEndTime>2022-06-01T10:00:00</OPFCalendarEventCopyEndTime>` +
      `<OPFCalendarEventCopyLocation>Room 4</OPFCalendarEventCopyLocation>` +
      `<OPFCalendarEventCopyOrganizer>Ann Lee &lt;ann@example.com&gt;</OPFCalendarEventCopyOrganizer>` +
      `<OPFCalendarEventCopyAttendeeList><appointmentAttendee OPFCalendarAttendeeAddress="bob@example.org" OPFCalendarAttendeeName="Bob Stone" OPFCalendarAttendeeType="1"/>` +
      `<appointmentAttendee OPFCalendarAttendeeAddress="cy@example.com" OPFCalendarAttendeeName="Cy" OPFCalendarAttendeeType="2"/></OPFCalendarEventCopyAttendeeList>` +
      `<OPFCalendarEventCopyDescriptionPlain>Figures for Q2.</OPFCalendarEventCopyDescriptionPlain>` +
      `<OPFCalendarEventGetIsAllDayEvent>0</OPFCalendarEventGetIsAllDayEvent></appointment>` +
      `<appointment><OPFCalendarEventCopyUUID>standup-1</OPFCalendarEventCopyUUID>` +
      `<OPFCalendarEventCopySummary>Stand-up</OPFCalendarEventCopySummary>` +
      `<OPFCalendarEventCopyStartTime>2022-06-06T08:30:00Z</OPFCalendarEventCopyStartTime>` +
      `<OPFCalendarEventCopyEndTime>2022-06-06T08:45:00Z</OPFCalendarEventCopyEndTime>` +
      `<OPFCalendarEventCopyRecurrence><OPFRecurrencePattern><OPFRecurrencePatternType>OPFRecurrencePatternWeekly</OPFRecurrencePatternType>` +
      `<OPFRecurrencePatternInterval>1</OPFRecurrencePatternInterval><OPFRecurrencePatternMonday>1</OPFRecurrencePatternMonday>` +
      `<OPFRecurrencePatternWednesday>1</OPFRecurrencePatternWednesday></OPFRecurrencePattern>` +
      `<OPFRecurrenceGetOccurenceCount>4</OPFRecurrenceGetOccurenceCount></OPFCalendarEventCopyRecurrence></appointment>` +
      `<appointment><OPFCalendarEventCopyUUID>holiday-1</OPFCalendarEventCopyUUID>` +
      `<OPFCalendarEventCopySummary>Bank holiday</OPFCalendarEventCopySummary>` +
      `<OPFCalendarEventCopyStartTime>2022-06-02T00:00:00</OPFCalendarEventCopyStartTime>` +
      `<OPFCalendarEventCopyEndTime>2022-06-03T00:00:00</OPFCalendarEventCopyEndTime>` +
      `<OPFCalendarEventGetIsAllDayEvent>1</OPFCalendarEventGetIsAllDayEvent></appointment>` +
      `<appointment><OPFCalendarEventCopyUUID>board-1</OPFCalendarEventCopyUUID>` +
      `<OPFCalendarEventCopySummary>Board meeting</OPFCalendarEventCopySummary>` +
      `<OPFCalendarEventCopyStartTime>2022-06-14T15:00:00</OPFCalendarEventCopyStartTime>` +
      `<OPFCalendarEventCopyEndTime>2022-06-14T17:00:00</OPFCalendarEventCopyEndTime>` +
      `<OPFCalendarEventCopyRecurrence><OPFRecurrencePattern><OPFRecurrencePatternType>OPFRecurrencePatternRelativeMonthly</OPFRecurrencePatternType>` +
      `</OPFRecurrencePattern></OPFCalendarEventCopyRecurrence></appointment>` +
      `<appointment><OPFCalendarEventCopySummary>No time</OPFCalendarEventCopySummary></appointment>` +
      `</appointments>\n`,
    [`${account}/com.microsoft.__Tasks/Tasks/task_00000.xml`]: '<tasks><task/></tasks>',
    'Categories.xml': '<categories/>',
  });
}

/**
 * An Evernote export (.enex) as Evernote writes one, built for tests (no third-party data): a
 * note with tags, a source URL, check boxes, encrypted text and two attachments (`pdf`, named,
 * and a zip without a name); a second note made the same second; one whose XML is broken; one
 * without dates or title whose source is no web address, with a text attachment; and, `cutShort`, a last note the file
 * ends inside.
 */
export function buildEnex(file: string, { pdf, cutShort }: { pdf: Buffer; cutShort: boolean }): string {
  const md5 = createHash('md5').update(pdf).digest('hex');
  const enml = (body: string) =>
    `<![CDATA[<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n` +
    `<!DOCTYPE en-note SYSTEM "http://xml.evernote.com/pub/enml2.dtd">\n<en-note>${body}</en-note>]]>`;
  const resource = (data: Buffer, mime: string, name?: string) =>
    `<resource><data encoding="base64">\n${data.toString('base64').replace(/.{1,76}/g, '$&\n')}</data><mime>${mime}</mime>` +
    `${name ? `<resource-attributes><file-name>${name}</file-name></resource-attributes>` : ''}</resource>`;
  const notes = [
    `<note><title>Bread &amp; butter</title><content>${enml(
      `<div>Mix the flour.</div><en-media hash="${md5}" type="application/pdf"/>` +
        `<div><en-todo checked="true"/>buy flour</div><div><en-todo/>buy yeast</div>` +
        `<en-crypt hint="the usual">c2VjcmV0IHJlY2lwZQ==</en-crypt>`,
    )}</content><created>20130730T205204Z</created><updated>20130801T100000Z</updated>` +
      `<tag>baking</tag><tag>family</tag><tag>family</tag>` +
      `<note-attributes><author>ann</author><source-url>https://example.com/bread</source-url></note-attributes>` +
      `${resource(pdf, 'application/pdf', 'receipt.pdf')}${resource(Buffer.from('PK\x05\x06'), 'application/zip')}</note>`,
    `<note><title>Second</title><content>${enml('<div>Made the same second.</div>')}</content>` +
      `<created>20130730T205204Z</created></note>`,
    `<note><title>Oops</title><created>20130730T205204Z<created></note>`,
    `<note><title></title><content>${enml('<div>No title, no date.</div>')}</content>` +
      `<note-attributes><source-url>javascript:alert(1)</source-url></note-attributes>` +
      `${resource(Buffer.from('Call the plumber.\n'), 'text/plain', 'todo.txt')}</note>`,
  ];
  const xml =
    `<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE en-export SYSTEM "http://xml.evernote.com/pub/evernote-export3.dtd">\n` +
    `<en-export export-date="20130802T090000Z" application="Evernote" version="Evernote Mac 5.2.0">\n${notes.join('\n')}\n` +
    (cutShort ? '<note><title>Cut short</title><content><![CDATA[<en-note>half' : '</en-export>\n');
  fs.writeFileSync(file, xml);
  return file;
}

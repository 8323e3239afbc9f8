import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { message } from '../testing/build.js';
import { parseEmail } from '../testing/parse.js';
import { changeTo, gmailState, takeoutLabels } from './gmail-labels.js';

const takeoutMail = (labels: string) =>
  message([
    ['X-GM-THRID', '1612345678901234567'],
    ['X-Gmail-Labels', labels],
    ['From', 'Ann <ann@example.com>'],
    ['To', 'me@example.com'],
    ['Subject', 'Lunch'],
    ['Date', 'Tue, 04 Jun 2024 09:30:00 +0200'],
    ['Message-ID', '<lunch@example.com>'],
  ]);

describe('Google Takeout X-Gmail-Labels', () => {
  test("Takeout's label names read as Gmail's ids; markers go; quoted names keep their commas", () => {
    assert.deepEqual(
      takeoutLabels('Inbox,Important,Opened,Starred,Category Promotions,"Clients, old",Work/Acme,Archived,Drafts'),
      ['CATEGORY_PROMOTIONS', 'Clients, old', 'DRAFT', 'IMPORTANT', 'INBOX', 'STARRED', 'Work/Acme'],
    );
    assert.deepEqual(takeoutLabels('Unread, Spam'), ['SPAM', 'UNREAD']);
    assert.deepEqual(takeoutLabels(''), []);
  });

  test('a Takeout message: read, starred, inbox, spam and mail labels from its labels', async () => {
    const inbox = await parseEmail(takeoutMail('Inbox,Opened,Starred,Category Updates,Family'));
    assert.deepEqual(inbox.meta.gmail, {
      labels: ['CATEGORY_UPDATES', 'Family', 'INBOX', 'STARRED'],
      threadId: '1612345678901234567',
    });
    assert.deepEqual(inbox.meta.flags, { read: true, starred: true });
    assert.deepEqual(inbox.meta.labels, ['Family']);
    assert.equal(inbox.meta.spam, false);

    const unread = await parseEmail(takeoutMail('Archived,Unread,Sent'));
    assert.deepEqual(unread.meta.flags, { read: false, starred: false });
    assert.deepEqual(unread.meta.labels, ['SENT']);
    assert.equal(gmailState(unread.meta.gmail!.labels).inbox, false);

    const spam = await parseEmail(takeoutMail('Spam,Opened'));
    assert.equal(spam.meta.spam, true);
    assert.match(spam.meta.spamReason!, /Gmail label Spam/);

    // Non-ASCII label names come as encoded words.
    const encoded = await parseEmail(takeoutMail('Inbox,=?UTF-8?Q?Fam=C3=ADlia?='));
    assert.deepEqual(encoded.meta.labels, ['Família']);

    const plain = await parseEmail(
      message([
        ['From', 'a@example.com'],
        ['Subject', 'x'],
      ]),
    );
    assert.equal(plain.meta.gmail, undefined, 'a message without X-Gmail-Labels is no Takeout message');
  });

  test('a newer export: the change from what the memex shows to what the labels say, or none', () => {
    const shown = { read: false, starred: true, inbox: false, trashed: false, mail_labels: ['Family'] };
    assert.equal(changeTo(shown, ['UNREAD', 'STARRED', 'Family']), null);
    assert.deepEqual(changeTo(shown, ['INBOX', 'Travel', 'TRASH']), {
      read: true,
      starred: false,
      archived: false,
      trashed: true,
      labels_added: ['Travel'],
      labels_removed: ['Family'],
    });
  });
});

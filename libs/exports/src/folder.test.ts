import { test } from 'node:test';
import assert from 'node:assert/strict';
import { messageFolderOf } from './folder.js';

test("a saved message's folder label: the folder it sits in, or for Apple Mail's store its mailboxes", () => {
  assert.equal(messageFolderOf('Junk/offer.eml'), 'Junk');
  assert.equal(messageFolderOf('2009/Work/plan.msg'), '2009/Work');
  assert.equal(messageFolderOf('loose.eml'), undefined);
  assert.equal(messageFolderOf('V10/4F2A/INBOX.mbox/9C1E/Data/3/1/Messages/31245.emlx'), 'INBOX');
  assert.equal(messageFolderOf('Work.mbox/Projects.mbox/77AA/Data/Messages/12.partial.emlx'), 'Work/Projects');
  assert.equal(messageFolderOf('Mailboxes/Junk.mbox/Messages/7.emlx'), 'Junk');
});

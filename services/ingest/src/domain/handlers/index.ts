/** The ingest handlers: pure parsing of one item's bytes into a ParsedItem, or a RejectedItem. */
export * from './handler.js';
export { HandlerRegistry, createRegistry, formatBytes, type HandlerDescription } from './registry.js';
export { decodeItemData, base64Problem } from './base64.js';
export { decideOutcome, type IngestOutcome, type KnownItems } from './outcome.js';
export {
  mailHandler,
  mailAttributesSchema,
  MAIL_LIMIT_BYTES,
  importedMailAccount,
  isSpamFolder,
} from './mail/mail-handler.js';
export { parseIdList, normaliseMessageId, threadKey } from './mail/threading.js';
export { gmailState, changeTo, type GmailState } from './mail/gmail-labels.js';
export {
  documentHandler,
  documentAttributesSchema,
  documentTypeFor,
  parseDocument,
  DOCUMENT_LIMIT_BYTES,
} from './document/document-handler.js';
export {
  calendarHandler,
  calendarAttributesSchema,
  parseCalendar,
  CALENDAR_LIMIT_BYTES,
} from './calendar/calendar-handler.js';
export {
  contactsHandler,
  contactsAttributesSchema,
  parseContacts,
  CONTACTS_LIMIT_BYTES,
} from './contacts/contacts-handler.js';

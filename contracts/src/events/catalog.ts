import { EventRegistry } from './envelope.js';
import { accountEvents } from './accounts.js';
import { calendarEvents } from './calendar.js';
import { gmailEvents } from './gmail.js';
import { imapEvents } from './imap.js';
import { outgoingEvents } from './outgoing.js';
import { ruleEvents } from './rules.js';
import { proposalEvents } from './proposals.js';
import { sourceEvents } from './sources.js';
import { graphEvents } from './graph.js';
import { ingestEvents } from './ingest.js';
import { headEvents } from './head.js';
import { insightsEvents } from './insights.js';
import { itemEvents } from './items.js';
import { mailEvents } from './mail.js';
import { mediaEvents } from './media.js';
import { pipelinesEvents } from './pipelines.js';
import { understandingEvents } from './understanding.js';
import { paperEvents } from './papers.js';
import { commitmentEvents } from './commitments.js';
import { tier0Events } from './tier0.js';
import { tokenEvents } from './tokens.js';

/** Every event type the memex knows; each area lists its own in its file. */
export const eventCatalog = new EventRegistry().register(
  ...itemEvents,
  ...ingestEvents,
  ...tokenEvents,
  ...mailEvents,
  ...mediaEvents,
  ...pipelinesEvents,
  ...understandingEvents,
  ...paperEvents,
  ...commitmentEvents,
  ...tier0Events,
  ...sourceEvents,
  ...graphEvents,
  ...insightsEvents,
  ...headEvents,
  ...accountEvents,
  ...calendarEvents,
  ...gmailEvents,
  ...imapEvents,
  ...outgoingEvents,
  ...ruleEvents,
  ...proposalEvents,
);

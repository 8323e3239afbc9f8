import type { Static } from '@sinclair/typebox';
import type { MailThreadMessage } from '@memex/contracts';

type Original = Static<typeof MailThreadMessage>;
type Address = { name: string; address: string };
export type ComposeMode = 'new' | 'reply' | 'reply_all' | 'forward';

/** What MailComposer needs, worked out from the mode and the message answered. */
export interface Composition {
  to: string[];
  cc: string[];
  subject: string;
  text: string;
  inReplyTo?: string;
  references?: string[];
}

export function formatted(address: Address): string {
  return address.name ? `"${address.name.replace(/["\\]/g, '')}" <${address.address}>` : address.address;
}

function prefixed(prefix: 'Re' | 'Fwd', subject: string): string {
  return new RegExp(`^${prefix}:`, 'i').test(subject.trim()) ? subject : `${prefix}: ${subject}`;
}

/** `> ` before each line of the original, under an attribution line. */
export function quoted(original: Original): string {
  const who = original.from[0] ? formatted(original.from[0]) : 'someone';
  return `On ${new Date(original.date).toUTCString()}, ${who} wrote:\n${original.text
    .split(/\r?\n/)
    .map((line) => (line ? `> ${line}` : '>'))
    .join('\n')}`;
}

/**
 * Recipients, subject, body and threading headers for a reply, reply-all or forward of
 * `original` (the thread's messages before it give References), or a new mail as given.
 */
export function compose(
  mode: ComposeMode,
  me: string,
  given: { to?: string[]; cc?: string[]; subject?: string; text: string },
  original?: { message: Original; thread: Original[] },
): Composition {
  if (mode === 'new' || !original) {
    return { to: given.to ?? [], cc: given.cc ?? [], subject: given.subject ?? '', text: given.text };
  }
  const { message, thread } = original;
  if (mode === 'forward') {
    const header = [
      '---------- Forwarded message ---------',
      `From: ${message.from.map(formatted).join(', ')}`,
      `Date: ${new Date(message.date).toUTCString()}`,
      `Subject: ${message.subject}`,
      `To: ${message.to.map(formatted).join(', ')}`,
    ].join('\n');
    return {
      to: given.to ?? [],
      cc: given.cc ?? [],
      subject: given.subject ?? prefixed('Fwd', message.subject),
      text: `${given.text}\n\n${header}\n\n${message.text}`,
    };
  }
  const mine = (a: Address) => a.address.toLowerCase() === me.toLowerCase();
  // Answering my own message goes to whom it went to.
  const sender = message.from.some(mine) ? message.to : message.from;
  const to = given.to ?? sender.map(formatted);
  const others =
    mode === 'reply_all'
      ? [...message.to, ...message.cc].filter((a) => !mine(a) && !sender.some((s) => s.address === a.address))
      : [];
  const cc = given.cc ?? others.map(formatted);
  const upTo = thread.slice(0, thread.findIndex((m) => m.id === message.id) + 1);
  const references = upTo.flatMap((m) => (m.message_id ? [m.message_id] : []));
  return {
    to,
    cc,
    subject: given.subject ?? prefixed('Re', message.subject),
    text: `${given.text}\n\n${quoted(message)}`,
    ...(message.message_id ? { inReplyTo: message.message_id, references } : {}),
  };
}

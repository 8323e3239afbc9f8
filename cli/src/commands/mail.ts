import type { Command } from 'commander';
import { MailCancel, MailCompose, MailDraftDelete, MailDraftUpdate, MailOutgoing } from '@memex/contracts';
import { client, output } from '../context.js';

interface ComposeOptions {
  from: string;
  to?: string[];
  cc?: string[];
  bcc?: string[];
  subject?: string;
  text: string;
  reply?: string;
  replyAll?: string;
  forward?: string;
  attach?: string[];
  at?: string;
  undo?: string;
  draft?: boolean;
}

export function registerMail(program: Command): void {
  const mail = program
    .command('mail')
    .description('write mail from a connected Gmail account (memex accounts add google)');
  mail
    .command('send')
    .description(
      'write a mail, a reply, a reply-all or a forward; it goes after the undo window (10 s), at --at, or stays a draft',
    )
    .requiredOption('--from <address>', 'the connected account to send from')
    .requiredOption('--text <text>', 'the body (a reply quotes the original below it)')
    .option('--to <address...>')
    .option('--cc <address...>')
    .option('--bcc <address...>')
    .option('--subject <subject>')
    .option('--reply <id>', 'reply to this message (an item id)')
    .option('--reply-all <id>', 'reply to everyone on this message')
    .option('--forward <id>', 'forward this message')
    .option('--attach <id...>', 'memex items to attach')
    .option('--at <time>', 'send later, at this ISO time')
    .option('--undo <seconds>', 'the undo window')
    .option('--draft', 'keep it as a draft (also in Gmail drafts)')
    .action(async (options: ComposeOptions) => {
      const answered = options.reply ?? options.replyAll ?? options.forward;
      const mode = options.reply ? 'reply' : options.replyAll ? 'reply_all' : options.forward ? 'forward' : 'new';
      const sent = await client().call(MailCompose, {
        account: options.from,
        mode,
        text: options.text,
        ...(answered ? { message: answered } : {}),
        ...(options.to ? { to: options.to } : {}),
        ...(options.cc ? { cc: options.cc } : {}),
        ...(options.bcc ? { bcc: options.bcc } : {}),
        ...(options.subject ? { subject: options.subject } : {}),
        ...(options.attach ? { attachments: options.attach } : {}),
        ...(options.at ? { send_at: new Date(options.at).toISOString() } : {}),
        ...(options.undo !== undefined ? { undo_seconds: Number(options.undo) } : {}),
        ...(options.draft ? { draft: true } : {}),
      });
      console.log(
        sent.state === 'draft'
          ? `draft ${sent.id} saved`
          : `${sent.id} goes at ${sent.send_at} (memex mail cancel ${sent.id} until then)`,
      );
    });
  mail
    .command('cancel <id>')
    .description('undo send: cancel a mail before it goes')
    .action(async (id: string) => {
      await client().call(MailCancel, { id });
      console.log(`cancelled ${id}: nothing is sent`);
    });
  mail
    .command('edit <draft>')
    .description('edit a draft written here (the options given replace its own; the Gmail draft follows)')
    .option('--to <address...>')
    .option('--cc <address...>')
    .option('--bcc <address...>')
    .option('--subject <subject>')
    .option('--text <text>')
    .option('--attach <id...>', 'memex items to attach instead of its attachments')
    .action(async (id: string, options: Omit<ComposeOptions, 'from' | 'text'> & { text?: string }) => {
      await client().call(MailDraftUpdate, {
        id,
        ...(options.to ? { to: options.to } : {}),
        ...(options.cc ? { cc: options.cc } : {}),
        ...(options.bcc ? { bcc: options.bcc } : {}),
        ...(options.subject !== undefined ? { subject: options.subject } : {}),
        ...(options.text !== undefined ? { text: options.text } : {}),
        ...(options.attach ? { attachments: options.attach } : {}),
      });
      console.log(`draft ${id} saved`);
    });
  mail
    .command('delete-draft <draft>')
    .description('delete a draft written here (and its Gmail draft)')
    .action(async (id: string) => {
      await client().call(MailDraftDelete, { id });
      console.log(`draft ${id} deleted`);
    });
  mail
    .command('outgoing')
    .description('mail written here: scheduled, drafts, sent, failed')
    .option('--state <state>', 'scheduled, draft, sending, sent, cancelled, failed or deleted')
    .option('--json', 'print JSON')
    .action(
      async (options: {
        state?: 'scheduled' | 'draft' | 'sending' | 'sent' | 'cancelled' | 'failed' | 'deleted';
        json?: boolean;
      }) => {
        const { outgoing } = await client().call(MailOutgoing, options.state ? { state: options.state } : {});
        output(Boolean(options.json), outgoing, () =>
          outgoing.length === 0
            ? 'nothing'
            : outgoing
                .map(
                  (o) =>
                    `${o.id}  ${o.state.padEnd(9)}  ${o.send_at ?? '-'}  to ${o.to.join(', ')}  "${o.subject}"${o.error ? `  (${o.error})` : ''}`,
                )
                .join('\n'),
        );
      },
    );
}

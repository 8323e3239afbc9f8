import type { Command } from 'commander';
import { MailApprovalsDecide, MailApprovalsList } from '@memex/contracts';
import { client, output } from '../context.js';

export function registerApprovals(program: Command): void {
  const approvals = program.command('approvals').description('mail proposed by agents, waiting for your decision');
  approvals
    .command('list', { isDefault: true })
    .option('--state <state>', 'pending (default), approved or rejected')
    .option('--json', 'print JSON')
    .action(async (options: { state?: 'pending' | 'approved' | 'rejected'; json?: boolean }) => {
      const { proposals } = await client().call(MailApprovalsList, options.state ? { state: options.state } : {});
      output(Boolean(options.json), proposals, () =>
        proposals.length === 0
          ? 'nothing waits for approval'
          : proposals
              .map(
                (p) =>
                  `${p.id}  ${p.state}  from ${p.account} to ${p.to.join(', ') || '(reply)'}  "${p.subject}"  proposed by ${p.proposer}\n    | ${p.text.split('\n').join('\n    | ')}`,
              )
              .join('\n'),
      );
    });
  approvals
    .command('approve <id>')
    .description('queue the proposed mail (sent after the undo window)')
    .action(async (id: string) => {
      const { outgoing_id } = await client().call(MailApprovalsDecide, { id, approve: true });
      console.log(`approved ${id}: queued as ${outgoing_id} (memex.mail.cancel within the undo window takes it back)`);
    });
  approvals.command('reject <id>').action(async (id: string) => {
    await client().call(MailApprovalsDecide, { id, approve: false });
    console.log(`rejected ${id}`);
  });
}

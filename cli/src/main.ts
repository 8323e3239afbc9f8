import { Command } from 'commander';
import { MemexError } from '@memex/contracts';
import { registerFailures } from './commands/failures.js';
import { registerAccounts } from './commands/accounts.js';
import { registerApprovals } from './commands/approvals.js';
import { registerMail } from './commands/mail.js';
import { registerRules } from './commands/rules.js';
import { registerCalendar } from './commands/calendar.js';
import { registerGraph } from './commands/graph.js';
import { registerHead } from './commands/head.js';
import { registerImport } from './commands/import.js';
import { registerInsights } from './commands/insights.js';
import { registerModels } from './commands/models.js';
import { registerJobs } from './commands/jobs.js';
import { registerUnderstanding } from './commands/understanding.js';
import { registerPhotos } from './commands/photos.js';
import { registerReplay } from './commands/replay.js';
import { registerSearch } from './commands/search.js';
import { registerSources } from './commands/sources.js';
import { registerStack } from './commands/stack.js';
import { registerStatus } from './commands/status.js';
import { registerToken } from './commands/token.js';
import { registerWorker } from './commands/worker.js';
import { registerMcp } from './mcp/command.js';

const program = new Command('memex').description('Memex: your personal knowledge store').showHelpAfterError();
registerStack(program);
registerStatus(program);
registerToken(program);
registerAccounts(program);
registerRules(program);
registerApprovals(program);
registerMail(program);
registerReplay(program);
registerFailures(program);
registerImport(program);
registerPhotos(program);
registerSources(program);
registerWorker(program);
registerCalendar(program);
registerSearch(program);
registerModels(program);
registerJobs(program);
registerUnderstanding(program);
registerGraph(program);
registerInsights(program);
registerHead(program);
registerMcp(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  const message = error instanceof MemexError ? `${error.code}: ${error.message}` : (error as Error).message;
  console.error(`memex: ${message}`);
  process.exitCode = 1;
}

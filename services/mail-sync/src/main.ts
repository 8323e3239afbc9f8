import { runService } from '@memex/runtime';
import { MailSyncModule } from './mail-sync.module.js';

await runService('mail-sync', (config) => MailSyncModule.register(config));

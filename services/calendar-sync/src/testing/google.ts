import type { INestApplicationContext } from '@nestjs/common';
import {
  AccountsAdd,
  AccountsList,
  CalendarList,
  OWNER_SCOPE,
  type MethodDefinition,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { Bus, callMethod } from '@memex/bus';
import { endpointsEnv, GOOGLE_SCOPES } from '@memex/google';
import { FakeGmail, FakeGoogleServer } from '@memex/google/testing';
import { IngestModule } from '@memex/ingest';
import { MailSyncModule } from '@memex/mail-sync';
import { startService } from '@memex/runtime';
import { createTestEnv, type TestEnv } from '@memex/testing';
import { CalendarSyncModule } from '../calendar-sync.module.js';
import { FakeCalendar } from './fake-calendar.js';
import { FakePeople } from './fake-people.js';

/** A fake Google (OAuth, Gmail, Calendar v3, People v1), ingest, mail-sync (the account owner) and calendar-sync. */
export interface GoogleHarness {
  env: TestEnv;
  bus: Bus;
  google: FakeGoogleServer;
  gmail: FakeGmail;
  calendar: FakeCalendar;
  people: FakePeople;
  calendarSync: INestApplicationContext | undefined;
  call<M extends MethodDefinition>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>>;
  connect(account: string): Promise<void>;
  stop(): Promise<void>;
}

/** The environment calendar-sync runs under against the fake: its endpoints, no polling (tests sync by command). */
export function calendarSyncEnv(google: FakeGoogleServer): Record<string, string> {
  return {
    ...endpointsEnv(google.endpoints),
    MEMEX_CALENDAR_POLL_MS: '0',
    MEMEX_GMAIL_POLL_MS: '3600000',
    MEMEX_GOOGLE_RETRY_BASE_MS: '5',
  };
}

export async function startGoogleCalendar(options: { calendarSync?: boolean } = {}): Promise<GoogleHarness> {
  const google = await new FakeGoogleServer().start();
  const gmail = new FakeGmail(google);
  const calendar = new FakeCalendar(google);
  const people = new FakePeople(google);
  Object.assign(process.env, calendarSyncEnv(google));
  const env = await createTestEnv();
  const ingest = await startService((config) => IngestModule.register(config), env.config);
  const mailSync = await startService((config) => MailSyncModule.register(config), env.config);
  const calendarSync =
    options.calendarSync === false
      ? undefined
      : await startService((config) => CalendarSyncModule.register(config), env.config);
  const bus = await Bus.connect(env.config.natsUrl, 'calendar-google-test');
  const call: GoogleHarness['call'] = (method, params) => callMethod(bus, method, params, { scope: OWNER_SCOPE });
  return {
    env,
    bus,
    google,
    gmail,
    calendar,
    people,
    calendarSync,
    call,
    async connect(account) {
      const refreshToken = google.issueRefreshToken(account, Object.values(GOOGLE_SCOPES));
      const { seq } = await call(AccountsAdd, {
        provider: 'google',
        client_id: google.clientId,
        client_secret: google.clientSecret,
        refresh_token: refreshToken,
      });
      // Both read models know the account before a sync asks for it.
      await call(AccountsList, { min_seq: seq });
      if (calendarSync)
        await call(CalendarList, { from: '2000-01-01T00:00:00Z', to: '2000-01-02T00:00:00Z', min_seq: seq });
    },
    async stop() {
      await bus.close();
      await calendarSync?.close();
      await mailSync.close();
      await ingest.close();
      await env.stop();
      await google.stop();
    },
  };
}

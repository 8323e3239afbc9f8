import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { InferencesList, NotesPut, SignalsList } from '@memex/contracts';
import { startStack, type TestStack } from '@memex/e2e';

const CLI = fileURLToPath(new URL('../../bin/memex.js', import.meta.url));
const run = promisify(execFile);

describe('memex signals, inferences, digest and schedule', () => {
  let stack: TestStack;
  let noteId: string;

  /** Runs the CLI against the test stack; answers stdout (a failure rejects with stderr). */
  const memex = async (...args: string[]): Promise<string> =>
    (
      await run(process.execPath, [CLI, ...args], {
        env: { ...process.env, MEMEX_URL: stack.url, MEMEX_TOKEN: stack.ownerToken, MEMEX_HOME: stack.config.home },
      })
    ).stdout;

  /** Lets the insights read model apply a write the CLI answered with (as JSON carrying `seq`). */
  const applied = async (json: string) =>
    stack.owner.call(InferencesList, { min_seq: (JSON.parse(json) as { seq: number }).seq });

  before(async () => {
    stack = await startStack(['ingest', 'graph', 'insights']);
    for (const target of ['Alpha', 'Beta']) {
      noteId = (await stack.owner.call(NotesPut, { title: `asks ${target}`, body: `What is [[${target}]]?` })).id;
    }
    await stack.owner.call(SignalsList, { min_seq: 0 });
  });
  after(async () => stack?.stop());

  test('signals lists pending signals; --dismiss and --snooze judge them; mint makes an inference', async () => {
    const listed = await memex('signals');
    assert.match(
      listed,
      /^#1 dangling_link {2}0\.50\n {3}\[\[Alpha\]\] names no note; linked from "asks Alpha"\n#2 dangling_link/,
    );
    assert.match(listed, /over 2 notes \(2 without a vector yet, left out of hidden_arc\)\n$/);

    await applied(await memex('signals', '--dismiss', '1', '--json'));
    await applied(await memex('signals', '--snooze', '2', '--until', '2999-01-01', '--json'));
    assert.match(await memex('signals'), /^no signals\n/);
    assert.match(await memex('signals', '--status', 'all'), /\[dismissed\][\s\S]*\[snoozed until 2999-01-01\]/);
    await assert.rejects(memex('signals', '--snooze', '2'), /--snooze needs --until DATE/);

    await applied(await memex('signals', '--reopen', '2', '--json'));
    const minted = await memex(
      'signals',
      'mint',
      '2',
      '--title',
      'Beta is an open question',
      '--summary',
      'Asked, never answered.',
      '--confidence',
      '0.6',
      '--model',
      'claude-test',
      '--json',
    );
    assert.equal(JSON.parse(minted).citation, `[Inference #1, conf 0.60, from notes #${noteId}]`);
    await applied(minted);
    assert.match(await memex('signals', '--status', 'minted'), /^#2 dangling_link {2}0\.50 {2}\[minted\]/);
    await assert.rejects(
      memex('signals', 'mint', '2', '--title', 't', '--summary', 's', '--confidence', '2', '--model', 'm'),
      /--confidence must be a number from 0 to 1, got "2"/,
    );
  });

  test('inferences lists and shows them; an edited source shows it stale, re-minting makes it active', async () => {
    assert.equal(
      await memex('inferences'),
      `[Inference #1, conf 0.60, from notes #${noteId}]  Beta is an open question\n`,
    );
    const edit = await stack.owner.call(NotesPut, {
      id: noteId,
      title: 'asks Beta',
      body: 'What is [[Beta]], really?',
    });
    await stack.owner.call(InferencesList, { min_seq: edit.seq });
    assert.match(
      await memex('inferences', '1'),
      /^\[!\] STALE {2}Inference #1: Beta is an open question\n[\s\S]*~ #\S+ {2}changed since mint\n$/,
    );
    await applied(await memex('inferences', '1', '--remint', '--confidence', '0.5', '--json'));
    assert.match(await memex('inferences', '--status', 'active'), /^\[Inference #1, conf 0\.50/);
    await assert.rejects(memex('inferences', 'x'), /an inference id is a number, got "x"/);
  });

  test('digest ends with the signal summary and the active and stale inferences', async () => {
    const digest = await memex('digest');
    assert.match(digest, /^Memex digest, \d{4}-\d\d-\d\d \d\d:\d\d\n\nNew since [^\n]+:\n {2}\S+ note asks Beta\n/);
    assert.match(
      digest,
      /\nSignals: dangling_link 1 dismissed, 1 minted\n\nActive inferences \(hypotheses, not facts\): 1\n {2}\[Inference #1, conf 0\.50[^\n]+\n\nStale inferences \(re-mint or drop\): 0\n$/,
    );
  });

  test('schedule prints a cron line and a launchd plist running this checkout’s digest', async () => {
    const out = await memex('schedule', '--at', '07:30');
    const cron = out.split('\n').find((line) => /^\d/.test(line))!;
    assert.equal(
      cron,
      `30 7 * * * MEMEX_HOME=${stack.config.home} MEMEX_URL=${stack.url} ${process.execPath} ${CLI} digest >> ${stack.config.home}/digest.log 2>&1`,
    );
    assert.match(
      out,
      /<key>ProgramArguments<\/key>\n {2}<array>\n {4}<string>[^<]+node<\/string>\n {4}<string>[^<]+\/cli\/bin\/memex\.js<\/string>\n {4}<string>digest<\/string>/,
    );
    assert.match(
      out,
      /<key>Hour<\/key>\n {4}<integer>7<\/integer>\n {4}<key>Minute<\/key>\n {4}<integer>30<\/integer>/,
    );
    await assert.rejects(memex('schedule', '--at', '25:00'), /--at must be HH:MM/);
  });
});

import { Type, type Static } from '@sinclair/typebox';
import { compile } from '@memex/contracts';
import { baseType, RejectedItem, type AgentWorkItem, type IngestHandler } from '../handler.js';
import { sha256Hex } from '../text.js';

/** A session digest (seed §3.1): what an agent's session asked, decided, found and produced. */
export const SESSION_DIGEST_TYPE = 'application/vnd.memex.session-digest+json';
/** A web page an agent's browser or fetch read: its URL, title, text and when it was read. */
export const WEB_PAGE_TYPE = 'application/vnd.memex.web-page+json';

const Lines = Type.Array(Type.String({ maxLength: 10_000 }), { maxItems: 1000 });

const SessionDigest = Type.Object(
  {
    session: Type.String({ minLength: 1 }),
    title: Type.String(),
    labels: Type.Array(Type.String()),
    started_at: Type.Optional(Type.String()),
    ended_at: Type.Optional(Type.String()),
    asked: Lines,
    decided: Lines,
    found: Lines,
    produced: Lines,
    files: Lines,
    hosts: Lines,
    repos: Lines,
    transcript_url: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const WebPage = Type.Object(
  {
    url: Type.String({ minLength: 1 }),
    title: Type.String(),
    text: Type.String(),
    read_at: Type.String(),
    session: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const digestValidator = compile(SessionDigest);
const pageValidator = compile(WebPage);

export type SessionDigestMeta = Static<typeof SessionDigest> & { format: 'session_digest' };
export type WebPageMeta = Omit<Static<typeof WebPage>, 'text'> & { format: 'web_page' };

function instant(value: string | undefined): string | null {
  if (!value) return null;
  const time = Date.parse(value);
  return Number.isNaN(time) ? null : new Date(time).toISOString();
}

function parseJson(bytes: Buffer, what: string): unknown {
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch (error) {
    throw new RejectedItem(`not a ${what}: the JSON does not parse (${(error as Error).message})`);
  }
}

function section(heading: string, lines: string[]): string {
  return lines.length === 0 ? '' : `${heading}\n${lines.map((line) => `- ${line}`).join('\n')}\n`;
}

function parseDigest(bytes: Buffer): AgentWorkItem {
  const json = parseJson(bytes, 'session digest');
  const problems = digestValidator.problems(json, 'digest');
  if (problems.length > 0) throw new RejectedItem(`not a session digest: ${problems.join('; ')}`);
  const digest = json as Static<typeof SessionDigest>;
  const text = [
    digest.title,
    section('Asked', digest.asked),
    section('Decided', digest.decided),
    section('Found', digest.found),
    section('Produced', digest.produced),
    section('Files', digest.files),
    section('Hosts', digest.hosts),
    section('Repositories', digest.repos),
  ]
    .filter(Boolean)
    .join('\n');
  return {
    kind: 'session_digest',
    // One digest per session: a later turn's digest updates it (same source and external_id).
    identity: `session:${digest.session}`,
    title: digest.title || `session ${digest.session}`,
    text,
    occurredAt: instant(digest.ended_at) ?? instant(digest.started_at),
    warnings: [],
    meta: { format: 'session_digest', ...digest },
  };
}

function parsePage(bytes: Buffer): AgentWorkItem {
  const json = parseJson(bytes, 'web page');
  const problems = pageValidator.problems(json, 'page');
  if (problems.length > 0) throw new RejectedItem(`not a web page record: ${problems.join('; ')}`);
  const { text, ...page } = json as Static<typeof WebPage>;
  if (!URL.canParse(page.url)) throw new RejectedItem(`not a web page record: "${page.url}" is not a URL`);
  return {
    kind: 'web',
    // The same page read again with other text is another reading of it.
    identity: `web:${page.url}#${sha256Hex(Buffer.from(text, 'utf8'))}`,
    title: page.title || page.url,
    text,
    occurredAt: instant(page.read_at),
    warnings: [],
    meta: { format: 'web_page', ...page },
  };
}

/** Items from the agent host's work (seed §3.1): session digests and the web pages its sessions read. */
export const agentWorkHandler: IngestHandler = {
  name: 'agent-work',
  types: [SESSION_DIGEST_TYPE, WEB_PAGE_TYPE],
  attributesSchema: Type.Object({}, { additionalProperties: false }),
  identityRule:
    'A session digest: its session id (a later digest of the same session updates it). A web page: its URL and the hash of its text.',
  limitBytes: 5 * 1024 * 1024,
  produces: ['session_digest', 'web'],
  updatable: true,
  async parse(input) {
    return baseType(input.type) === SESSION_DIGEST_TYPE ? parseDigest(input.bytes) : parsePage(input.bytes);
  },
};

// The gateway's API as the browser calls it: typed by the method definitions in contracts/
// (types only: nothing of contracts is bundled), authenticated by the session cookie, with the
// session's CSRF token on every POST.
import type {
  AccountsList,
  AdminFailures,
  CalendarBrief,
  CalendarList,
  AdminFailuresRetry,
  EntityGet,
  EntityMerge,
  EntityNeighbors,
  EntitySplit,
  FacesClusters,
  FacesCrop,
  FacesList,
  FacesMerge,
  FacesMove,
  FacesName,
  Graph,
  InferencesList,
  ItemsContent,
  ItemsGet,
  JobsFailed,
  JobsRetry,
  JobsStatus,
  LinkAdd,
  LinkRetract,
  MailAccounts,
  MailList,
  MailCancel,
  MailCompose,
  MailDraftDelete,
  MailOutgoing,
  MailThread,
  MediaEvents,
  MediaFailed,
  MediaGet,
  MediaKeyframe,
  MediaMoments,
  MediaPlaces,
  MediaRendition,
  MediaRetry,
  MentionComplete,
  ModelsList,
  ModelsUse,
  Months,
  NotesPut,
  ParamsOf,
  ResultOf,
  ReviewDecide,
  ReviewList,
  ScopesGet,
  ScopesSet,
  Search,
  SignalsList,
  SignalsTriage,
  Similar,
  SourcesList,
  Timeline,
  TokensCreate,
  TokensList,
  TokensRevoke,
  TrailsAppend,
  TrailsComment,
  TrailsCreate,
  TrailsGet,
  TrailsList,
  TrailsMove,
} from '@memex/contracts';

/** Every method the UI calls, by its public name. */
interface Methods {
  'memex.search': typeof Search;
  'memex.similar': typeof Similar;
  'memex.mention.complete': typeof MentionComplete;
  'memex.items.get': typeof ItemsGet;
  'memex.items.content': typeof ItemsContent;
  'memex.notes.put': typeof NotesPut;
  'memex.mail.thread': typeof MailThread;
  'memex.mail.accounts': typeof MailAccounts;
  'memex.accounts.list': typeof AccountsList;
  'memex.mail.list': typeof MailList;
  'memex.mail.compose': typeof MailCompose;
  'memex.mail.cancel': typeof MailCancel;
  'memex.mail.drafts.delete': typeof MailDraftDelete;
  'memex.mail.outgoing': typeof MailOutgoing;
  'memex.calendar.list': typeof CalendarList;
  'memex.calendar.brief': typeof CalendarBrief;
  'memex.media.get': typeof MediaGet;
  'memex.media.rendition': typeof MediaRendition;
  'memex.media.keyframe': typeof MediaKeyframe;
  'memex.media.places': typeof MediaPlaces;
  'memex.media.moments': typeof MediaMoments;
  'memex.media.events': typeof MediaEvents;
  'memex.media.failed': typeof MediaFailed;
  'memex.media.retry': typeof MediaRetry;
  'memex.faces.clusters': typeof FacesClusters;
  'memex.faces.list': typeof FacesList;
  'memex.faces.crop': typeof FacesCrop;
  'memex.faces.name': typeof FacesName;
  'memex.faces.merge': typeof FacesMerge;
  'memex.faces.move': typeof FacesMove;
  'memex.entity.get': typeof EntityGet;
  'memex.entity.neighbors': typeof EntityNeighbors;
  'memex.entity.merge': typeof EntityMerge;
  'memex.entity.split': typeof EntitySplit;
  'memex.graph': typeof Graph;
  'memex.months': typeof Months;
  'memex.timeline': typeof Timeline;
  'memex.link.add': typeof LinkAdd;
  'memex.link.retract': typeof LinkRetract;
  'memex.review.list': typeof ReviewList;
  'memex.review.decide': typeof ReviewDecide;
  'memex.trails.list': typeof TrailsList;
  'memex.trails.get': typeof TrailsGet;
  'memex.trails.create': typeof TrailsCreate;
  'memex.trails.append': typeof TrailsAppend;
  'memex.trails.comment': typeof TrailsComment;
  'memex.trails.move': typeof TrailsMove;
  'memex.signals.list': typeof SignalsList;
  'memex.signals.triage': typeof SignalsTriage;
  'memex.inferences.list': typeof InferencesList;
  'memex.jobs.status': typeof JobsStatus;
  'memex.jobs.failed': typeof JobsFailed;
  'memex.jobs.retry': typeof JobsRetry;
  'memex.sources.list': typeof SourcesList;
  'memex.admin.failures': typeof AdminFailures;
  'memex.admin.failures.retry': typeof AdminFailuresRetry;
  'memex.models.list': typeof ModelsList;
  'memex.models.use': typeof ModelsUse;
  'memex.tokens.list': typeof TokensList;
  'memex.tokens.create': typeof TokensCreate;
  'memex.tokens.revoke': typeof TokensRevoke;
  'memex.scopes.get': typeof ScopesGet;
  'memex.scopes.set': typeof ScopesSet;
}
export type MethodName = keyof Methods;
export type Params<N extends MethodName> = ParamsOf<Methods[N]>;
export type Result<N extends MethodName> = ResultOf<Methods[N]>;
export type SearchHit = Result<'memex.search'>['hits'][number];
export type Card = Result<'memex.entity.get'>;
export type Fact = Card['facts'][number];

/** Who signed in: the owner sees everything; an agent token only its scope's kinds. */
export interface Session {
  kind: 'owner' | 'agent';
  labels: string[];
  kinds: string[];
  csrf: string;
}

export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let csrf = '';
/** Called when the gateway says the session has ended, so the app can show sign-in again. */
let onSignedOut: () => void = () => undefined;
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

async function request<T>(path: string, init: RequestInit): Promise<T> {
  const response = await fetch(path, {
    ...init,
    credentials: 'same-origin',
    headers: { ...(init.body ? { 'content-type': 'application/json' } : {}), 'x-memex-csrf': csrf, ...init.headers },
  });
  if (response.status === 204) return undefined as T;
  const body = (await response.json().catch(() => null)) as { error?: { code: string; message: string } } | null;
  if (!response.ok || body?.error) {
    const error = new ApiError(body?.error?.code ?? 'internal', body?.error?.message ?? `HTTP ${response.status}`);
    if (error.code === 'unauthorized' && path !== '/api/v1/session') onSignedOut();
    throw error;
  }
  return body as T;
}

/** A typed call: `call('memex.search', { q })` answers Search's result type. */
export async function call<N extends MethodName>(method: N, params: Params<N>): Promise<Result<N>> {
  const body = await request<{ result: Result<N> }>(`/api/v1/memex/${method.slice('memex.'.length)}`, {
    method: 'POST',
    body: JSON.stringify(params),
  });
  return body.result;
}

export async function signIn(token: string): Promise<Session> {
  const session = await request<Session>('/api/v1/session', { method: 'POST', body: JSON.stringify({ token }) });
  csrf = session.csrf;
  return session;
}

/** The session this browser already has (after a reload), or null. */
export async function resume(): Promise<Session | null> {
  try {
    const session = await request<Session>('/api/v1/session', { method: 'GET' });
    csrf = session.csrf;
    return session;
  } catch {
    return null;
  }
}

export async function signOut(): Promise<void> {
  await request<void>('/api/v1/session', { method: 'DELETE' });
  csrf = '';
}

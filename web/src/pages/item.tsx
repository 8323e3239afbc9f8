// An item's page: a viewer chosen by its kind (mail thread, document, note, photo, video); kinds
// without a viewer show their text and metadata.
import type { ComponentType } from 'preact';
import { useState } from 'preact/hooks';
import { call, type Result, type Session } from '../api';
import { download } from '../content';
import { MailBody } from '../mail-frame';
import { paths } from '../router';
import { formatDate, Loading, Page, Status, useAction, useLoad } from '../ui';
import { AddToTrail } from './trails';
import { PhotoViewer, RecordingViewer } from './media-viewers';
import { ReplyLink } from './mail';

type Item = Result<'memex.items.get'>;
interface ViewerProps {
  item: Item;
  session: Session;
  reload: () => Promise<void>;
}

/** Viewers by item kind: a new kind's page is one entry here. */
const VIEWERS: Record<string, ComponentType<ViewerProps>> = {
  email: MailThreadView,
  note: NoteView,
  document: DocumentView,
  paper: DocumentView,
  web: DocumentView,
  attachment: DocumentView,
  photo: ({ item }) => <PhotoViewer itemId={item.id} />,
  video: ({ item }) => <RecordingViewer itemId={item.id} />,
  audio: ({ item }) => <RecordingViewer itemId={item.id} />,
};

export function ItemPage({ id, session }: { id: string; session: Session }) {
  const loaded = useLoad(() => call('memex.items.get', { id }), [id]);
  return (
    <Loading loaded={loaded}>
      {(item) => {
        const Viewer = VIEWERS[item.kind] ?? DocumentView;
        return (
          <Page title={item.title || '(untitled)'} actions={<AddToTrail target={`item:${item.id}`} />}>
            <p class="meta">
              <span class={`kind kind-${item.kind}`}>{item.kind}</span> {formatDate(item.occurred_at, true)} · from{' '}
              {item.source.kind}
              {item.labels.length > 0 && ` · labels: ${item.labels.join(', ')}`}
              {item.parent_id && (
                <>
                  {' '}
                  · part of <a href={paths.item(item.parent_id)}>its parent</a>
                </>
              )}
            </p>
            <Viewer item={item} session={session} reload={loaded.reload} />
            <Similar id={item.id} />
          </Page>
        );
      }}
    </Loading>
  );
}

function MailThreadView({ item, session }: ViewerProps) {
  const thread = useLoad(() => call('memex.mail.thread', { id: item.id }), [item.id]);
  return (
    <Loading loaded={thread}>
      {({ messages }) => (
        <>
          {session.kind === 'owner' && <ReplyLink id={messages[messages.length - 1]?.id ?? item.id} />}
          <ol class="thread" aria-label="Conversation">
            {messages.map((m) => {
              const sender = m.from[0]?.address ?? '';
              return (
                <li key={m.id} class={m.id === item.id ? 'message current' : 'message'}>
                  <header>
                    <strong>{m.from.map((a) => a.name || a.address).join(', ')}</strong>
                    <span class="muted"> to {m.to.map((a) => a.name || a.address).join(', ')}</span>
                    <time class="muted" dateTime={m.date}>
                      {' '}
                      {formatDate(m.date, true)}
                    </time>
                    <div class="subject">{m.subject}</div>
                  </header>
                  <MailBody id={m.id} sender={sender} />
                </li>
              );
            })}
          </ol>
        </>
      )}
    </Loading>
  );
}

function DocumentView({ item }: ViewerProps) {
  const [act, state] = useAction();
  return (
    <>
      {item.size !== null && (
        <p>
          <button type="button" onClick={() => act(() => download(item.id, item.title || item.id))}>
            Download the original ({item.content_type ?? 'file'}, {Math.ceil(item.size / 1024)} KB)
          </button>
        </p>
      )}
      <Status {...state} />
      <pre class="doc-text">{item.text}</pre>
    </>
  );
}

function NoteView({ item, reload }: ViewerProps) {
  const [title, setTitle] = useState(item.title);
  const [body, setBody] = useState(item.text);
  const [act, state] = useAction();
  const save = (event: Event) => {
    event.preventDefault();
    void act(async () => {
      const { seq } = await call('memex.notes.put', { id: item.id, title, body, labels: item.labels });
      await call('memex.items.get', { id: item.id, min_seq: seq });
      await reload();
    }, 'Saved.');
  };
  return (
    <form class="note" onSubmit={save}>
      <label for="note-title">Title</label>
      <input id="note-title" value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
      <label for="note-body">Note</label>
      <textarea id="note-body" rows={14} value={body} onInput={(e) => setBody(e.currentTarget.value)} />
      <button type="submit" disabled={state.busy}>
        Save
      </button>
      <Status {...state} />
    </form>
  );
}

function Similar({ id }: { id: string }) {
  const similar = useLoad(() => call('memex.similar', { id, limit: 5 }).catch(() => ({ hits: [], space: '' })), [id]);
  if (!similar.data?.hits.length) return null;
  return (
    <aside aria-labelledby="similar-title" class="similar">
      <h2 id="similar-title">More like this</h2>
      <ul>
        {similar.data.hits.map((hit) => (
          <li key={hit.id}>
            <a href={paths.item(hit.id)}>{hit.title || '(untitled)'}</a> <span class="muted">{hit.kind}</span>
          </li>
        ))}
      </ul>
    </aside>
  );
}

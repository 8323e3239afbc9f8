// The mail client: views of an account's mail (Inbox, Needs reply, Waiting, Sent, …) newest first,
// page by page, a message opening as its conversation; Drafts and Scheduled list mail written in the
// memex (memex.mail.outgoing); Compose writes a new mail or a reply (memex.mail.compose): kept as a
// draft, or sent after the undo window, shown counting down with Undo (memex.mail.cancel).
import { useEffect, useState } from 'preact/hooks';
import { call, type Params, type Result, type Session } from '../api';
import { paths, useLocation } from '../router';
import { formatDate, Loading, Page, Status, TableHead, useAction, useLoad } from '../ui';

type Message = Result<'memex.mail.list'>['messages'][number];
type ListParams = Params<'memex.mail.list'>;

/** The views: most are memex.mail.list's; Sent is the SENT label; Drafts and Scheduled are outgoing mail. */
const VIEWS: Array<{ key: string; label: string; list?: Pick<ListParams, 'view' | 'label'>; owner?: boolean }> = [
  { key: 'inbox', label: 'Inbox', list: { view: 'inbox' } },
  { key: 'needs_reply', label: 'Needs reply', list: { view: 'needs_reply' } },
  { key: 'waiting', label: 'Waiting', list: { view: 'waiting' } },
  { key: 'sent', label: 'Sent', list: { view: 'label', label: 'SENT' } },
  { key: 'drafts', label: 'Drafts', owner: true },
  { key: 'scheduled', label: 'Scheduled', owner: true },
  { key: 'unread', label: 'Unread', list: { view: 'unread' } },
  { key: 'starred', label: 'Starred', list: { view: 'starred' } },
  { key: 'all', label: 'All mail', list: { view: 'all' } },
  { key: 'spam', label: 'Spam', list: { view: 'spam' } },
  { key: 'trash', label: 'Trash', list: { view: 'trash' } },
];

export function MailPage({ session }: { session: Session }) {
  const { query } = useLocation();
  const owner = session.kind === 'owner';
  const views = VIEWS.filter((v) => owner || !v.owner);
  const view = views.find((v) => v.key === query.get('view')) ?? views[0]!;
  const [account, setAccount] = useState('');
  const accounts = useLoad(() => call('memex.mail.accounts', {}), []);
  return (
    <Page
      title={`Mail: ${view.label}`}
      actions={
        owner && (
          <a class="button" href="/mail/compose">
            Compose
          </a>
        )
      }
    >
      <div class="row">
        <nav aria-label="Mail views" class="views">
          {views.map((v) => (
            <a key={v.key} href={`/mail?view=${v.key}`} aria-current={v === view ? 'page' : undefined} class="chip">
              {v.label}
            </a>
          ))}
        </nav>
        {view.list && (
          <label>
            Account
            <select value={account} onChange={(e) => setAccount(e.currentTarget.value)}>
              <option value="">all accounts</option>
              {(accounts.data?.accounts ?? []).map((a) => (
                <option key={a.account} value={a.account}>
                  {a.account} ({a.unread} unread)
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
      {view.list ? (
        <MessageList key={`${view.key}-${account}`} params={{ ...view.list, ...(account ? { account } : {}) }} />
      ) : (
        <OutgoingList state={view.key === 'drafts' ? 'draft' : 'scheduled'} />
      )}
    </Page>
  );
}

function MessageList({ params }: { params: Omit<ListParams, 'limit' | 'cursor'> }) {
  const [pages, setPages] = useState<Message[][]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const first = useLoad(() => call('memex.mail.list', { ...params, limit: 50 }), []);
  const next = cursor ?? first.data?.next_cursor ?? null;
  const more = async () => {
    if (!next) return;
    const answer = await call('memex.mail.list', { ...params, limit: 50, cursor: next });
    setPages((p) => [...p, answer.messages]);
    setCursor(answer.next_cursor ?? '');
  };
  return (
    <Loading loaded={first}>
      {({ messages }) => (
        <>
          <table class="mail-list">
            <TableHead columns={['From', 'Subject', 'Date']} />
            <tbody>
              {[...messages, ...pages.flat()].map((m) => (
                <tr key={m.id} class={m.read ? '' : 'unread'}>
                  <td>{m.from.map((a) => a.name || a.address).join(', ')}</td>
                  <td>
                    <a href={paths.item(m.id)}>{m.subject || '(no subject)'}</a>
                    {m.starred && <span aria-label="starred"> ★</span>}
                    <span class="muted"> {m.snippet}</span>
                  </td>
                  <td>{formatDate(m.date)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {messages.length === 0 && <p class="muted">No messages in this view.</p>}
          {next && (
            <button type="button" onClick={() => void more()}>
              More
            </button>
          )}
        </>
      )}
    </Loading>
  );
}

function OutgoingList({ state }: { state: 'draft' | 'scheduled' }) {
  const list = useLoad(() => call('memex.mail.outgoing', { state }), [state]);
  const [act, status] = useAction();
  const cancel = (id: string) =>
    act(async () => {
      await call('memex.mail.cancel', { id });
      await list.reload();
    }, 'Cancelled: it will not be sent.');
  const remove = (id: string) =>
    act(async () => {
      await call('memex.mail.drafts.delete', { id });
      await list.reload();
    }, 'Draft deleted.');
  return (
    <Loading loaded={list}>
      {({ outgoing }) => (
        <>
          {outgoing.length === 0 ? (
            <p class="muted">{state === 'draft' ? 'No drafts.' : 'Nothing waiting to be sent.'}</p>
          ) : (
            <table>
              <TableHead columns={['To', 'Subject', state === 'draft' ? 'Written' : 'Sends at', '']} />
              <tbody>
                {outgoing.map((o) => (
                  <tr key={o.id}>
                    <td>{o.to.join(', ')}</td>
                    <td>{o.subject || '(no subject)'}</td>
                    <td>{formatDate(state === 'draft' ? o.created_at : o.send_at, true)}</td>
                    <td>
                      {state === 'draft' ? (
                        <button type="button" onClick={() => void remove(o.id)}>
                          Delete
                        </button>
                      ) : (
                        <button type="button" onClick={() => void cancel(o.id)}>
                          Cancel sending
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <Status {...status} />
        </>
      )}
    </Loading>
  );
}

const UNDO_SECONDS = 10;
const addresses = (text: string) =>
  text
    .split(/[,;\s]+/)
    .map((a) => a.trim())
    .filter(Boolean);

/** A new mail, or a reply to `?reply=<item id>`: saved as a draft, or sent with an undo window. */
export function ComposePage() {
  const { query } = useLocation();
  const replyTo = query.get('reply');
  const accounts = useLoad(() => call('memex.accounts.list', {}), []);
  const original = useLoad(async () => (replyTo ? call('memex.mail.thread', { id: replyTo }) : null), [replyTo]);
  const answered = original.data?.messages.find((m) => m.id === replyTo);
  const [account, setAccount] = useState('');
  const [to, setTo] = useState('');
  const [subject, setSubject] = useState('');
  const [text, setText] = useState('');
  const [sent, setSent] = useState<{ id: string; until: number } | null>(null);
  const [now, setNow] = useState(Date.now());
  const [act, status] = useAction();
  // Only connected accounts send (imported mail's accounts are archives); a reply goes from the
  // account the message came to (its messages are filed as `imap:<address>` for an IMAP account).
  const sending = (accounts.data?.accounts ?? []).filter((a) => a.status === 'active');
  const received = sending.find((a) => [a.account, `${a.provider}:${a.account}`].includes(answered?.account ?? ''));
  const chosen = account || received?.account || sending[0]?.account || '';
  useEffect(() => {
    if (!sent) return;
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, [sent]);

  const compose = (draft: boolean) =>
    act(
      async () => {
        const answer = await call('memex.mail.compose', {
          account: chosen,
          text,
          ...(answered ? { mode: 'reply', message: answered.id } : { to: addresses(to), subject }),
          ...(draft ? { draft: true } : { undo_seconds: UNDO_SECONDS }),
        });
        if (!draft) setSent({ id: answer.id, until: Date.now() + UNDO_SECONDS * 1000 });
      },
      draft ? 'Draft saved (in Drafts, and in Gmail drafts).' : '',
    );
  const undo = () =>
    act(async () => {
      await call('memex.mail.cancel', { id: sent!.id });
      setSent(null);
    }, 'Not sent: undone.');

  const left = sent ? Math.max(0, Math.ceil((sent.until - now) / 1000)) : 0;
  return (
    <Page title={answered ? `Reply: ${answered.subject}` : 'New mail'}>
      <form
        class="note"
        onSubmit={(e) => {
          e.preventDefault();
          void compose(false);
        }}
      >
        <label for="compose-account">From account</label>
        <select id="compose-account" value={chosen} onChange={(e) => setAccount(e.currentTarget.value)}>
          {sending.map((a) => (
            <option key={a.account}>{a.account}</option>
          ))}
        </select>
        {answered ? (
          <p class="meta">
            To {answered.from.map((a) => a.name || a.address).join(', ')}, answering{' '}
            <a href={paths.item(answered.id)}>{answered.subject}</a>
          </p>
        ) : (
          <>
            <label for="compose-to">To (addresses, separated by commas)</label>
            <input id="compose-to" value={to} required onInput={(e) => setTo(e.currentTarget.value)} />
            <label for="compose-subject">Subject</label>
            <input id="compose-subject" value={subject} onInput={(e) => setSubject(e.currentTarget.value)} />
          </>
        )}
        <label for="compose-text">Message</label>
        <textarea id="compose-text" rows={12} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        <div class="row">
          <button type="submit" disabled={status.busy || !!sent || !chosen}>
            Send
          </button>
          <button type="button" disabled={status.busy || !!sent || !chosen} onClick={() => void compose(true)}>
            Save draft
          </button>
        </div>
      </form>
      {sent &&
        (left > 0 ? (
          <p class="notice" role="status">
            Sending in {left} s…{' '}
            <button type="button" onClick={() => void undo()}>
              Undo
            </button>
          </p>
        ) : (
          <p class="notice" role="status">
            Sent (or on its way). <a href="/mail?view=sent">Sent mail</a>
          </p>
        ))}
      <Status {...status} />
      {!accounts.loading && !chosen && (
        <p class="error" role="alert">
          No connected mail account to send from (`memex accounts add` connects one; imported mail cannot send).
        </p>
      )}
    </Page>
  );
}

/** Reply from a message's page (owner only: writing mail is the owner's). */
export function ReplyLink({ id }: { id: string }) {
  return (
    <a class="button" href={`/mail/compose?reply=${encodeURIComponent(id)}`}>
      Reply
    </a>
  );
}

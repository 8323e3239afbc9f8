// The mail client's reading side: a view (inbox, starred, unread, …) of an account, newest first,
// page by page; a message opens as its conversation. Composing waits for mail sending (mail-sync).
import { useState } from 'preact/hooks';
import { call, type Result } from '../api';
import { paths } from '../router';
import { formatDate, Loading, Page, useLoad, TableHead } from '../ui';

const VIEWS = ['inbox', 'unread', 'starred', 'all', 'spam', 'trash'] as const;
type View = (typeof VIEWS)[number];
type Message = Result<'memex.mail.list'>['messages'][number];

export function MailPage() {
  const [view, setView] = useState<View>('inbox');
  const [account, setAccount] = useState('');
  const [pages, setPages] = useState<Message[][]>([]);
  const accounts = useLoad(() => call('memex.mail.accounts', {}), []);
  const first = useLoad(async () => {
    const answer = await call('memex.mail.list', { view, limit: 50, ...(account ? { account } : {}) });
    setPages([]);
    return answer;
  }, [view, account]);
  const [cursor, setCursor] = useState<string | null>(null);
  const next = cursor ?? first.data?.next_cursor ?? null;
  const more = async () => {
    if (!next) return;
    const answer = await call('memex.mail.list', { view, limit: 50, cursor: next, ...(account ? { account } : {}) });
    setPages((p) => [...p, answer.messages]);
    setCursor(answer.next_cursor ?? '');
  };
  return (
    <Page title="Mail">
      <div class="row">
        <label>
          View
          <select value={view} onChange={(e) => (setView(e.currentTarget.value as View), setCursor(null))}>
            {VIEWS.map((v) => (
              <option key={v}>{v}</option>
            ))}
          </select>
        </label>
        <label>
          Account
          <select value={account} onChange={(e) => (setAccount(e.currentTarget.value), setCursor(null))}>
            <option value="">all accounts</option>
            {(accounts.data?.accounts ?? []).map((a) => (
              <option key={a.account} value={a.account}>
                {a.account} ({a.unread} unread)
              </option>
            ))}
          </select>
        </label>
      </div>
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
    </Page>
  );
}

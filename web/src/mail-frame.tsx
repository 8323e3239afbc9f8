// HTML mail, shown the way seed §6.3 asks: sanitized, in a sandboxed iframe with an opaque origin
// and no scripts, remote images blocked until the reader allows them for that sender.
import DOMPurify from 'dompurify';
import PostalMime, { type Email } from 'postal-mime';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { itemBytes } from './content';

const ALLOWED_KEY = 'memex.remote-images.senders';

function allowedSenders(): string[] {
  try {
    return JSON.parse(localStorage.getItem(ALLOWED_KEY) ?? '[]') as string[];
  } catch {
    return [];
  }
}

const isRemote = (url: string) => /^\s*(https?:)?\/\//i.test(url);

/**
 * The message's HTML cleaned by DOMPurify (scripts, handlers, forms, frames gone), `cid:` images
 * replaced by their attachments, and remote image sources dropped unless allowed. The frame's own
 * policy blocks what slips through: no scripts, images only from data: unless allowed.
 */
export function sanitizeMail(
  html: string,
  inline: Map<string, string>,
  allowRemote: boolean,
): { html: string; blocked: number } {
  let blocked = 0;
  const purify = DOMPurify();
  purify.addHook('afterSanitizeAttributes', (node) => {
    if (node.tagName === 'A') {
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer');
    }
    for (const name of ['src', 'background', 'poster', 'srcset']) {
      const value = node.getAttribute(name);
      if (value === null) continue;
      const cid = /^cid:(.+)$/i.exec(value.trim());
      if (cid) node.setAttribute(name, inline.get(cid[1]!.replace(/^<|>$/g, '')) ?? '');
      else if (isRemote(value) && !allowRemote) {
        node.removeAttribute(name);
        blocked++;
      }
    }
  });
  const clean = purify.sanitize(html, {
    FORBID_TAGS: [
      'form',
      'input',
      'button',
      'textarea',
      'select',
      'iframe',
      'frame',
      'object',
      'embed',
      'meta',
      'link',
      'base',
    ],
    FORBID_ATTR: ['action', 'formaction', 'ping'],
  });
  const images = allowRemote ? 'data: https: http:' : 'data:';
  const policy = `default-src 'none'; style-src 'unsafe-inline'; img-src ${images}; font-src data:`;
  return {
    html: `<!doctype html><html><head><meta http-equiv="Content-Security-Policy" content="${policy}"><meta charset="utf-8"><style>body{font:15px/1.5 system-ui,sans-serif;margin:12px;color:#111;word-wrap:break-word}img{max-width:100%;height:auto}</style></head><body>${clean}</body></html>`,
    blocked,
  };
}

/** One message's body, parsed from its raw bytes. */
export function MailBody({ id, sender }: { id: string; sender: string }) {
  const [email, setEmail] = useState<Email | null>(null);
  const [error, setError] = useState('');
  const [allowed, setAllowed] = useState(() => allowedSenders().includes(sender));
  useEffect(() => {
    itemBytes(id)
      .then(({ bytes }) => PostalMime.parse(bytes))
      .then(setEmail, (e: Error) => setError(e.message));
  }, [id]);
  const inline = useMemo(() => {
    const map = new Map<string, string>();
    for (const a of email?.attachments ?? []) {
      if (!a.contentId || !a.mimeType.startsWith('image/') || typeof a.content === 'string') continue;
      const bytes = new Uint8Array(a.content as ArrayBuffer);
      let binary = '';
      for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]!);
      map.set(a.contentId.replace(/^<|>$/g, ''), `data:${a.mimeType};base64,${btoa(binary)}`);
    }
    return map;
  }, [email]);
  const shown = useMemo(
    () => (email?.html ? sanitizeMail(email.html, inline, allowed) : null),
    [email, inline, allowed],
  );
  if (error) return <p class="error">Could not read this message: {error}</p>;
  if (!email) return <p class="muted">Loading message…</p>;
  const allow = () => {
    localStorage.setItem(ALLOWED_KEY, JSON.stringify([...new Set([...allowedSenders(), sender])]));
    setAllowed(true);
  };
  return (
    <div class="mail-body">
      {shown && shown.blocked > 0 && !allowed && (
        <p class="notice">
          {shown.blocked} remote image{shown.blocked === 1 ? '' : 's'} blocked (they can tell the sender you read this).{' '}
          <button type="button" class="link" onClick={allow}>
            Show images from {sender || 'this sender'}
          </button>
        </p>
      )}
      {shown ? (
        <iframe
          class="mail-frame"
          title="Message"
          sandbox="allow-popups allow-popups-to-escape-sandbox"
          srcdoc={shown.html}
        />
      ) : (
        <pre class="mail-text">{email.text ?? ''}</pre>
      )}
      {email.attachments.filter((a) => !a.contentId || !a.mimeType.startsWith('image/')).length > 0 && (
        <p class="muted">
          Attachments:{' '}
          {email.attachments
            .map((a) => a.filename ?? a.mimeType)
            .filter(Boolean)
            .join(', ')}
        </p>
      )}
    </div>
  );
}

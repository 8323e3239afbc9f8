import type { MimeNode } from './mime.js';

/**
 * OpenPGP in mail (RFC 4880, RFC 3156). A message signed inline (a CERT advisory, a Debian
 * announcement) carries its text between an armour header and a signature block: the text is
 * kept, dash-escaping undone, the armour and the signature's base64 (words to nobody, noise to
 * search) left out. A message encrypted inline or as PGP/MIME cannot be read without its
 * recipient's key: the armoured block is not text, and the item says why it has none.
 */

const SIGNED_START = /^-----BEGIN PGP SIGNED MESSAGE-----\r?\n(?:[A-Za-z]+: .*\r?\n)*\r?\n/m;
const SIGNATURE = /^-----BEGIN PGP SIGNATURE-----\r?\n[\s\S]*?^-----END PGP SIGNATURE-----[ \t]*$/m;
const ENCRYPTED = /^-----BEGIN PGP MESSAGE-----\r?\n[\s\S]*?^-----END PGP MESSAGE-----[ \t]*$/m;

export interface OpenPgpText {
  text: string;
  /** Said on the item: what could not be read. */
  warning: string | null;
}

/** A message's text with inline OpenPGP armour read: a signed text kept bare, an encrypted block left out. */
export function readInlineOpenPgp(text: string): OpenPgpText {
  let warning: string | null = null;
  let result = text;
  if (ENCRYPTED.test(result)) {
    result = result.replace(new RegExp(ENCRYPTED.source, 'gm'), '');
    warning = 'it is encrypted (OpenPGP, inline): the encrypted text cannot be read without the key';
  }
  const start = SIGNED_START.exec(result);
  if (start) {
    const body = result.slice(start.index + start[0].length);
    const signature = SIGNATURE.exec(body);
    const signed = signature ? body.slice(0, signature.index) : body;
    const after = signature ? body.slice(signature.index + signature[0].length) : '';
    // Dash-escaped lines (RFC 4880 7.1): "- " before a line that began with a dash.
    result = result.slice(0, start.index) + signed.replace(/^- /gm, '') + after;
  }
  return { text: result, warning };
}

/** Whether a message is PGP/MIME encrypted (RFC 3156): its body is for its recipients' keys only. */
export function isPgpMimeEncrypted(root: MimeNode): boolean {
  return root.contentType === 'multipart/encrypted' && /pgp-encrypted/i.test(root.params.get('protocol') ?? '');
}

export const PGP_MIME_ENCRYPTED = 'it is encrypted (OpenPGP, PGP/MIME): only its headers can be read';

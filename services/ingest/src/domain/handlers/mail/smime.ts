import forge from 'node-forge';
import { partBytes, readMessage } from './mime.js';

const PKCS7_TYPES = new Set(['application/pkcs7-mime', 'application/x-pkcs7-mime']);
/** PKCS #7 content types (RFC 5652): the message inside a signature, or encrypted for its recipients. */
const SIGNED_DATA = forge.pki.oids.signedData!;
const ENVELOPED_DATA = forge.pki.oids.envelopedData!;

/**
 * A message S/MIME signed "opaquely" (`application/pkcs7-mime; smime-type=signed-data`, Outlook's
 * smime.p7m): its text is inside the signature, where a reader of MIME parts never looks. Opened,
 * it is the same message with the signed MIME entity as its body: the headers of the envelope,
 * the Content-Type and body from inside. An encrypted one (enveloped-data) cannot be opened without
 * the recipient's key: it stays as it is, saying so. Anything else is returned unchanged.
 */
export function openSmime(bytes: Buffer): { bytes: Buffer; warning: string | null } {
  // Most mail is not S/MIME: the headers say so before the message is read as MIME a second time.
  if (!/pkcs7-mime/i.test(bytes.subarray(0, 64 * 1024).toString('latin1'))) return { bytes, warning: null };
  const raw = bytes.toString('latin1');
  const root = readMessage(raw);
  if (!PKCS7_TYPES.has(root.contentType)) return { bytes, warning: null };
  let content: Buffer | null;
  try {
    content = signedContent(partBytes(raw, root));
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return { bytes, warning: `its S/MIME body cannot be read (${why}): kept as an attachment` };
  }
  if (!content) return { bytes, warning: 'it is encrypted (S/MIME): only its headers can be read' };
  const envelope = raw
    .slice(0, root.bodyStart)
    .replace(/\r?\n\r?\n$/, '')
    .split(/\r?\n(?![ \t])/)
    .filter((field) => !/^(content-[a-z-]+|mime-version)\s*:/i.test(field));
  return { bytes: Buffer.concat([Buffer.from(`${envelope.join('\r\n')}\r\n`, 'latin1'), content]), warning: null };
}

/** The signed content of a PKCS #7 SignedData, or null for EnvelopedData; throws on anything else. */
function signedContent(der: Buffer): Buffer | null {
  const asn1 = forge.asn1.fromDer(forge.util.createBuffer(der.toString('binary')));
  const type = forge.asn1.derToOid((asn1.value as forge.asn1.Asn1[])[0]!.value as string);
  if (type === ENVELOPED_DATA) return null;
  if (type !== SIGNED_DATA) throw new Error(`a PKCS #7 ${type} structure, not signed or encrypted data`);
  const message = forge.pkcs7.messageFromAsn1(asn1) as forge.pkcs7.PkcsSignedData & {
    rawCapture?: { content?: forge.asn1.Asn1 };
  };
  const captured = message.rawCapture?.content;
  if (!captured) throw new Error('the signature holds no content (a detached signature)');
  return Buffer.from(octets(captured), 'binary');
}

/** The bytes of an OCTET STRING, also when BER splits it into pieces (as Outlook writes it). */
function octets(node: forge.asn1.Asn1): string {
  if (typeof node.value === 'string') return node.value;
  return node.value.map(octets).join('');
}

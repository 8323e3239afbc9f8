import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import forge from 'node-forge';
import type { AttachmentItem } from '../handler.js';
import { message } from '../testing/build.js';
import { parseEmail } from '../testing/parse.js';

/** A signer as a mail client has one: an RSA key and a self-signed certificate for it. */
function signer(): { key: forge.pki.rsa.PrivateKey; certificate: forge.pki.Certificate } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key = forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString());
  const certificate = forge.pki.createCertificate();
  certificate.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  certificate.serialNumber = '01';
  certificate.validity.notBefore = new Date('2020-01-01T00:00:00Z');
  certificate.validity.notAfter = new Date('2030-01-01T00:00:00Z');
  const name = [
    { name: 'commonName', value: 'Ann Lee' },
    { name: 'emailAddress', value: 'ann@corp.example' },
  ];
  certificate.setSubject(name);
  certificate.setIssuer(name);
  certificate.sign(key, forge.md.sha256.create());
  return { key, certificate };
}

const der = (p7: { toAsn1(): forge.asn1.Asn1 }) => Buffer.from(forge.asn1.toDer(p7.toAsn1()).getBytes(), 'binary');

/** A message whose whole body is an application/pkcs7-mime part, as Outlook sends "opaque" S/MIME. */
function smimeMessage(smimeType: string, body: Buffer): Buffer {
  return message(
    [
      ['From', 'Ann Lee <ann@corp.example>'],
      ['To', 'bob@example.org'],
      ['Subject', 'Signed contract'],
      ['Message-ID', '<signed.1@corp.example>'],
      ['MIME-Version', '1.0'],
      ['Content-Type', `application/pkcs7-mime; smime-type=${smimeType}; name="smime.p7m"`],
      ['Content-Transfer-Encoding', 'base64'],
      ['Content-Disposition', 'attachment; filename="smime.p7m"'],
    ],
    `${body.toString('base64').replace(/.{76}/g, '$&\r\n')}\r\n`,
  );
}

describe('mail: S/MIME', () => {
  const { key, certificate } = signer();

  it('an opaque-signed message is read from inside its signature: text and attachments, the headers of the envelope', async () => {
    const inner = [
      'Content-Type: multipart/mixed; boundary="in"',
      '',
      '--in',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Please find the signed contract attached. Zoë',
      '--in',
      'Content-Type: text/plain; name="terms.txt"',
      'Content-Disposition: attachment; filename="terms.txt"',
      '',
      'Payment within 30 days.',
      '--in--',
      '',
    ].join('\r\n');
    const p7 = forge.pkcs7.createSignedData();
    p7.content = forge.util.createBuffer(Buffer.from(inner).toString('binary'));
    p7.addCertificate(certificate);
    p7.addSigner({ key, certificate, digestAlgorithm: forge.pki.oids.sha256! });
    p7.sign();
    const item = await parseEmail(smimeMessage('signed-data', der(p7)));
    assert.equal(item.title, 'Signed contract');
    assert.equal(item.identity, 'message-id:signed.1@corp.example');
    assert.match(item.text, /Please find the signed contract attached\. Zoë/);
    const [terms] = item.children as AttachmentItem[];
    assert.equal(terms?.title, 'terms.txt');
    assert.match(terms.text, /Payment within 30 days/);
    assert.deepEqual(item.warnings, []);
  });

  it('an encrypted one keeps its headers and says it is encrypted; a broken one says it cannot be read', async () => {
    const p7 = forge.pkcs7.createEnvelopedData();
    p7.addRecipient(certificate);
    p7.content = forge.util.createBuffer('the secret terms');
    p7.encrypt();
    const encrypted = await parseEmail(smimeMessage('enveloped-data', der(p7)));
    assert.equal(encrypted.title, 'Signed contract');
    assert.ok(encrypted.warnings.includes('it is encrypted (S/MIME): only its headers can be read'));
    assert.doesNotMatch(encrypted.text, /secret/);

    const broken = await parseEmail(smimeMessage('signed-data', Buffer.from('not DER at all')));
    assert.match(broken.warnings.join('\n'), /its S\/MIME body cannot be read \(.+\): kept as an attachment/);
    assert.equal((broken.children as AttachmentItem[])[0]?.title, 'smime.p7m');
  });
});

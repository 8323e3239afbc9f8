import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import forge from 'node-forge';

/** The role the head's CA puts in a memex's certificate subject (OU), and the only one it accepts. */
export const MEMEX_ROLE = 'memex';

export interface KeyAndRequest {
  keyPem: string;
  csrPem: string;
}

/**
 * A fresh RSA key pair and a certificate signing request for it, subject CN=<name>, OU=memex.
 * node-forge does the ASN.1; the key never leaves this machine.
 */
export function makeKeyAndRequest(commonName: string): KeyAndRequest {
  const keys = forge.pki.rsa.generateKeyPair({ bits: 2048, e: 0x10001 });
  const csr = forge.pki.createCertificationRequest();
  csr.publicKey = keys.publicKey;
  csr.setSubject([
    { name: 'commonName', value: commonName },
    { name: 'organizationalUnitName', value: MEMEX_ROLE },
  ]);
  csr.sign(keys.privateKey, forge.md.sha256.create());
  return { keyPem: forge.pki.privateKeyToPem(keys.privateKey), csrPem: forge.pki.certificationRequestToPem(csr) };
}

/** SHA-256 of a certificate's DER, lower-case hex (what `openssl x509 -fingerprint -sha256` shows, without colons). */
export function certificateSha256(pem: string): string {
  return createHash('sha256').update(new X509Certificate(pem).raw).digest('hex');
}

export interface CertificateFacts {
  subject: string;
  notBefore: Date;
  notAfter: Date;
  sha256: string;
}

export function certificateFacts(pem: string): CertificateFacts {
  const cert = new X509Certificate(pem);
  return {
    subject: cert.subject.split('\n').join(','),
    notBefore: new Date(cert.validFrom),
    notAfter: new Date(cert.validTo),
    sha256: certificateSha256(pem),
  };
}

/**
 * Why a certificate the head returned must not be used, or undefined: it must be signed by the
 * head's CA, carry the memex role, be valid now and hold our own public key.
 */
export function certificateProblem(
  certPem: string,
  caPem: string,
  keyPem: string,
  now = new Date(),
): string | undefined {
  const cert = new X509Certificate(certPem);
  const ca = new X509Certificate(caPem);
  if (!ca.ca) return 'the CA certificate the head sent is not a CA';
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return 'the certificate is not signed by the head’s CA';
  if (!cert.subject.split('\n').includes(`OU=${MEMEX_ROLE}`)) {
    return `the certificate’s subject (${cert.subject.replace(/\n/g, ',')}) lacks the role OU=${MEMEX_ROLE}`;
  }
  if (now < new Date(cert.validFrom) || now > new Date(cert.validTo)) {
    return `the certificate is not valid now (valid ${cert.validFrom} to ${cert.validTo})`;
  }
  if (!cert.checkPrivateKey(createPrivateKey(keyPem))) return 'the certificate is not for the key this memex made';
  return undefined;
}

import https from 'node:https';
import { isIP } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { MemexError } from '@memex/contracts';
import { certificateProblem, certificateSha256, makeKeyAndRequest } from '../domain/pki.js';
import type { HeadCredentials } from '../domain/credentials.js';

export interface EnrollRequest {
  url: string;
  token: string;
  /** Pins the head's CA (SHA-256 of its DER); without it the CA is trusted on first use. */
  caSha256?: string;
  /** The memex's instance name, the certificate's CN. */
  memexName: string;
}

/** What the head's enrollment endpoint answers (docs/head.md). */
interface EnrollAnswer {
  certificate: string;
  ca: string;
  /** host:port of the head's link (gRPC over mutual TLS). */
  link: string;
}

/**
 * Enrollment (seed §2.1): a key pair made here, a CSR sent with the head's one-time token, and the
 * client certificate its CA signed. The head's TLS certificate cannot be checked against a CA the
 * memex does not know yet, so the answer is checked afterwards: the server certificate must be
 * issued by the CA the head sent (and that CA must match the pin, when one is given).
 */
export async function enroll(request: EnrollRequest): Promise<HeadCredentials> {
  let endpoint: URL;
  try {
    endpoint = new URL('/enroll', request.url);
  } catch {
    throw new MemexError('invalid_params', `not a URL: ${request.url}`);
  }
  if (endpoint.protocol !== 'https:')
    throw new MemexError('invalid_params', `the head’s URL must be https: ${request.url}`);
  const { keyPem, csrPem } = makeKeyAndRequest(request.memexName);
  const { status, body, serverCert } = await post(endpoint, { token: request.token, csr: csrPem });
  if (status !== 200) {
    const reason = safeMessage(body);
    throw new MemexError(
      status === 401 || status === 403 ? 'forbidden' : 'unavailable',
      `the head refused the enrollment (HTTP ${status}): ${reason}`,
    );
  }
  const answer = parseAnswer(body);
  const caSha256 = certificateSha256(answer.ca);
  if (request.caSha256 && request.caSha256 !== caSha256) {
    throw new MemexError(
      'forbidden',
      `the head’s CA is not the pinned one (pinned ${request.caSha256}, got ${caSha256})`,
    );
  }
  const ca = new X509Certificate(answer.ca);
  if (!serverCert.checkIssued(ca) || !serverCert.verify(ca.publicKey)) {
    throw new MemexError('forbidden', 'the head’s TLS certificate is not issued by the CA it sent: refusing it');
  }
  const host = endpoint.hostname.replace(/^\[|\]$/g, '');
  if (!(isIP(host) ? serverCert.checkIP(host) : serverCert.checkHost(host))) {
    throw new MemexError('forbidden', `the head’s TLS certificate is not for ${host}`);
  }
  const problem = certificateProblem(answer.certificate, answer.ca, keyPem);
  if (problem) throw new MemexError('forbidden', `the head sent an unusable certificate: ${problem}`);
  return { keyPem, certPem: answer.certificate, caPem: answer.ca, enrollUrl: request.url, linkAddress: answer.link };
}

function post(url: URL, payload: unknown): Promise<{ status: number; body: string; serverCert: X509Certificate }> {
  const data = JSON.stringify(payload);
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
        // Checked after the answer, against the CA it carries (see enroll).
        rejectUnauthorized: false,
        // A fresh TLS session: a resumed one shows no peer certificate to check.
        agent: false,
        timeout: 15_000,
      },
      (res) => {
        const serverCert = (res.socket as TLSSocket).getPeerX509Certificate();
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          if (!serverCert) return reject(new MemexError('unavailable', 'the head presented no TLS certificate'));
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), serverCert });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 15 s')));
    req.on('error', (error) =>
      reject(new MemexError('unavailable', `could not reach the head at ${url.origin}: ${error.message}`)),
    );
    req.end(data);
  });
}

function parseAnswer(body: string): EnrollAnswer {
  let answer: Partial<EnrollAnswer>;
  try {
    answer = JSON.parse(body) as Partial<EnrollAnswer>;
  } catch {
    throw new MemexError('unavailable', 'the head’s enrollment answer is not JSON');
  }
  for (const field of ['certificate', 'ca', 'link'] as const) {
    if (typeof answer[field] !== 'string' || !answer[field]) {
      throw new MemexError('unavailable', `the head’s enrollment answer lacks "${field}"`);
    }
  }
  return answer as EnrollAnswer;
}

function safeMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: unknown };
    if (typeof parsed.error === 'string') return parsed.error.slice(0, 300);
  } catch {
    // not JSON: the text itself
  }
  return body.slice(0, 300) || '(no reason given)';
}

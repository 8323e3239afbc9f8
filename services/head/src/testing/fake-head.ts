import https from 'node:https';
import { X509Certificate, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import forge from 'node-forge';
import {
  headServiceDefinition,
  type CallScope,
  type HeadFrame,
  type MemexFrame,
  type SessionDigest,
} from '../link/head-api.js';
import { MEMEX_ROLE } from '../domain/pki.js';

type AuthContext = ReturnType<grpc.ServerUnaryCall<unknown, unknown>['getAuthContext']>;

/**
 * The other side of the link, written for the tests from seed §2.1/§2.4: a head with its own CA,
 * an HTTPS enrollment endpoint that signs a memex's CSR for a one-time token, and the gRPC
 * service with mutual TLS that accepts only certificates of its CA with the role memex, relays
 * calls over the memex's stream and records what the memex asks of it.
 */
export class FakeHead {
  readonly ca: { key: forge.pki.rsa.PrivateKey; cert: forge.pki.Certificate; pem: string };
  private readonly serverKeyPem: string;
  private readonly serverCertPem: string;
  private readonly tokens = new Set<string>();
  private readonly revoked = new Set<string>();
  private enrollServer: https.Server | undefined;
  private grpcServer: grpc.Server | undefined;
  private linkPort = 0;
  private serial = 1;
  /** Validity of the certificates it issues (tests make expired ones). */
  certificateDays = 365;
  certificateStartsDaysAgo = 0;
  /** The role it writes into issued certificates (a test issues a wrong one). */
  issuedRole = MEMEX_ROLE;

  private stream: grpc.ServerDuplexStream<MemexFrame, HeadFrame> | undefined;
  private readonly pending = new Map<string, { resolve: (frame: MemexFrame & { reply: unknown }) => void }>();
  private readonly linkWaiters: (() => void)[] = [];
  /** What the memex asked: method name and request, in order. */
  readonly asked: { method: string; request: Record<string, unknown> }[] = [];
  readonly links: { subject: string; at: Date }[] = [];
  private readonly startedRuns = new Map<string, string>();
  digests: SessionDigest[] = [];
  /** Names credentials.get answers NOT_FOUND for (it makes up a secret for any other). */
  readonly withheldCredentials = new Set<string>();

  constructor() {
    this.ca = makeCa();
    const server = issue(this.ca, forge.pki.rsa.generateKeyPair(2048), {
      commonName: 'head.test',
      role: 'head',
      days: 365,
      startsDaysAgo: 0,
      serial: '01',
      altNames: [
        { type: 2, value: 'localhost' },
        { type: 7, ip: '127.0.0.1' },
      ],
    });
    this.serverKeyPem = server.keyPem;
    this.serverCertPem = server.certPem;
  }

  get enrollUrl(): string {
    return `https://127.0.0.1:${(this.enrollServer!.address() as AddressInfo).port}`;
  }

  /** A new one-time enrollment token. */
  newToken(): string {
    const token = randomBytes(16).toString('hex');
    this.tokens.add(token);
    return token;
  }

  revoke(certPem: string): void {
    this.revoked.add(new X509Certificate(certPem).serialNumber.toLowerCase());
  }

  async start(): Promise<void> {
    this.enrollServer = https.createServer({ key: this.serverKeyPem, cert: this.serverCertPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const answer = (status: number, body: unknown) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        };
        try {
          const { token, csr } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { token: string; csr: string };
          if (!this.tokens.delete(token)) return answer(401, { error: 'unknown or already used enrollment token' });
          const request = forge.pki.certificationRequestFromPem(csr);
          if (!request.verify()) return answer(400, { error: 'the CSR’s signature does not verify' });
          const cn = String(request.subject.getField('CN')?.value ?? 'memex');
          const issued = issue(
            this.ca,
            { publicKey: request.publicKey as forge.pki.rsa.PublicKey },
            {
              commonName: cn,
              role: this.issuedRole,
              days: this.certificateDays,
              startsDaysAgo: this.certificateStartsDaysAgo,
              serial: (++this.serial).toString(16).padStart(2, '0'),
            },
          );
          answer(200, { certificate: issued.certPem, ca: this.ca.pem, link: `localhost:${this.linkPort}` });
        } catch (error) {
          answer(400, { error: (error as Error).message });
        }
      });
    });
    await new Promise<void>((resolve) => this.enrollServer!.listen(0, '127.0.0.1', resolve));
    await this.startLink();
  }

  /** The gRPC side; `restart` stops it and starts it again on the same port. */
  private async startLink(): Promise<void> {
    const server = new grpc.Server();
    const Head = headServiceDefinition();
    const guard = <T>(
      call: { getAuthContext(): AuthContext },
      fail: (error: grpc.ServiceError) => T,
    ): T | undefined => {
      const problem = this.peerProblem(call.getAuthContext());
      if (!problem) return undefined;
      return fail(
        Object.assign(new Error(problem), {
          code: grpc.status.PERMISSION_DENIED,
          details: problem,
          metadata: new grpc.Metadata(),
        }),
      );
    };
    const unary =
      (method: string, answer: (request: Record<string, unknown>) => Record<string, unknown>) =>
      (call: grpc.ServerUnaryCall<Record<string, unknown>, unknown>, callback: grpc.sendUnaryData<unknown>) => {
        if (guard(call, (error) => callback(error)) !== undefined) return;
        this.asked.push({ method, request: call.request });
        try {
          callback(null, answer(call.request));
        } catch (error) {
          callback(error as grpc.ServiceError);
        }
      };
    server.addService(Head.service, {
      Link: (call: grpc.ServerDuplexStream<MemexFrame, HeadFrame>) => {
        if (guard(call, (error) => call.emit('error', error)) !== undefined) return;
        const subject = call.getAuthContext().sslPeerCertificate?.subject;
        this.links.push({ subject: `CN=${subject?.CN},OU=${subject?.OU}`, at: new Date() });
        this.stream = call;
        call.on('data', (frame: MemexFrame & { reply?: { id: string } }) => {
          if ('reply' in frame && frame.reply) this.pending.get(frame.reply.id)?.resolve(frame as never);
          if ('heartbeat' in frame && frame.heartbeat) call.write({ heartbeat: { sent_at_ms: Date.now() } });
        });
        call.on('error', () => undefined);
        call.on('end', () => call.end());
        // A first heartbeat tells the memex the link is up.
        call.write({ heartbeat: { sent_at_ms: Date.now() } });
        this.linkWaiters.splice(0).forEach((wake) => wake());
      },
      WorkflowsStart: unary('workflows.start', (request) => {
        const key = String(request.dedupe_key || randomBytes(8).toString('hex'));
        const known = this.startedRuns.get(key);
        if (known) return { run_id: known, duplicate: true };
        const runId = `run-${this.startedRuns.size + 1}`;
        this.startedRuns.set(key, runId);
        return { run_id: runId, duplicate: false };
      }),
      TemplatesRun: unary('templates.run', () => ({ session: `s-${this.asked.length}`, duplicate: false })),
      Notify: unary('notify', () => ({ duplicate: false })),
      CredentialsGet: unary('credentials.get', (request) => {
        const name = String(request.name);
        if (this.withheldCredentials.has(name)) {
          throw Object.assign(new Error(`no credential ${name}`), {
            code: grpc.status.NOT_FOUND,
            details: `no credential ${name}`,
            metadata: new grpc.Metadata(),
          });
        }
        return { secret: `short-lived-${name}-${randomBytes(6).toString('hex')}`, expires_at_ms: Date.now() + 60_000 };
      }),
      SessionsDigest: unary('sessions.digest', (request) => ({
        sessions: this.digests.filter((d) => !request.session || d.session === request.session),
      })),
    });
    const credentials = grpc.ServerCredentials.createSsl(
      Buffer.from(this.ca.pem),
      [{ private_key: Buffer.from(this.serverKeyPem), cert_chain: Buffer.from(this.serverCertPem) }],
      true,
    );
    this.linkPort = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`127.0.0.1:${this.linkPort}`, credentials, (error, port) =>
        error ? reject(error) : resolve(port),
      ),
    );
    this.grpcServer = server;
  }

  /** Why the head refuses this peer: not its CA's (TLS already checked that), revoked, or not a memex. */
  private peerProblem(auth: AuthContext): string | undefined {
    const cert = auth.sslPeerCertificate;
    if (!cert) return 'no client certificate';
    if (this.revoked.has(cert.serialNumber.toLowerCase())) return 'the certificate is revoked';
    if (cert.subject.OU !== MEMEX_ROLE) return `the certificate’s role is ${cert.subject.OU}, not ${MEMEX_ROLE}`;
    return undefined;
  }

  /** Resolves once a memex holds the link (now, or when it next connects). */
  async linked(): Promise<void> {
    if (this.stream && !this.stream.cancelled && !this.stream.destroyed) return;
    await new Promise<void>((resolve) => this.linkWaiters.push(resolve));
  }

  /** Relays a call to the memex over its stream, as the head does for the UI and workers. */
  async call(method: string, params: unknown, scope: Partial<CallScope>): Promise<unknown> {
    await this.linked();
    const id = randomBytes(8).toString('hex');
    const reply = new Promise<MemexFrame & { reply: unknown }>((resolve) => this.pending.set(id, { resolve }));
    this.stream!.write({
      call: {
        id,
        method,
        params_json: JSON.stringify(params),
        scope: { owner: scope.owner ?? false, labels: scope.labels ?? [], session: scope.session ?? 'test-session' },
      },
    });
    const frame = (await reply) as { reply: { result_json: string; error_code: string; error_message: string } };
    this.pending.delete(id);
    if (frame.reply.error_code)
      throw Object.assign(new Error(frame.reply.error_message), { code: frame.reply.error_code });
    return JSON.parse(frame.reply.result_json) as unknown;
  }

  turnEnded(session: string, labels: string[]): void {
    this.stream?.write({ turn_ended: { session, labels } });
  }

  async restart(): Promise<void> {
    await this.stopLink();
    await this.startLink();
  }

  private async stopLink(): Promise<void> {
    this.stream = undefined;
    const server = this.grpcServer;
    this.grpcServer = undefined;
    if (server) {
      server.forceShutdown();
    }
  }

  async stop(): Promise<void> {
    await this.stopLink();
    await new Promise<void>((resolve) => (this.enrollServer ? this.enrollServer.close(() => resolve()) : resolve()));
  }
}

function makeCa(): { key: forge.pki.rsa.PrivateKey; cert: forge.pki.Certificate; pem: string } {
  const keys = forge.pki.rsa.generateKeyPair(2048);
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 3650 * 86_400_000);
  const attrs = [{ name: 'commonName', value: 'fake head CA' }];
  cert.setSubject(attrs);
  cert.setIssuer(attrs);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return { key: keys.privateKey, cert, pem: forge.pki.certificateToPem(cert) };
}

function issue(
  ca: { key: forge.pki.rsa.PrivateKey; cert: forge.pki.Certificate },
  keys: { publicKey: forge.pki.rsa.PublicKey; privateKey?: forge.pki.rsa.PrivateKey },
  options: {
    commonName: string;
    role: string;
    days: number;
    startsDaysAgo: number;
    serial: string;
    altNames?: unknown[];
  },
): { certPem: string; keyPem: string } {
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = options.serial;
  cert.validity.notBefore = new Date(Date.now() - options.startsDaysAgo * 86_400_000 - 60_000);
  cert.validity.notAfter = new Date(cert.validity.notBefore.getTime() + options.days * 86_400_000);
  cert.setSubject([
    { name: 'commonName', value: options.commonName },
    { name: 'organizationalUnitName', value: options.role },
  ]);
  cert.setIssuer(ca.cert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'extKeyUsage', serverAuth: true, clientAuth: true },
    ...(options.altNames ? [{ name: 'subjectAltName', altNames: options.altNames }] : []),
  ]);
  cert.sign(ca.key, forge.md.sha256.create());
  return {
    certPem: forge.pki.certificateToPem(cert),
    keyPem: keys.privateKey ? forge.pki.privateKeyToPem(keys.privateKey) : '',
  };
}

import os from 'node:os';
import { Injectable } from '@nestjs/common';
import { EventPublisher } from '@memex/bus';
import {
  HeadEnroll,
  HeadEnrolled,
  HeadStatus,
  HeadUnenroll,
  HeadUnenrolled,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { RpcMethod, type CallContext } from '@memex/runtime';
import { certificateFacts, certificateSha256 } from '../domain/pki.js';
import { enroll } from '../link/enrollment.js';
import { HeadLinkService } from '../link/head-link.service.js';

@Injectable()
export class HeadCommands {
  constructor(
    private readonly publisher: EventPublisher,
    private readonly link: HeadLinkService,
  ) {}

  @RpcMethod(HeadEnroll)
  async enroll(params: ParamsOf<typeof HeadEnroll>, call: CallContext): Promise<ResultOf<typeof HeadEnroll>> {
    const credentials = await enroll({
      url: params.url,
      token: params.token,
      ...(params.ca_sha256 ? { caSha256: params.ca_sha256 } : {}),
      memexName: `memex-${os.hostname()}`,
    });
    this.link.replace(credentials);
    const facts = certificateFacts(credentials.certPem);
    const caSha256 = certificateSha256(credentials.caPem);
    const { seq } = await this.publisher.publish(HeadEnrolled, {
      subject: 'head:link',
      actor: call.caller,
      data: {
        url: params.url,
        subject: facts.subject,
        certificate_sha256: facts.sha256,
        ca_sha256: caSha256,
        not_after: facts.notAfter.toISOString(),
      },
    });
    return {
      subject: facts.subject,
      not_after: facts.notAfter.toISOString(),
      ca_sha256: caSha256,
      link_url: credentials.linkAddress,
      seq,
    };
  }

  @RpcMethod(HeadUnenroll)
  async unenroll(_params: ParamsOf<typeof HeadUnenroll>, call: CallContext): Promise<ResultOf<typeof HeadUnenroll>> {
    const url = this.link.status().url;
    this.link.replace(undefined);
    if (!url) return { seq: 0 };
    const { seq } = await this.publisher.publish(HeadUnenrolled, {
      subject: 'head:link',
      actor: call.caller,
      data: { url },
    });
    return { seq };
  }

  @RpcMethod(HeadStatus)
  status(): ResultOf<typeof HeadStatus> {
    return this.link.status();
  }
}

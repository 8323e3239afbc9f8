import { Injectable } from '@nestjs/common';
import * as grpc from '@grpc/grpc-js';
import { HeadCredentialsGet, MemexError, type ParamsOf, type ResultOf } from '@memex/contracts';
import { RpcMethod } from '@memex/runtime';
import { HeadLinkService } from '../link/head-link.service.js';

/**
 * The head's `credentials.get` for the other services (through `@memex/credentials`): asked
 * each time over the link and handed on, never written anywhere — not to the log, the database
 * or a file; the asking service keeps it in memory until it expires.
 */
@Injectable()
export class CredentialsQueries {
  constructor(private readonly link: HeadLinkService) {}

  @RpcMethod(HeadCredentialsGet)
  async get(params: ParamsOf<typeof HeadCredentialsGet>): Promise<ResultOf<typeof HeadCredentialsGet>> {
    const status = this.link.status();
    if (!status.enrolled) throw new MemexError('not_found', `no head is enrolled to ask for "${params.name}"`);
    const api = this.link.api;
    if (!api) {
      throw new MemexError(
        'unavailable',
        `the head link is ${status.state}${status.last_error ? `: ${status.last_error}` : ''}`,
      );
    }
    try {
      const answer = await api.credentialsGet({ name: params.name });
      return { secret: answer.secret, expires_at_ms: answer.expires_at_ms };
    } catch (error) {
      const grpcError = error as grpc.ServiceError;
      if (grpcError.code === grpc.status.NOT_FOUND) {
        throw new MemexError('not_found', `the head has no credential "${params.name}"`);
      }
      if (grpcError.code === grpc.status.PERMISSION_DENIED) {
        throw new MemexError('forbidden', `the head refused "${params.name}": ${grpcError.details}`);
      }
      throw new MemexError(
        'unavailable',
        `the head did not answer credentials.get: ${grpcError.details ?? grpcError.message}`,
      );
    }
  }
}

import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { MemexError } from '@memex/contracts';
import { failedJobCounts, type Bus } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import { BUS, CONFIG, projectorLags, type ServiceHealth } from '@memex/runtime';
import { metricsRegistry, prometheus } from '@memex/telemetry';
import { AuthService } from '../auth/auth.service.js';
import { Dispatcher } from '../dispatcher.js';
import { toErrorBody } from './errors.js';

@Controller()
export class HealthController {
  constructor(
    @Inject(Dispatcher) private readonly dispatcher: Dispatcher,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(CONFIG) private readonly config: MemexConfig,
    @Inject(AuthService) private readonly auth: AuthService,
  ) {
    registerLogMetrics(bus, () => this.dispatcher.health(this.config.services));
  }

  /**
   * 200 once every expected service answers ready, with the log's last sequence; 503 before
   * (`starting`) and while a service that was up does not answer (`down`).
   * Ready with events a projector failed to apply is `degraded`, not `ok`: data is missing from a
   * read model until `memex failures retry` applies them (still 200: the services do answer).
   */
  @Get('healthz')
  async healthz(@Res() reply: FastifyReply): Promise<void> {
    const [services, lastSeq] = await Promise.all([
      this.dispatcher.health(this.config.services),
      this.bus.lastSeq().catch(() => null),
    ]);
    const ready = lastSeq !== null && services.every((service) => service.ready);
    const failures = services.reduce((sum, service) => sum + (service.projector?.failures ?? 0), 0);
    // A service's problems (a revoked Google grant) need the owner too.
    const problems = services.some((service) => (service.problems?.length ?? 0) > 0);
    // Not ready because a service that was up stopped answering is `down`; none up yet, `starting`.
    const down = services.some((service) => !service.ready && this.dispatcher.wasUp(service.service));
    const status = !ready ? (down ? 'down' : 'starting') : failures > 0 || problems ? 'degraded' : 'ok';
    await reply.code(ready ? 200 : 503).send({ status, log: { last_seq: lastSeq }, failures, services });
  }

  /**
   * Prometheus metrics, for the owner's token only: counts of events and of failures say how much
   * there is and what is happening, which an agent or a stranger on the network need not know.
   * (A scraper reads the token from a file: `authorization: { credentials_file: …/owner-token }`.)
   */
  @Get('metrics')
  async metrics(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    try {
      const { scope } = await this.auth.authenticate(request.headers.authorization);
      if (scope.kind !== 'owner') throw new MemexError('forbidden', '/metrics answers the owner token only');
    } catch (error) {
      const { status, body } = toErrorBody(error);
      return reply.code(status).send(body);
    }
    await reply.header('content-type', metricsRegistry.contentType).send(await metricsRegistry.metrics());
  }
}

/** What the gauges read: the latest gateway's (the registry is per process; tests start several gateways). */
let source: { bus: Bus; health: () => Promise<ServiceHealth[]> } | undefined;

/** Log and projector gauges read from JetStream at scrape time, so they cover every process. */
function registerLogMetrics(bus: Bus, health: () => Promise<ServiceHealth[]>): void {
  const registered = source !== undefined;
  source = { bus, health };
  if (registered) return;
  new prometheus.Gauge({
    name: 'memex_log_last_seq',
    help: 'Sequence of the last event in MEMEX_EVENTS; rate() of it is events/s',
    registers: [metricsRegistry],
    async collect() {
      this.set(await source!.bus.lastSeq());
    },
  });
  new prometheus.Gauge({
    name: 'memex_projector_lag',
    help: 'Events not yet applied by each projector (JetStream consumer pending + unacked)',
    labelNames: ['projector'],
    registers: [metricsRegistry],
    async collect() {
      this.reset();
      for (const [projector, lag] of await projectorLags(source!.bus)) this.set({ projector }, lag);
    },
  });
  new prometheus.Gauge({
    name: 'memex_projector_failures',
    help: 'Events each projector failed to apply and skipped (memex failures lists them; memex failures retry applies them again)',
    labelNames: ['projector'],
    registers: [metricsRegistry],
    async collect() {
      this.reset();
      for (const service of await source!.health()) {
        if (service.projector) this.set({ projector: service.projector.name }, service.projector.failures);
      }
    },
  });
  new prometheus.Gauge({
    name: 'memex_service_problems',
    help: 'What each service says needs the owner (its health problems: a revoked grant, photos the media pipeline gave up on, a stalled outbox); /healthz says what they are',
    labelNames: ['service'],
    registers: [metricsRegistry],
    async collect() {
      this.reset();
      for (const service of await source!.health())
        this.set({ service: service.service }, service.problems?.length ?? 0);
    },
  });
  new prometheus.Gauge({
    name: 'memex_pipeline_failed_jobs',
    help: 'Pipeline jobs set aside after failing every retry, per task (memex jobs failed lists them; memex jobs retry runs them again)',
    labelNames: ['task'],
    registers: [metricsRegistry],
    async collect() {
      this.reset();
      for (const [task, count] of await failedJobCounts(source!.bus)) this.set({ task }, count);
    },
  });
}

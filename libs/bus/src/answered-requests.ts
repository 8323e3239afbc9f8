import { RequestOne } from '@nats-io/nats-core/internal';

/**
 * nats.js 3.4 ends every request it has had an answer to through `RequestOne.cancel()`, which
 * rejects the already settled promise with a new `RequestError("cancelled")`: an Error, its stack
 * captured, built and thrown away for every JetStream publish, API call and RPC: a JetStream
 * publish of 1.5 KB cost the client 28 µs of CPU with it, 20–23 without. (Under the CPU profiler,
 * where stack captures cost more, it was 6.5 s of the services' CPU in a 10,000-message import;
 * the import bench does not tell the difference from its run-to-run noise.) Once a request is answered, cancelling it only stops its timer and forgets its inbox
 * token, which is all the rejection-less rest of `cancel` does; a cancel before an answer (a
 * timeout, a closed connection) is the library's own.
 */
const answered = new WeakSet<RequestOne>();
const resolver = RequestOne.prototype.resolver;
const cancel = RequestOne.prototype.cancel;
RequestOne.prototype.resolver = function (this: RequestOne, ...args: Parameters<typeof resolver>): void {
  answered.add(this);
  resolver.apply(this, args);
};
RequestOne.prototype.cancel = function (this: RequestOne, err?: Error): void {
  if (err || !answered.has(this)) return cancel.call(this, err);
  this.timer.cancel();
  this.mux.cancel(this);
};

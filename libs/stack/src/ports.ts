import net from 'node:net';

/** A TCP port that is free right now on `host` (the kernel picks one from the ephemeral range). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error(`could not read the port of a listener on ${host}`));
      });
    });
  });
}

/** True when nothing listens on host:port (binding succeeds). */
export function isPortFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE' || err.code === 'EACCES') resolve(false);
      else reject(err);
    });
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** Throws a message naming the setting to change when host:port is taken by another program. */
export async function assertPortFree(host: string, port: number, what: string, setting: string): Promise<void> {
  if (!(await isPortFree(host, port))) {
    throw new Error(
      `cannot start ${what}: ${host}:${port} is already in use by another program. ` +
        `Stop that program or choose another port (${setting}).`,
    );
  }
}

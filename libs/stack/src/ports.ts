import fs from 'node:fs';
import net from 'node:net';

/** Where Linux takes the local ports of outgoing connections from (its default where unreadable). */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (low && high) return [low, high];
  } catch {
    // not Linux: IANA's dynamic range, which BSDs, macOS and Windows use
  }
  return [49152, 65535];
}

/** The kernel's pick: free now, but from the range outgoing connections draw on. */
function kernelPort(host: string): Promise<number> {
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

/**
 * A TCP port that is free right now on `host`, for a server a test or bench starts a moment
 * later. Drawn at random from below the ephemeral range: a port the kernel hands out may, before
 * the server binds it, become the local end of some process's outgoing connection (CI once saw a
 * gateway fail to bind for minutes that way); ports below the range are never used so.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const [ephemeralLow] = ephemeralRange();
  const low = 10_000;
  const high = Math.min(ephemeralLow, 65_536);
  for (let attempt = 0; high > low && attempt < 100; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (await isPortFree(host, port)) return port;
  }
  return kernelPort(host);
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

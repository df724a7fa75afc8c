// A slow broker for the load-client tests: a loopback TCP proxy in front of a
// real broker that forwards requests at once and holds every chunk of the
// broker's answers for `delayMs` (in order: timers of one duration fire in
// the order they were set). Requests pile up in flight and backlogs build in
// the producer, whatever the machine's speed.

import net from 'node:net';

export class SlowProxy {
  readonly port: number;
  private readonly server: net.Server;
  private readonly sockets: Set<net.Socket>;

  private constructor(server: net.Server, sockets: Set<net.Socket>) {
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('SlowProxy: no port');
    this.port = address.port;
    this.server = server;
    this.sockets = sockets;
  }

  static start(upstreamPort: number, delayMs: number): Promise<SlowProxy> {
    const sockets = new Set<net.Socket>();
    const server = net.createServer((client) => {
      const upstream = net.connect({ host: '127.0.0.1', port: upstreamPort });
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('error', () => undefined);
        s.on('close', () => {
          sockets.delete(s);
          client.destroy();
          upstream.destroy();
        });
      }
      client.on('data', (chunk: Buffer) => upstream.write(chunk));
      upstream.on('data', (chunk: Buffer) => {
        setTimeout(() => {
          if (!client.destroyed) client.write(chunk);
        }, delayMs);
      });
    });
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve(new SlowProxy(server, sockets)));
    });
  }

  stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

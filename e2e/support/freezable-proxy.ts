/**
 * A TCP proxy in front of the API server whose open connections can be frozen: no data, no FIN, no
 * RST — what a dead NAT entry or a half-open connection looks like to a client. New connections after
 * a freeze work normally. TLS passes through untouched (the certificate names 127.0.0.1).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface FreezableProxy {
  port: number;
  /** Silences every connection open now, in both directions, for good. */
  freeze(): void;
  /** Connections accepted so far. */
  connections(): number;
  /** Writes a copy of `kubeconfig` whose server is this proxy; returns its path. */
  kubeconfigVia(kubeconfig: string, out: string): Promise<string>;
  close(): Promise<void>;
}

export async function startFreezableProxy(upstream: { host: string; port: number }): Promise<FreezableProxy> {
  const open = new Set<[Socket, Socket]>();
  const frozen: Socket[] = [];
  let accepted = 0;
  const server = createServer((client) => {
    accepted++;
    const up = connect(upstream.port, upstream.host);
    const pair: [Socket, Socket] = [client, up];
    open.add(pair);
    client.pipe(up);
    up.pipe(client);
    const drop = () => {
      open.delete(pair);
      client.destroy();
      up.destroy();
    };
    client.on('error', drop);
    up.on('error', drop);
    client.on('close', drop);
    up.on('close', drop);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    freeze() {
      for (const pair of open) {
        const [client, up] = pair;
        client.unpipe(up);
        up.unpipe(client);
        client.pause();
        up.pause();
        // keep both ends open: the client must notice the silence by itself
        client.removeAllListeners('close');
        up.removeAllListeners('close');
        frozen.push(client, up);
        open.delete(pair);
      }
    },
    connections: () => accepted,
    async kubeconfigVia(kubeconfig, out) {
      const text = await readFile(kubeconfig, 'utf8');
      await writeFile(out, text.replace(/server: https:\/\/127\.0\.0\.1:\d+/, `server: https://127.0.0.1:${port}`));
      return out;
    },
    async close() {
      for (const s of frozen) s.destroy();
      for (const [a, b] of open) {
        a.destroy();
        b.destroy();
      }
      server.close();
    },
  };
}

/**
 * A loopback HTTP CONNECT proxy for `whatsapp.proxyUrl` tests: it records every tunnel it is asked
 * for (the target, and whether credentials came along) and splices it to the target, which must be
 * on loopback too (or a name `aliases` maps to loopback, resolved here as a real proxy resolves
 * names its clients never look up). Every CONNECT's headers are kept, so a test can prove nothing
 * but the tunnel request reached the proxy. Bounded (a cap on tunnels), and it stops itself after
 * `lifetimeMs`.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { connect } from "node:net";

export interface Tunnel {
  target: string;
  authorized: boolean;
}

const MAX_TUNNELS = 100;

export class LoopbackProxy {
  readonly tunnels: Tunnel[] = [];
  /** The headers of every CONNECT the proxy was sent, refused ones included. */
  readonly connectHeaders: IncomingHttpHeaders[] = [];
  private aliases: Readonly<Record<string, string>> = {};
  private readonly sockets = new Set<Socket>();
  private readonly server = createServer((_req, res) => res.writeHead(405).end());
  private lifetime: NodeJS.Timeout | null = null;
  url = "";

  static async start(
    o: { lifetimeMs?: number; aliases?: Readonly<Record<string, string>> } = {},
  ): Promise<LoopbackProxy> {
    const proxy = new LoopbackProxy();
    proxy.aliases = o.aliases ?? {};
    proxy.server.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) =>
      proxy.tunnel(req, client, head),
    );
    await new Promise<void>((resolve) => proxy.server.listen(0, "127.0.0.1", resolve));
    proxy.url = `http://user:proxy-secret@127.0.0.1:${(proxy.server.address() as AddressInfo).port}`;
    proxy.lifetime = setTimeout(() => void proxy.stop(), o.lifetimeMs ?? 30_000);
    proxy.lifetime.unref();
    return proxy;
  }

  private tunnel(req: IncomingMessage, client: Socket, head: Buffer): void {
    const target = req.url ?? "";
    const [name, port] = target.split(":");
    const host = name === undefined ? undefined : (this.aliases[name] ?? name);
    if (this.connectHeaders.length < MAX_TUNNELS) this.connectHeaders.push(req.headers);
    this.sockets.add(client);
    client.on("close", () => this.sockets.delete(client));
    client.on("error", () => client.destroy());
    if (this.tunnels.length >= MAX_TUNNELS || host !== "127.0.0.1" || !port) {
      client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
      return;
    }
    this.tunnels.push({ target, authorized: req.headers["proxy-authorization"] !== undefined });
    const upstream = connect(Number(port), host, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    this.sockets.add(upstream);
    upstream.on("close", () => {
      this.sockets.delete(upstream);
      client.destroy();
    });
    upstream.on("error", () => client.destroy());
  }

  async stop(): Promise<void> {
    if (this.lifetime) clearTimeout(this.lifetime);
    this.lifetime = null;
    for (const s of this.sockets) s.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

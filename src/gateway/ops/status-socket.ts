/**
 * The local socket `parley status` asks: a unix socket in the data home
 * ($PARLEY_HOME/run/status.sock). Only the owner reaches it: its folder is 0700 before the socket
 * exists (so the moment between listen and chmod exposes nothing) and the socket itself is 0600.
 * One request line, one JSON answer line, then the connection closes. The answer is the snapshot:
 * counts, states and channel names, never what a person wrote.
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, rmSync } from "node:fs";
import type { Server, Socket } from "node:net";
import { createConnection, createServer } from "node:net";
import { join } from "node:path";
import type { Logger } from "../../messaging/base/logger.js";
import type { OpsSnapshot } from "./snapshot.js";

export const STATUS_DIR = "run";
export const STATUS_SOCKET = "status.sock";
/** The request `parley status` sends. */
export const STATUS_REQUEST = "status";
/** A request longer than this is not one of ours. */
const MAX_REQUEST_BYTES = 256;
/** unix(7): sun_path holds 108 bytes with its terminator on Linux, 104 on macOS. */
const MAX_SOCKET_PATH = 103;

export function statusSocketPath(home: string): string {
  return join(home, STATUS_DIR, STATUS_SOCKET);
}

export class StatusSocket {
  private server: Server | undefined;

  constructor(
    private readonly home: string,
    private readonly snapshot: () => Promise<OpsSnapshot>,
    private readonly logger: Logger,
  ) {}

  get path(): string {
    return statusSocketPath(this.home);
  }

  /** Listen; a path the OS cannot bind (too long) is reported and status is then unavailable. */
  async start(): Promise<void> {
    const path = this.path;
    if (Buffer.byteLength(path) > MAX_SOCKET_PATH) {
      this.logger.warn(
        `ops: the status socket path is too long for this OS (${path}); \`parley status\` cannot reach this gateway. Use a shorter PARLEY_HOME.`,
      );
      return;
    }
    const dir = join(this.home, STATUS_DIR);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    // The home lock is held: a socket file here is a dead gateway's leftover.
    if (existsSync(path) && lstatSync(path).isSocket()) rmSync(path, { force: true });
    const server = createServer((socket) => this.serve(socket));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(path, () => {
        server.off("error", reject);
        resolve();
      });
    });
    chmodSync(path, 0o600);
    server.on("error", (error) => this.logger.warn("ops: status socket error", { error: String(error) }));
    this.server = server;
  }

  private serve(socket: Socket): void {
    let request = "";
    socket.setEncoding("utf8");
    socket.on("error", (error) => this.logger.debug("ops: status client error", { error: String(error) }));
    socket.on("data", (chunk: string) => {
      request += chunk;
      if (Buffer.byteLength(request) > MAX_REQUEST_BYTES) {
        socket.end(`${JSON.stringify({ error: "request too long" })}\n`);
        return;
      }
      const newline = request.indexOf("\n");
      if (newline < 0) return;
      const line = request.slice(0, newline).trim();
      socket.pause();
      if (line !== STATUS_REQUEST) {
        socket.end(`${JSON.stringify({ error: `unknown request; send "${STATUS_REQUEST}"` })}\n`);
        return;
      }
      this.snapshot().then(
        (snap) => socket.end(`${JSON.stringify(snap)}\n`),
        (error: unknown) => {
          this.logger.error("ops: taking a status snapshot failed", { error: String(error) });
          socket.end(`${JSON.stringify({ error: "the gateway could not take a snapshot" })}\n`);
        },
      );
    });
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(this.path, { force: true });
  }
}

export type StatusReply =
  | { kind: "snapshot"; snapshot: OpsSnapshot }
  | { kind: "no_socket" }
  | { kind: "refused"; error: string }
  | { kind: "bad_reply"; error: string };

/** Ask the gateway of a data home; never throws (what went wrong is the reply). */
export function askStatus(home: string, timeoutMs = 5000): Promise<StatusReply> {
  const path = statusSocketPath(home);
  if (!existsSync(path)) return Promise.resolve({ kind: "no_socket" });
  return new Promise((resolve) => {
    let reply = "";
    let done = false;
    const finish = (r: StatusReply) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(r);
    };
    const socket = createConnection(path);
    const timer = setTimeout(
      () => finish({ kind: "refused", error: `no answer within ${timeoutMs} ms` }),
      timeoutMs,
    );
    socket.setEncoding("utf8");
    socket.on("connect", () => socket.write(`${STATUS_REQUEST}\n`));
    socket.on("data", (chunk: string) => {
      reply += chunk;
    });
    socket.on("error", (error: NodeJS.ErrnoException) =>
      finish(
        error.code === "ENOENT" || error.code === "ECONNREFUSED"
          ? { kind: "no_socket" }
          : { kind: "refused", error: error.message },
      ),
    );
    socket.on("end", () => {
      try {
        const value = JSON.parse(reply) as OpsSnapshot | { error: string };
        if ("error" in value) finish({ kind: "bad_reply", error: String(value.error) });
        else finish({ kind: "snapshot", snapshot: value });
      } catch (error) {
        finish({ kind: "bad_reply", error: `not JSON: ${(error as Error).message}` });
      }
    });
  });
}

/**
 * The framing of imsg's `rpc` mode, and nothing of iMessage: newline-delimited JSON-RPC 2.0 over a
 * child's stdio. Requests are correlated by id; notifications (no id) go to one handler; a line
 * that is not JSON, not an object, or answers no pending request is skipped and counted (`drops`).
 * A line may be far longer than the 64 KiB many line readers assume (one long message body must not
 * kill the reader); past `maxLineBytes` it is dropped whole, up to its newline, counted, and
 * reading goes on.
 */
import type { Clock } from "../messaging/base/clock.js";
import type { InboundDrops } from "../messaging/channel/inbound-drops.js";

/** 16 MiB: far above any message imsg reports, small enough that a runaway line cannot exhaust memory. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;
/** A request imsg never answers fails after this long (a wedged bridge must not stall a send forever). */
export const REQUEST_TIMEOUT_MS = 30_000;

/** imsg answered with a JSON-RPC error. */
export class ImsgRpcError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
  ) {
    super(`imsg ${method} failed (${code}): ${message}`);
    this.name = "ImsgRpcError";
  }
}

/** The link closed (the child exited, or the channel stopped) before an answer came. */
export class ImsgClosedError extends Error {
  constructor(reason: string) {
    super(`imsg is not running: ${reason}`);
    this.name = "ImsgClosedError";
  }
}

export interface RpcLinkOptions {
  /** Write one line (the newline is added here) to the child's stdin. */
  write(line: string): void;
  onNotification(method: string, params: unknown): void;
  /** Where a skipped line is counted; absent only for doctor's probe, which subscribes to nothing. */
  drops?: InboundDrops | undefined;
  clock: Clock;
  maxLineBytes?: number;
  requestTimeoutMs?: number;
}

interface Pending {
  method: string;
  resolve(value: unknown): void;
  reject(error: Error): void;
  timer: unknown;
}

export class RpcLink {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private chunks: Buffer[] = [];
  private bytes = 0;
  /** Inside a line already over the limit: everything up to its newline is dropped. */
  private discarding = false;
  private closed: string | null = null;

  constructor(private readonly o: RpcLinkOptions) {}

  request(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    if (this.closed !== null) return Promise.reject(new ImsgClosedError(this.closed));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = this.o.clock.setTimeout(() => {
        if (!this.pending.delete(id)) return;
        reject(new ImsgRpcError(method, -32000, "no answer in time"));
      }, this.o.requestTimeoutMs ?? REQUEST_TIMEOUT_MS);
      this.pending.set(id, { method, resolve, reject, timer });
      try {
        this.o.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
      } catch (error) {
        this.settle(id)?.reject(new ImsgClosedError(String(error)));
      }
    });
  }

  /** Bytes from the child's stdout, in any chunking. */
  feed(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) {
        this.keep(chunk.subarray(start));
        return;
      }
      this.keep(chunk.subarray(start, nl));
      if (!this.discarding) this.line(Buffer.concat(this.chunks, this.bytes).toString("utf8"));
      else
        this.o.drops?.record({
          reason: "oversized",
          fields: { limit: this.o.maxLineBytes ?? MAX_LINE_BYTES },
        });
      this.chunks = [];
      this.bytes = 0;
      this.discarding = false;
      start = nl + 1;
    }
  }

  /** Every pending request fails with `reason`; later requests fail at once. */
  close(reason: string): void {
    this.closed = reason;
    for (const id of [...this.pending.keys()]) this.settle(id)?.reject(new ImsgClosedError(reason));
    this.chunks = [];
    this.bytes = 0;
  }

  private keep(part: Buffer): void {
    if (this.discarding || part.length === 0) return;
    if (this.bytes + part.length > (this.o.maxLineBytes ?? MAX_LINE_BYTES)) {
      this.discarding = true;
      this.chunks = [];
      this.bytes = 0;
      return;
    }
    this.chunks.push(Buffer.from(part));
    this.bytes += part.length;
  }

  private line(text: string): void {
    if (text.trim() === "") return;
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      this.o.drops?.record({ reason: "unparseable", fields: { bytes: text.length } });
      return;
    }
    if (typeof frame !== "object" || frame === null || Array.isArray(frame)) {
      this.o.drops?.record({
        reason: "unknown_shape",
        shape: Array.isArray(frame) ? "array line" : typeof frame,
      });
      return;
    }
    const f = frame as Record<string, unknown>;
    if (typeof f.method === "string" && (f.id === undefined || f.id === null)) {
      this.o.onNotification(f.method, f.params);
      return;
    }
    const pending = typeof f.id === "number" ? this.settle(f.id) : undefined;
    if (!pending) {
      // Its request timed out (already failed) or it names none: nobody is waiting for it.
      this.o.drops?.record({
        reason: "orphan_answer",
        fields: { id: typeof f.id === "number" ? f.id : String(f.id) },
      });
      return;
    }
    const error = f.error as { code?: unknown; message?: unknown; data?: unknown } | undefined;
    if (error && typeof error === "object") {
      const message = typeof error.message === "string" ? error.message : "error";
      // imsg's `message` is the fixed JSON-RPC text; the reason is in `data` (RPCServer+Support.swift).
      const data = typeof error.data === "string" && error.data !== "" ? `: ${error.data.slice(0, 300)}` : "";
      pending.reject(
        new ImsgRpcError(
          pending.method,
          typeof error.code === "number" ? error.code : -32000,
          `${message}${data}`,
        ),
      );
    } else pending.resolve(f.result);
  }

  private settle(id: number): Pending | undefined {
    const pending = this.pending.get(id);
    if (!pending) return undefined;
    this.pending.delete(id);
    this.o.clock.clearTimeout(pending.timer);
    return pending;
  }
}

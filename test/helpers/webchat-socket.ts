/**
 * A web chat user over the real WebSocket, as the page is one: it opens a conversation with the
 * per-start token, sends messages and keeps the bubbles the server upserts (the latest form of
 * each, in order). Shared by the chat-level acceptance tests and the load bench.
 */
import { WebSocket } from "ws";
import type { Bubble, ServerFrame } from "../../src/webchat/protocol.js";

export class WebChatSocket {
  private readonly order: string[] = [];
  private readonly byId = new Map<string, Bubble>();
  private readonly listeners = new Set<(bubble: Bubble) => void>();

  private constructor(private readonly ws: WebSocket) {
    ws.on("message", (data) => {
      const frame = JSON.parse(String(data)) as ServerFrame;
      if (frame.type === "snapshot") for (const b of frame.bubbles) this.upsert(b);
      else if (frame.type === "upsert") this.upsert(frame.bubble);
    });
  }

  /** Opens `conversation` on the web chat at `url` (the announced http://…/?token=… URL). */
  static open(url: string, conversation: string): Promise<WebChatSocket> {
    const page = new URL(url);
    const ws = new WebSocket(
      `ws://${page.host}/ws?token=${encodeURIComponent(page.searchParams.get("token") ?? "")}&c=${encodeURIComponent(conversation)}`,
    );
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(new WebChatSocket(ws)));
      ws.once("error", reject);
    });
  }

  say(text: string): void {
    this.ws.send(JSON.stringify({ type: "message", text }));
  }

  /** Every bubble but the user's own, in order, each as "text\nstatus" (what a user reads). */
  visible(): string[] {
    return this.bubbles()
      .filter((b) => b.role !== "user")
      .map((b) => [b.text, b.status ?? ""].filter(Boolean).join("\n"));
  }

  bubbles(): Bubble[] {
    return this.order.map((id) => this.byId.get(id) as Bubble);
  }

  /** Called with every bubble as it arrives or changes. */
  onBubble(listener: (bubble: Bubble) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves with the first bubble (now or later) that satisfies `test`; rejects after `timeoutMs`. */
  waitFor(test: (bubble: Bubble) => boolean, timeoutMs = 10_000, what = "a bubble"): Promise<Bubble> {
    const found = this.bubbles().find(test);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(new Error(`timed out waiting for ${what}; shown:\n${this.visible().join("\n---\n")}`));
      }, timeoutMs);
      const off = this.onBubble((b) => {
        if (!test(b)) return;
        clearTimeout(timer);
        off();
        resolve(b);
      });
    });
  }

  /** The next finished answer (a final assistant or system bubble with a turn-status line) after `since` bubbles. */
  finished(since: number, timeoutMs = 30_000): Promise<Bubble> {
    return this.waitFor(
      (b) =>
        this.order.indexOf(b.id) >= since &&
        b.final &&
        b.role !== "user" &&
        /(Finished in|Failed after)/.test(b.status ?? ""),
      timeoutMs,
      "a finished answer",
    );
  }

  get count(): number {
    return this.order.length;
  }

  close(): void {
    this.ws.close();
  }

  private upsert(bubble: Bubble): void {
    if (!this.byId.has(bubble.id)) this.order.push(bubble.id);
    this.byId.set(bubble.id, bubble);
    for (const listener of [...this.listeners]) listener(bubble);
  }
}

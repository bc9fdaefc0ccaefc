/**
 * A page of the web chat as far as the protocol goes (what src/webchat/page.ts does): it connects
 * to a start's URL, keeps the bubbles it is shown, and keeps each message it sends until the server
 * says "accepted", sending it again after a reconnect.
 */
import WebSocket from "ws";
import type { Bubble, ServerFrame } from "../../src/webchat/protocol.js";

export class PageClient {
  readonly outbox = new Map<string, string>();
  bubbles = new Map<string, Bubble>();
  readonly accepted: string[] = [];
  /** Error frames (a refused frame, a failed dispatch), in arrival order. */
  readonly errors: string[] = [];
  private ws: WebSocket | undefined;

  constructor(readonly conversation: string) {}

  /** Connect to a start's URL; resolves once the snapshot arrived (and the outbox was sent again). */
  connect(url: string): Promise<void> {
    const u = new URL(url);
    const ws = new WebSocket(
      `ws://${u.host}/ws?token=${encodeURIComponent(u.searchParams.get("token") ?? "")}&c=${this.conversation}`,
    );
    this.ws = ws;
    return new Promise((resolve, reject) => {
      ws.once("error", reject);
      ws.on("message", (data) => {
        const frame = JSON.parse(String(data)) as ServerFrame;
        if (frame.type === "snapshot") {
          this.bubbles = new Map(frame.bubbles.map((b) => [b.id, b]));
          for (const [id, text] of this.outbox) this.send(id, text);
          resolve();
        } else if (frame.type === "upsert") this.bubbles.set(frame.bubble.id, frame.bubble);
        else if (frame.type === "error") this.errors.push(frame.message);
        else if (frame.type === "accepted") {
          this.accepted.push(frame.id);
          this.outbox.delete(frame.id);
        }
      });
    });
  }

  /** Send a message, its id its text (kept until accepted; sent again after a reconnect). */
  say(text: string, id: string = text): void {
    this.outbox.set(id, text);
    this.send(id, text);
  }

  /** The bubbles of one role, in the order shown. */
  shown(role: Bubble["role"]): Bubble[] {
    return [...this.bubbles.values()].filter((b) => b.role === role);
  }

  private send(id: string, text: string): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: "message", id, text }));
  }

  close(): void {
    this.ws?.terminate();
  }
}

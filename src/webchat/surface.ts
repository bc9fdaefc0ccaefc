/**
 * The web chat's surface for the hub: its address is the page's conversation id and everything is
 * a bubble. Files arrive decoded in the message frame: they wait with the queued message as
 * in-memory byte sources (bounded per session) and only the turn that answers it writes, hands over
 * and deletes them.
 */
import type { ChannelContext } from "../messaging/channel/contract.js";
import type { TurnParts } from "../messaging/channel/delivery.js";
import type { ChannelSurface, Conversation, TurnStart } from "../messaging/channel/surface.js";
import type { Attachment } from "../messaging/files/ingest.js";
import { bytesAttachment } from "../messaging/files/ingest.js";
import type { ReceiptSurface } from "../messaging/queue/receipt.js";
import { buildDmSessionKey } from "../messaging/session/keys.js";
import type { JsonValue } from "../messaging/store/port.js";
import type { Upload } from "./protocol.js";
import { WebChatRenderer } from "./renderer.js";
import type { WebChatTransport } from "./transport.js";

/**
 * Bytes of files one session may hold in its mid-turn queue (they wait in memory until the turn
 * that answers them). A message whose files would pass it is refused, visibly.
 */
export const DEFAULT_MAX_HELD_UPLOAD_BYTES = 100 * 1024 * 1024;

/** What a queued web chat message carries: its files as byte sources, and their held share. */
export interface WebChatExtra {
  files: Attachment[];
  /** The files as they came (what the journal keeps, so a restart can still hand them over). */
  uploads: readonly Upload[];
  held: { key: string; bytes: number };
}

export interface WebChatSurfaceOptions {
  transport: WebChatTransport;
  agentName: string;
  throttleMs?: number;
  maxHeldUploadBytes?: number;
}

function extraOf(uploads: readonly Upload[]): Omit<WebChatExtra, "held"> {
  return {
    // The browser's type is kept as a claim only: the shared ingest classifies by the bytes.
    files: uploads.map((u) => bytesAttachment(u.name, u.data, u.mime || undefined)),
    uploads,
  };
}

export class WebChatSurface implements ChannelSurface<string, WebChatExtra> {
  /** Per session, the bytes of files submitted and not yet taken by a turn. */
  private readonly held = new Map<string, number>();
  readonly capabilities;

  constructor(
    private readonly o: WebChatSurfaceOptions,
    private readonly ctx: Pick<ChannelContext, "clock">,
  ) {
    this.capabilities = o.transport.capabilities;
  }

  conversation(conversationId: string): Conversation {
    return { route: conversationId, direct: true, link: { channelType: "webchat", conversationId } };
  }

  sessionKey(conversationId: string, generation: number): string {
    return buildDmSessionKey("webchat", this.o.agentName, conversationId, { gen: generation });
  }

  async reply(conversationId: string, text: string, parts?: TurnParts): Promise<boolean> {
    this.o.transport.post(
      conversationId,
      { role: "system", text, final: true },
      parts ? { id: parts.nextKey(), turn: parts.turnId } : {},
    );
    return true;
  }

  async retitle(conversationId: string, title: string): Promise<void> {
    this.o.transport.retitle(conversationId, title);
  }

  receipts(conversationId: string): ReceiptSurface {
    const t = this.o.transport;
    return {
      post: async (text) => t.post(conversationId, { role: "receipt", text, final: false }),
      edit: async (id, text) => {
        t.edit(conversationId, id, { text, final: !text.startsWith("⏳") });
      },
    };
  }

  newRenderer(conversationId: string, turn: TurnStart<WebChatExtra>): WebChatRenderer {
    return new WebChatRenderer(this.o.transport, conversationId, {
      parts: turn.parts,
      timers: this.ctx.clock,
      now: () => this.ctx.clock.now(),
      ...(this.o.throttleMs !== undefined ? { throttleMs: this.o.throttleMs } : {}),
    });
  }

  attachments(files: { extras: readonly (WebChatExtra | undefined)[] }): Attachment[] {
    // Taken by the turn: they no longer count against the session's held bound.
    for (const extra of files.extras) if (extra) this.release(extra.held);
    return files.extras.flatMap((extra) => extra?.files ?? []);
  }

  /** Count a message's files against the session's held bound; null when they would pass it. */
  hold(key: string, uploads: readonly Upload[]): WebChatExtra | null {
    const bytes = uploads.reduce((n, u) => n + u.data.length, 0);
    const waiting = this.held.get(key) ?? 0;
    if (waiting + bytes > (this.o.maxHeldUploadBytes ?? DEFAULT_MAX_HELD_UPLOAD_BYTES)) return null;
    this.held.set(key, waiting + bytes);
    return { ...extraOf(uploads), held: { key, bytes } };
  }

  /**
   * The files go into the journal with the message: they came inline and exist nowhere else, so
   * without them a message resumed after a restart would arrive without its files.
   */
  journalExtra(extra: WebChatExtra): JsonValue {
    return extra.uploads.map((u) => ({ name: u.name, mime: u.mime, data: u.data.toString("base64") }));
  }

  /** Back from the journal (a resumed message: its files were never counted in this process). */
  reviveExtra(data: JsonValue): WebChatExtra | undefined {
    if (!Array.isArray(data)) return undefined;
    const uploads: Upload[] = [];
    for (const item of data) {
      const u = item as { name?: unknown; mime?: unknown; data?: unknown } | null;
      if (typeof u?.name !== "string" || typeof u.mime !== "string" || typeof u.data !== "string")
        return undefined;
      uploads.push({ name: u.name, mime: u.mime, data: Buffer.from(u.data, "base64") });
    }
    return { ...extraOf(uploads), held: { key: "", bytes: 0 } };
  }

  release(held: { key: string; bytes: number }): void {
    const left = (this.held.get(held.key) ?? 0) - held.bytes;
    if (left > 0) this.held.set(held.key, left);
    else this.held.delete(held.key);
  }

  /** /stop dropped the queue, and with it the files held for it. */
  dropHeld(key: string): void {
    this.held.delete(key);
  }
}

/**
 * Webex's surface for the hub: an address is a room and who spoke in it. A direct room is keyed by
 * its peer; a space is its own conversation (`space:{roomId}`), shared by everyone in it, so it is
 * not `direct` (the hub refuses /yolo and listings there). Everything posts through the REST client,
 * redacted and byte-bounded.
 */
import type { ChannelContext } from "../messaging/channel/contract.js";
import type { TurnParts } from "../messaging/channel/delivery.js";
import type { ChannelSurface, Conversation, PickerSurface, TurnStart } from "../messaging/channel/surface.js";
import type { InboundAttachment } from "../messaging/channel/transport.js";
import type { Attachment } from "../messaging/files/ingest.js";
import type { ReceiptSurface } from "../messaging/queue/receipt.js";
import { buildDmSessionKey } from "../messaging/session/keys.js";
import { pickerCard } from "./cards.js";
import type { WebexClient } from "./client.js";
import { MAX_EDITS } from "./edit-budget.js";
import type { FileGate } from "./files.js";
import { lastByteGuard, splitForWebex, WEBEX_CHUNK_BYTES, webexSafe } from "./format.js";
import { WebexRenderer } from "./renderer.js";

export interface WebexAddress {
  roomId: string;
  /** True for a space (a group room); a direct room is one to one. */
  space: boolean;
  /** The sender's lowercased e-mail: who the allow-list knows. */
  email: string;
}

export type WebexRestAll = Pick<WebexClient, "createMessage" | "editMessage" | "uploadMessage">;

/** Options cards the dispatcher holds: each offer is good for one press (then it is gone). */
export class OfferBook {
  private readonly offers = new Map<string, readonly string[]>();
  constructor(private readonly max = 200) {}

  hold(messageId: string, labels: readonly string[]): void {
    // Bounded: the oldest offer is forgotten first (its press then gets the neutral refusal).
    if (this.offers.size >= this.max) this.offers.delete(this.offers.keys().next().value ?? "");
    this.offers.set(messageId, labels);
  }

  take(messageId: string, index: number): string | null {
    const labels = this.offers.get(messageId);
    const label = labels?.[index];
    if (label === undefined) return null;
    this.offers.delete(messageId);
    return label;
  }
}

export interface WebexSurfaceOptions {
  rest: WebexRestAll;
  agentName: string;
  offers: OfferBook;
  files: FileGate;
  statusStartMs?: number;
}

export class WebexSurface implements ChannelSurface<WebexAddress> {
  constructor(
    private readonly o: WebexSurfaceOptions,
    private readonly ctx: Pick<ChannelContext, "clock" | "logger" | "sessions" | "audit">,
  ) {}

  conversation(a: WebexAddress): Conversation {
    return {
      route: a.space ? `space:${a.roomId}` : `dm:${a.email}`,
      direct: !a.space,
      link: {
        channelType: "webex",
        conversationId: a.roomId,
        ...(a.space ? { threadId: `space:${a.roomId}` } : {}),
      },
    };
  }

  sessionKey(a: WebexAddress, generation: number): string {
    return a.space
      ? buildDmSessionKey("webex", this.o.agentName, a.roomId, { gen: generation, chatType: "group" })
      : buildDmSessionKey("webex", this.o.agentName, a.email, { gen: generation });
  }

  async reply(a: WebexAddress, text: string, parts?: TurnParts): Promise<boolean> {
    for (const chunk of splitForWebex(webexSafe(text))) {
      for (const body of lastByteGuard(chunk)) {
        const create = async () => {
          const res = await this.o.rest.createMessage({ roomId: a.roomId, markdown: body });
          return res.ok ? res.data.id : null;
        };
        const id = parts
          ? await parts.post(body, {
              create,
              replace: async (earlier) =>
                (await this.o.rest.editMessage(earlier, { roomId: a.roomId, markdown: body })).ok,
            })
          : await create();
        if (!id) {
          this.ctx.logger.warn("webex reply failed");
          return false;
        }
      }
    }
    return true;
  }

  /** The receipt is its own message with its own edit budget: past it, edits stop (the drain still answers). */
  receipts(a: WebexAddress): ReceiptSurface {
    const rest = this.o.rest;
    const edits = new Map<string, number>();
    return {
      post: async (text) => {
        const res = await rest.createMessage({
          roomId: a.roomId,
          markdown: lastByteGuard(webexSafe(text))[0] ?? "",
        });
        return res.ok ? res.data.id : "";
      },
      edit: async (id, text) => {
        const n = edits.get(id) ?? 0;
        if (!id || n >= MAX_EDITS) return;
        edits.set(id, n + 1);
        await rest.editMessage(id, { roomId: a.roomId, markdown: lastByteGuard(webexSafe(text))[0] ?? "" });
      },
    };
  }

  newRenderer(a: WebexAddress, turn: TurnStart<undefined>): WebexRenderer {
    return new WebexRenderer({
      rest: this.o.rest,
      roomId: a.roomId,
      logger: this.ctx.logger,
      clock: this.ctx.clock,
      parts: turn.parts,
      holdOffers: (id, labels) => this.o.offers.hold(id, labels),
      // A space is read by everyone in it: no files from the agent's folder go there.
      ...(a.space
        ? {}
        : { uploads: turn.files, upload: (room, file, md) => this.o.rest.uploadMessage(room, file, md) }),
      audit: this.ctx.audit,
      ...(this.o.statusStartMs !== undefined ? { statusStartMs: this.o.statusStartMs } : {}),
      contextUsage: async () => (await this.ctx.sessions.existingProvider(turn.sessionKey))?.contextUsagePct,
    });
  }

  attachments(files: { refs: readonly InboundAttachment[] }): Attachment[] {
    return files.refs.map((ref) => this.o.files.source(ref));
  }

  /** Model lists as a card (one submit per model); settled by a new message, since a card cannot be edited. */
  pickers(a: WebexAddress): PickerSurface {
    const rest = this.o.rest;
    return {
      maxChars: Math.floor(WEBEX_CHUNK_BYTES / 4),
      post: async (text, labels) => {
        const markdown = lastByteGuard(webexSafe(text))[0] ?? "";
        const res = await rest.createMessage({
          roomId: a.roomId,
          markdown,
          attachments: [pickerCard(labels)],
        });
        return res.ok ? res.data.id : null;
      },
      settle: async (_handle, text) => {
        await rest.createMessage({ roomId: a.roomId, markdown: lastByteGuard(webexSafe(text))[0] ?? "" });
      },
    };
  }
}

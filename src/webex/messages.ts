/**
 * A turn's messages on Webex: each one created through the turn's parts (a resumed turn edits what
 * its first run posted), every edit spent from the edit budget, a card posted beside its text once
 * (a card cannot be edited: it never changes, and a message that is only a card takes no edit), and
 * every refusal recorded, the organization's policy refusing some words never offered them again.
 * Every body is held under the byte cap here, the last guard before the wire.
 */
import type { Logger } from "../messaging/base/logger.js";
import type { TurnParts } from "../messaging/channel/delivery.js";
import type { AuditSink } from "../messaging/security/audit.js";
import type { CardAttachment, WebexWidgets } from "./cards.js";
import { optionsCard } from "./cards.js";
import { EditBudget } from "./edit-budget.js";
import { lastByteGuard, webexSafe } from "./format.js";
import { TurnRefusals, WebexRefusal } from "./refusals.js";
import type { WebexRest } from "./transport.js";

export interface WebexMessagesOptions {
  rest: WebexRest;
  roomId: string;
  logger: Logger;
  parts: TurnParts;
  audit?: AuditSink | undefined;
  /** Offers of an options card, held by the dispatcher for a single press. */
  holdOffers?: ((messageId: string, labels: readonly string[]) => void) | undefined;
  /** Something the reader should have seen did not land (a card): the turn's delivery failed. */
  lost: () => void;
}

export class WebexMessages {
  readonly budget = new EditBudget();
  readonly refusals: TurnRefusals;
  /** Messages that are only a card: nothing on them can be edited. */
  private readonly cardOnly = new Set<string>();
  /** Messages whose card is already beside them. */
  private readonly carded = new Set<string>();

  constructor(private readonly o: WebexMessagesOptions) {
    this.refusals = new TurnRefusals({
      roomId: o.roomId,
      logger: o.logger,
      ...(o.audit ? { audit: o.audit } : {}),
    });
  }

  /** A new text message; its id, or null when Webex did not take it. */
  async create(markdown: string): Promise<string | null> {
    const body = lastByteGuard(markdown)[0] ?? "";
    // Words the organization's policy refused are not offered again: they would be refused again.
    if (this.refusals.blocked(body)) return null;
    const roomId = this.o.roomId;
    return this.o.parts.post(body, {
      create: async () => {
        const res = await this.o.rest.createMessage({ roomId, markdown: body });
        if (res.ok) return res.data.id;
        this.refusals.note(res, "send", body);
        return null;
      },
      replace: async (earlier) => {
        const res = await this.o.rest.editMessage(earlier, { roomId, markdown: body });
        if (!res.ok) this.refusals.note(res, "edit", body);
        return res.ok;
      },
    });
  }

  /** Edit a message with one of its edits (a status frame also spends one of the turn's frames). */
  async edit(id: string, markdown: string, frame: boolean): Promise<void> {
    if (this.cardOnly.has(id)) throw new WebexRefusal("a card cannot be edited", false);
    if (!this.budget.take(id, frame)) throw new WebexRefusal("no edit left on this message", !frame);
    const body = lastByteGuard(markdown)[0] ?? "";
    const res = await this.o.rest.editMessage(id, { roomId: this.o.roomId, markdown: body });
    if (res.ok) return;
    const policy = this.refusals.note(res, "edit", frame ? undefined : body);
    // A refused frame is lost (the seal rewrites the message); the next would likely be refused too.
    if (frame) this.budget.spendFrames();
    throw new WebexRefusal(`Webex refused the edit (${res.status})`, !frame && !policy, policy);
  }

  /** A card beside message `beside` (once per message; null: its own message); its id, or null. */
  async card(fallback: string, card: CardAttachment, beside: string | null): Promise<string | null> {
    if (beside !== null && this.carded.has(beside)) return null;
    if (beside !== null) this.carded.add(beside);
    const markdown = lastByteGuard(webexSafe(fallback))[0] ?? "";
    const id = await this.o.parts.post(JSON.stringify([markdown, card]), {
      create: async () => {
        const res = await this.o.rest.createMessage({ roomId: this.o.roomId, markdown, attachments: [card] });
        if (res.ok) return res.data.id;
        this.refusals.note(res, "card");
        return null;
      },
      // A card cannot be edited: an earlier run's card stays, a new one is posted.
      replace: async () => false,
    });
    if (id === null) this.o.lost();
    if (id !== null && beside === null) this.cardOnly.add(id);
    return id;
  }

  /** The card message `id` carries (null: the card alone), once, after its text; the card's id. */
  async beside(id: string | null, widgets: WebexWidgets | undefined): Promise<string | null> {
    if (widgets?.kind === "approval")
      return this.card("Approve or deny the request above.", widgets.card, id);
    if (widgets?.kind !== "options") return null;
    const { choices } = widgets;
    const fallback = `Choices: ${choices.map((c, i) => `${i + 1}. ${c}`).join(" · ")}`;
    const card = await this.card(fallback, optionsCard(choices), id);
    if (card !== null) this.o.holdOffers?.(card, choices);
    return card;
  }

  /** Tell the reader, once a turn, that the policy refused part of the answer or a prompt. */
  async tell(about: "answer" | "prompt"): Promise<void> {
    const notice = this.refusals.notice(about);
    if (notice) await this.create(webexSafe(notice));
  }
}

/**
 * Adaptive Cards and the one grammar of what their buttons send back. Every button is an
 * Action.Submit (not Action.Execute): Teams delivers a submit as an ordinary message activity
 * carrying the button's data in `value`, which the fast-ack endpoint can take like any message,
 * while Action.Execute is an invoke that wants a synchronous answer. A submit is client input, so
 * its data is a LOOKUP key only, validated strictly and totally here:
 *   { parley: "approval", r: <request id>, n: <nonce>, v: "approve" | "approve_auto" | "deny" }
 *   { parley: "option" | "model", i: <index> }           resolved against the card it was pressed on
 *   { parley: "session", h: <handle>, i: <index> }        resolved against the offered list
 * A label, a model id or a session key never travels in a payload: a forged press can only miss.
 * Every string shown on a card passes the display floor (redactForDisplay) first.
 */
import { z } from "zod";
import { GRANT_SCOPE_NOTE } from "../messaging/approval/grant.js";
import { redactForDisplay } from "../messaging/security/display-safety.js";
import { oneLine } from "../messaging/text/clip.js";
import { ADAPTIVE_CARD } from "./wire.js";

export type AdaptiveCardAttachment = { contentType: typeof ADAPTIVE_CARD; content: Record<string, unknown> };

export type CardVerdict = "approve" | "approve_auto" | "deny";

const approvalPress = z.strictObject({
  parley: z.literal("approval"),
  r: z.string().min(1).max(200),
  n: z.string().min(1).max(100),
  v: z.enum(["approve", "approve_auto", "deny"]),
});
const indexPress = z.strictObject({
  parley: z.enum(["option", "model"]),
  i: z.number().int().min(0).max(99),
});
const sessionPress = z.strictObject({
  parley: z.literal("session"),
  h: z.string().regex(/^[A-Za-z0-9_-]{8,64}$/),
  i: z.number().int().min(0).max(99),
});
const press = z.discriminatedUnion("parley", [approvalPress, indexPress, sessionPress]);

export type CardPress = z.infer<typeof press>;

/**
 * The press a submit's `value` names, or null. Teams merges a card's input values into the same
 * object; a parley card has no inputs, so any other key makes the press unreadable (strict).
 */
export function parseSubmit(value: unknown): CardPress | null {
  const parsed = press.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/** Display-safe card text (a TextBlock renders markdown but no HTML). */
export function cardText(text: string): string {
  return redactForDisplay(text).text;
}

/** A button title: one line, display-safe, within what Teams shows. */
export function buttonTitle(label: string): string {
  return oneLine(cardText(label), 60) || "…";
}

function card(
  body: Record<string, unknown>[],
  actions: Record<string, unknown>[] = [],
): AdaptiveCardAttachment {
  return {
    contentType: ADAPTIVE_CARD,
    content: {
      type: "AdaptiveCard",
      $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
      version: "1.4",
      body,
      ...(actions.length ? { actions } : {}),
    },
  };
}

function block(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: "TextBlock", text: cardText(text), wrap: true, ...extra };
}

function submit(title: string, data: CardPress, style?: "positive" | "destructive"): Record<string, unknown> {
  return { type: "Action.Submit", title: buttonTitle(title), data, ...(style ? { style } : {}) };
}

export interface ApprovalCardOptions {
  requestId: string;
  nonce: string;
  toolTitle: string;
  toolPurpose: string;
  /** The typed-reply line naming the buttons shown. */
  hint: string;
  /** The owner sees the third button (arming auto-approve is theirs alone). */
  owner: boolean;
}

export const APPROVE_AUTO_LABEL = "Approve + auto-approve";

/** The verdicts an approval card's buttons offer, in order (what its typed-reply hint may name). */
export function approvalButtons(owner: boolean): CardVerdict[] {
  return owner ? ["approve", "approve_auto", "deny"] : ["approve", "deny"];
}

function approvalHead(toolTitle: string, toolPurpose: string): Record<string, unknown>[] {
  return [
    block(`🔐 **Permission needed:** ${oneLine(toolTitle || "a tool", 200)}`, { weight: "Bolder" }),
    ...(toolPurpose ? [block(oneLine(toolPurpose, 400), { isSubtle: true })] : []),
  ];
}

/** Approve / (owner) Approve + auto-approve / Deny, the nonce in each button. */
export function approvalCard(o: ApprovalCardOptions): AdaptiveCardAttachment {
  const data = (v: CardVerdict): CardPress => ({ parley: "approval", r: o.requestId, n: o.nonce, v });
  const buttons = approvalButtons(o.owner).map((v) =>
    v === "approve"
      ? submit("Approve", data(v), "positive")
      : v === "deny"
        ? submit("Deny", data(v), "destructive")
        : submit(APPROVE_AUTO_LABEL, data(v)),
  );
  return card(
    [
      ...approvalHead(o.toolTitle, o.toolPurpose),
      // The middle button's reach is every conversation on every channel: said before it is pressed.
      ...(o.owner
        ? [block(`${APPROVE_AUTO_LABEL}: ${GRANT_SCOPE_NOTE}`, { isSubtle: true, size: "Small" })]
        : []),
      block(o.hint, { isSubtle: true, size: "Small" }),
    ],
    buttons,
  );
}

/** The prompt once decided (answered, expired, never delivered): its outcome, no buttons. */
export function resolvedApprovalCard(
  toolTitle: string,
  toolPurpose: string,
  outcome: string,
): AdaptiveCardAttachment {
  return card([...approvalHead(toolTitle, toolPurpose), block(`**${oneLine(outcome, 300)}**`)]);
}

/** A list of choices as buttons, each pressing back only its index. */
export function choicesCard(
  text: string,
  labels: readonly string[],
  kind: "option" | "model",
): AdaptiveCardAttachment {
  return card(
    text.trim() ? [block(text)] : [],
    labels.map((label, i) => submit(label || `${i + 1}`, { parley: kind, i })),
  );
}

/** Session choices: the handle is the offer's nonce, so the list is found without a lookup table. */
export function sessionsCard(
  text: string,
  handle: string,
  labels: readonly string[],
): AdaptiveCardAttachment {
  return card(
    [block(text)],
    labels.map((label, i) => submit(label || `${i + 1}`, { parley: "session", h: handle, i })),
  );
}

/** A list once used: what was chosen (or why it is gone), no buttons. */
export function settledCard(text: string): AdaptiveCardAttachment {
  return card([block(text)]);
}

/**
 * The [OPTIONS:] cards this process posted: which labels a card showed, so a press (an index) is
 * resolved against what that turn actually offered, never against the payload. Single use: the
 * card is settled on its first pick. Bounded; a card forgotten (or from before a restart) answers
 * "no longer available".
 */
export class ChoiceBook {
  private readonly cards = new Map<string, { conversationId: string; labels: readonly string[] }>();

  constructor(private readonly max = 500) {}

  register(cardId: string, conversationId: string, labels: readonly string[]): void {
    this.cards.set(cardId, { conversationId, labels });
    while (this.cards.size > this.max) this.cards.delete(this.cards.keys().next().value as string);
  }

  /** The label pressed, once; null for an unknown card, another conversation's, or a bad index. */
  take(cardId: string, conversationId: string, index: number): string | null {
    const card = this.cards.get(cardId);
    const label = card && card.conversationId === conversationId ? card.labels[index] : undefined;
    if (label === undefined) return null;
    this.cards.delete(cardId);
    return label;
  }
}

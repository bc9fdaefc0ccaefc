/**
 * Adaptive Cards parley posts on Webex: Approve/Deny under a permission prompt and one submit per
 * [OPTIONS:] choice. Every card's data is namespaced (`parley.*`) so a card from another bot in the
 * same space cannot be read as ours, and choices travel by index (a label is model text, never an
 * identifier). Text on a card is redacted like any message.
 */
import { webexSafe } from "./format.js";

export const CARD_CONTENT_TYPE = "application/vnd.microsoft.card.adaptive";

export const KIND = "parley.kind";
export const REQUEST = "parley.request";
export const NONCE = "parley.nonce";
export const CHOICE = "parley.choice";

export interface CardAttachment {
  contentType: typeof CARD_CONTENT_TYPE;
  content: {
    type: "AdaptiveCard";
    version: "1.2";
    body: { type: "TextBlock"; text: string; wrap: true }[];
    actions: { type: "Action.Submit"; title: string; data: Record<string, string | number> }[];
  };
}

function card(text: string, actions: CardAttachment["content"]["actions"]): CardAttachment {
  return {
    contentType: CARD_CONTENT_TYPE,
    content: {
      type: "AdaptiveCard",
      version: "1.2",
      body: [{ type: "TextBlock", text: webexSafe(text), wrap: true }],
      actions: actions.map((a) => ({ ...a, title: webexSafe(a.title) })),
    },
  };
}

/** The card beside a message: its choices, a prompt's Approve/Deny, or none. */
export type WebexWidgets =
  | { kind: "none" }
  | { kind: "options"; choices: readonly string[] }
  | { kind: "approval"; requestId: string; card: CardAttachment };

/** The verdicts an approval card offers, by index: what a press's `parley.choice` names. */
export const APPROVAL_CHOICES = ["approve", "deny"] as const;

export function approvalCard(toolTitle: string, requestId: string, nonce: string): CardAttachment {
  return card(`Permission needed: ${toolTitle}`, [
    {
      type: "Action.Submit",
      title: "Approve",
      data: { [KIND]: "approval", [REQUEST]: requestId, [NONCE]: nonce, [CHOICE]: 0 },
    },
    {
      type: "Action.Submit",
      title: "Deny",
      data: { [KIND]: "approval", [REQUEST]: requestId, [NONCE]: nonce, [CHOICE]: 1 },
    },
  ]);
}

export function optionsCard(labels: readonly string[]): CardAttachment {
  return card(
    "Choose one:",
    labels.map((title, i) => ({
      type: "Action.Submit" as const,
      title,
      data: { [KIND]: "option", [CHOICE]: i },
    })),
  );
}

/** A model list: one submit per model, by index (the hub resolves the index against its own list). */
export function pickerCard(labels: readonly string[]): CardAttachment {
  return card(
    "Models:",
    labels.map((title, i) => ({
      type: "Action.Submit" as const,
      title,
      data: { [KIND]: "model", [CHOICE]: i },
    })),
  );
}

/** Everything a reader sees on a card (the contract's credential check reads it). */
export function cardTexts(attachment: unknown): string[] {
  const c = (attachment as Partial<CardAttachment> | null)?.content;
  if (!c) return [];
  return [...(c.body ?? []).map((b) => b.text), ...(c.actions ?? []).map((a) => a.title)];
}

/** A press's inputs, read defensively: anything malformed is no press of ours. */
export type CardPress =
  | { kind: "approval"; requestId: string; nonce: string | null; choice: number }
  | { kind: "option" | "model"; choice: number };

export function readPress(inputs: Record<string, unknown>): CardPress | null {
  const choice = Number(inputs[CHOICE]);
  if (!Number.isInteger(choice) || choice < 0) return null;
  if (inputs[KIND] === "approval" && typeof inputs[REQUEST] === "string")
    return {
      kind: "approval",
      requestId: inputs[REQUEST],
      nonce: typeof inputs[NONCE] === "string" ? inputs[NONCE] : null,
      choice,
    };
  if (inputs[KIND] === "option" || inputs[KIND] === "model") return { kind: inputs[KIND], choice };
  return null;
}

/**
 * Slack's Block Kit widgets and their action_id grammar, written once: the renderer builds them and
 * the intake parses what a press sends back.
 *   parley:opt:<i>                            an [OPTIONS:] choice, resolved by index on the message
 *   parley:a:<request_id>:<nonce>:<1|0|g>     an approval (g: approve and arm the one auto-approve
 *                                             grant, offered to the owner in a DM only)
 *   parley:m:<i>                              a model-picker entry, resolved against a TTL registry
 * Slack keeps old messages pressable forever, so no action_id carries anything a stale press could
 * act on by itself: the approval nonce is checked by the hub, the others resolve against live state.
 */

import {
  approvalButtonData,
  parseApprovalButton,
  parseIndexedButton,
} from "../messaging/channel/button-data.js";
import { oneLine } from "../messaging/text/clip.js";
import { escapeMrkdwn, plainSafe, SECTION_MAX } from "./format.js";

/** Slack's caps: an action_id, and a button's plain_text label. */
export const ACTION_ID_MAX = 255;
export const LABEL_MAX = 75;
const PREFIX = "parley:";

export type Block = Record<string, unknown>;

export type PressTarget =
  | { kind: "option"; index: number }
  | { kind: "approval"; requestId: string; nonce: string; verdict: "approve" | "deny"; grant: boolean }
  | { kind: "model"; index: number };

/** A button label: one line, display-safe, within Slack's cap (an empty one is refused). */
export function labelOf(label: string): string {
  return oneLine(plainSafe(label), LABEL_MAX) || "…";
}

function button(label: string, actionId: string, style?: "primary" | "danger"): Block {
  return {
    type: "button",
    text: { type: "plain_text", text: labelOf(label), emoji: true },
    action_id: actionId,
    ...(style ? { style } : {}),
  };
}

/** A mrkdwn section; the caller passes mrkdwn already made display-safe. */
export function section(mrkdwn: string): Block {
  return { type: "section", text: { type: "mrkdwn", text: mrkdwn || " " } };
}

/** One grey line (a hint, an outcome); escaped here, so pass plain text. */
export function context(plain: string): Block {
  return { type: "context", elements: [{ type: "mrkdwn", text: escapeMrkdwn(plain) || " " }] };
}

export function actions(elements: Block[]): Block {
  return { type: "actions", block_id: "parley", elements };
}

/** [OPTIONS:] choices (already capped) as buttons, parley:opt:<index>. */
export function optionButtons(labels: readonly string[]): Block {
  return actions(labels.map((label, i) => button(label, `${PREFIX}opt:${i}`)));
}

export function modelButtons(labels: readonly string[]): Block {
  return actions(labels.map((label, i) => button(label, `${PREFIX}m:${i}`)));
}

export function approvalActionId(requestId: string, nonce: string, verdict: "1" | "0" | "g"): string {
  return `${PREFIX}${approvalButtonData(requestId, nonce, verdict)}`;
}

/**
 * Approve / Deny, and "Approve + auto-approve" when `grant` (the owner in a DM). Null when the
 * request id is too long to fit an action_id with its nonce: a button that cannot carry its nonce
 * could never be validated, so none is shown and the typed reply (or the timeout's DENY) decides.
 */
export function approvalButtons(requestId: string, nonce: string, grant: boolean): Block | null {
  if (approvalActionId(requestId, nonce, "g").length > ACTION_ID_MAX) return null;
  return actions([
    button("Approve", approvalActionId(requestId, nonce, "1"), "primary"),
    button("Deny", approvalActionId(requestId, nonce, "0"), "danger"),
    ...(grant ? [button("Approve + auto-approve", approvalActionId(requestId, nonce, "g"))] : []),
  ]);
}

/** A prompt (mrkdwn, display-safe) with its buttons and the typed-reply hint. */
export function promptBlocks(mrkdwn: string, buttons: Block | null, hint: string): Block[] {
  return [section(clipSection(mrkdwn)), ...(buttons ? [buttons] : []), context(hint)];
}

/** A decided prompt: the same text, no buttons, the outcome written in. */
export function decidedBlocks(mrkdwn: string, outcome: string): Block[] {
  return [section(clipSection(mrkdwn)), context(outcome)];
}

function clipSection(mrkdwn: string): string {
  return Array.from(mrkdwn).length <= SECTION_MAX ? mrkdwn : oneLine(mrkdwn, SECTION_MAX);
}

/** Parse a pressed action_id: parley's prefix, then button-data.ts's grammar. */
export function parseActionId(actionId: string): PressTarget | null {
  if (!actionId.startsWith(PREFIX)) return null;
  const rest = actionId.slice(PREFIX.length);
  const option = parseIndexedButton(rest, "opt");
  if (option !== null) return { kind: "option", index: option };
  const model = parseIndexedButton(rest, "m");
  if (model !== null) return { kind: "model", index: model };
  const approval = parseApprovalButton(rest, ["1", "0", "g"]);
  if (!approval) return null;
  const { requestId, nonce, code } = approval;
  return {
    kind: "approval",
    requestId,
    nonce,
    verdict: code === "0" ? "deny" : "approve",
    grant: code === "g",
  };
}

/** The label of the button `actionId` on a message's blocks, as Slack echoes them with a press. */
export function buttonLabel(blocks: readonly unknown[], actionId: string): string | undefined {
  for (const block of blocks) {
    const elements = (block as { elements?: unknown }).elements;
    if (!Array.isArray(elements)) continue;
    for (const el of elements as { action_id?: unknown; text?: { text?: unknown } }[])
      if (el.action_id === actionId && typeof el.text?.text === "string") return el.text.text;
  }
  return undefined;
}

/**
 * Discord's widgets and their custom_id grammar, written once: the renderer builds them and the
 * dispatcher parses what a press sends back. Three families:
 *   opt:<i>                          an [OPTIONS:] choice; the label is recovered from the component
 *   a:<request_id>:<nonce>:<1|0>     an approval; the nonce is checked by PendingApprovals
 *   m:<i>                            a model-picker entry, resolved by index against a TTL registry
 *   s:<handle>:<i>                   a session-picker entry; the handle is the offer's nonce
 * A custom_id caps at 100 characters and Discord replays old ones indefinitely, so none carries a
 * payload a stale press could act on by itself.
 */

import {
  approvalButtonData,
  parseApprovalButton,
  parseIndexedButton,
} from "../messaging/channel/button-data.js";
import { oneLine } from "../messaging/text/clip.js";
import type { ActionRow, Button } from "./payload.js";

export const CUSTOM_ID_MAX = 100;
/** Discord's per-button label cap. */
export const LABEL_MAX = 80;
const PER_ROW = 5;
const MAX_ROWS = 5;

export type PressTarget =
  | { kind: "option"; index: number }
  | { kind: "approval"; requestId: string; nonce: string; approve: boolean }
  | { kind: "model"; index: number }
  | { kind: "session"; handle: string; index: number };

/** A button label: one line, within Discord's cap (an empty one would be refused). */
const labelOf = (label: string) => oneLine(label, LABEL_MAX) || "…";

function rows(buttons: Button[]): ActionRow[] {
  const out: ActionRow[] = [];
  for (let i = 0; i < buttons.length && out.length < MAX_ROWS; i += PER_ROW)
    out.push({ type: 1, components: buttons.slice(i, i + PER_ROW) });
  return out;
}

/** [OPTIONS:] choices (already capped and display-safe) as secondary buttons, opt:<index>. */
export function optionRows(labels: readonly string[]): ActionRow[] {
  return rows(
    labels.map((label, i) => ({ type: 2, style: 2, label: labelOf(label), custom_id: `opt:${i}` })),
  );
}

export function approvalCustomId(requestId: string, nonce: string, approve: boolean): string {
  return approvalButtonData(requestId, nonce, approve ? "1" : "0");
}

/**
 * Approve / Deny. Null when the request id is too long to fit a custom_id with its nonce: a button
 * that cannot carry its nonce could never be validated, so none is rendered and the prompt times
 * out to DENY (the safe direction).
 */
export function approvalRows(requestId: string, nonce: string): ActionRow[] | null {
  if (approvalCustomId(requestId, nonce, true).length > CUSTOM_ID_MAX) return null;
  return rows([
    { type: 2, style: 3, label: "Approve", custom_id: approvalCustomId(requestId, nonce, true) },
    { type: 2, style: 4, label: "Deny", custom_id: approvalCustomId(requestId, nonce, false) },
  ]);
}

export function modelRows(labels: readonly string[]): ActionRow[] {
  return rows(labels.map((label, i) => ({ type: 2, style: 2, label: labelOf(label), custom_id: `m:${i}` })));
}

/** Session choices: `s:<handle>:<i>`; the handle is a nonce, so the list is found without a lookup table. */
export function sessionRows(handle: string, labels: readonly string[]): ActionRow[] {
  return rows(
    labels.map((label, i) => ({
      type: 2,
      style: 2,
      label: labelOf(label),
      custom_id: `s:${handle}:${i}`,
    })),
  );
}

const SESSION_ID = /^s:([A-Za-z0-9_-]{8,64}):(0|[1-9]\d{0,2})$/;

/** Parse a pressed custom_id (button-data.ts's grammar, and Discord's session lists). */
export function parseCustomId(customId: string): PressTarget | null {
  const option = parseIndexedButton(customId, "opt");
  if (option !== null) return { kind: "option", index: option };
  const model = parseIndexedButton(customId, "m");
  if (model !== null) return { kind: "model", index: model };
  const session = SESSION_ID.exec(customId);
  if (session) return { kind: "session", handle: session[1] ?? "", index: Number(session[2]) };
  const approval = parseApprovalButton(customId, ["1", "0"]);
  if (!approval) return null;
  return {
    kind: "approval",
    requestId: approval.requestId,
    nonce: approval.nonce,
    approve: approval.code === "1",
  };
}

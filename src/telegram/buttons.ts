/**
 * Inline keyboards and their callback_data grammar.
 *
 * Approval: `a:<request_id>:<nonce>:<1|0|t>` (approve, deny, always allow: the agent's own "allow always").
 * The nonce is what a press is validated against: ACP request ids restart in every agent process,
 * so a button left in the scrollback names an id that may be live again for a different tool. The
 * parse runs right to left, so a button from before the nonce existed leaves part of its id where
 * the nonce belongs and the compare fails closed. Telegram caps callback_data at 64 BYTES; a prompt
 * whose id would not fit gets no buttons (typed replies still answer it) rather than a cut id.
 *
 * Options: `o:<index>`; the label is recovered from the pressed message's own keyboard, never
 * trusted from the payload.
 *
 * Model picker: `m:<index>`; the index is resolved against the PickerRegistry entry of the pressed
 * message (the exact list it showed, owner-checked, single use, ten minutes). The model id is never
 * in the payload: ids may not fit 64 bytes, and Telegram keeps old buttons pressable indefinitely,
 * so a stale press must miss rather than apply whatever the value was then.
 */
import type { ApprovalVerdict } from "../messaging/approval/approvals.js";
import { approvalButtonData, parseApprovalButton } from "../messaging/channel/button-data.js";
import type { PromptOption } from "../messaging/turn/renderer.js";
import { TELEGRAM_MAX_CALLBACK_BYTES } from "./limits.js";
import type { TgInlineButton, TgInlineKeyboard } from "./wire.js";

const VERDICT_CODE: Readonly<Record<ApprovalVerdict, string>> = {
  approve: "1",
  deny: "0",
  approve_always: "t",
};
const CODE_VERDICT: Readonly<Record<string, ApprovalVerdict>> = {
  "1": "approve",
  "0": "deny",
  t: "approve_always",
};
const LABEL: Readonly<Record<ApprovalVerdict, string>> = {
  approve: "✅ Approve",
  approve_always: "♾️ Always allow",
  deny: "❌ Deny",
};
const ORDER: readonly ApprovalVerdict[] = ["approve", "approve_always", "deny"];

export function approvalData(requestId: string, nonce: string, verdict: ApprovalVerdict): string {
  return approvalButtonData(requestId, nonce, VERDICT_CODE[verdict]);
}

const fits = (data: string) => Buffer.byteLength(data, "utf8") <= TELEGRAM_MAX_CALLBACK_BYTES;

/** One button per verdict the prompt offers (all sharing the prompt's nonce); null if they cannot fit. */
export function approvalKeyboard(
  requestId: string,
  nonce: string,
  options: readonly PromptOption[],
): TgInlineKeyboard | null {
  const offered = new Set(options.map((o) => o.verdict));
  const verdicts = ORDER.filter((v) => (offered.size === 0 ? v !== "approve_always" : offered.has(v)));
  const row = verdicts.map((v) => ({ text: LABEL[v], callback_data: approvalData(requestId, nonce, v) }));
  if (row.length === 0 || !row.every((b) => fits(b.callback_data))) return null;
  return { inline_keyboard: [row] };
}

/** The verdicts an approval keyboard's buttons offer, in order (what a typed-reply hint may name). */
export function approvalVerdictsOf(keyboard: TgInlineKeyboard): { verdict: ApprovalVerdict }[] {
  return keyboard.inline_keyboard.flatMap((row) =>
    row.flatMap((button) => {
      const press = button.callback_data ? parseApprovalData(button.callback_data) : null;
      return press ? [{ verdict: press.verdict }] : [];
    }),
  );
}

export interface ApprovalPress {
  requestId: string;
  nonce: string;
  verdict: ApprovalVerdict;
}

/** Null for anything that is not an approval press (button-data.ts's grammar). */
export function parseApprovalData(data: string): ApprovalPress | null {
  const press = parseApprovalButton(data, Object.keys(CODE_VERDICT));
  const verdict = press ? CODE_VERDICT[press.code] : undefined;
  return press && verdict ? { requestId: press.requestId, nonce: press.nonce, verdict } : null;
}

/** [OPTIONS:] choices as buttons, two per row (labels are already display-safe). */
export function optionsKeyboard(labels: readonly string[]): TgInlineKeyboard {
  return indexedKeyboard("o", labels);
}

/** `<prefix>:<i>` per label (an empty label shows its number), two buttons per row. */
function indexedKeyboard(prefix: string, labels: readonly string[]): TgInlineKeyboard {
  const buttons: TgInlineButton[] = labels.map((text, i) => ({
    text: text || `${i + 1}`,
    callback_data: `${prefix}:${i}`,
  }));
  const rows: TgInlineButton[][] = [];
  for (let i = 0; i < buttons.length; i += 2) rows.push(buttons.slice(i, i + 2));
  return { inline_keyboard: rows };
}

/** The label of the pressed option, read back from the message's own keyboard. */
export function optionLabel(data: string, keyboard: TgInlineKeyboard | undefined): string | null {
  const m = /^o:([0-9]{1,3})$/.exec(data);
  if (!m) return null;
  const index = Number(m[1]);
  for (const row of keyboard?.inline_keyboard ?? []) {
    for (const button of row) if (button.callback_data === `o:${index}`) return button.text;
  }
  return null;
}

/** Model choices as buttons `m:<i>`, two per row (labels are display-safe and bounded by the caller). */
export function modelKeyboard(labels: readonly string[]): TgInlineKeyboard {
  return indexedKeyboard("m", labels);
}

/** The index of a model-picker press; null for anything that is not exactly `m:<digits>`. */
export function parseModelData(data: string): number | null {
  const m = /^m:([0-9]{1,3})$/.exec(data);
  return m ? Number(m[1]) : null;
}

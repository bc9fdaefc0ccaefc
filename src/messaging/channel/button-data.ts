/**
 * The data a button carries back when pressed (a Discord custom_id, a Slack action_id, Telegram
 * callback_data), one grammar for every channel: an approval is `a:<requestId>:<nonce>:<code>`, a
 * listed choice `<prefix>:<index>`. The approval form is read right to left (code, then nonce), so a
 * request id containing ':' stays whole; a button minted before the nonce existed leaves part of the
 * id where the nonce belongs, and the nonce compare then fails closed. The code is the channel's
 * (each platform offers its own verdict set).
 */

export function approvalButtonData(requestId: string, nonce: string, code: string): string {
  return `a:${requestId}:${nonce}:${code}`;
}

/** An approval press's parts; null for anything else, or a code not among `codes`. */
export function parseApprovalButton(
  data: string,
  codes: readonly string[],
): { requestId: string; nonce: string; code: string } | null {
  if (!data.startsWith("a:")) return null;
  const rest = data.slice(2);
  const codeAt = rest.lastIndexOf(":");
  const nonceAt = codeAt < 0 ? -1 : rest.lastIndexOf(":", codeAt - 1);
  if (nonceAt <= 0) return null;
  const code = rest.slice(codeAt + 1);
  if (!codes.includes(code)) return null;
  return { requestId: rest.slice(0, nonceAt), nonce: rest.slice(nonceAt + 1, codeAt), code };
}

/** A list holds at most a few hundred choices: an index past three digits is no press of ours. */
const INDEX = /^(0|[1-9]\d{0,2})$/;

/** The index of a `<prefix>:<index>` press ("opt", "m"); null when `data` is not one. */
export function parseIndexedButton(data: string, prefix: string): number | null {
  if (!data.startsWith(`${prefix}:`)) return null;
  const index = data.slice(prefix.length + 1);
  return INDEX.test(index) ? Number(index) : null;
}

/**
 * iMessage handles: an Apple Account email or a phone number. One normal form on both sides of
 * every comparison (the allow-list, the sender, the owner, the own-message ledger), so
 * `+61 400 000 000` and `+61400000000` are one person and `Me@iCloud.com` is `me@icloud.com`.
 * Checks are linear character scans (no backtracking regex over operator or sender input).
 */

/** Longest handle parley accepts (an address is at most 254 characters). */
const MAX_HANDLE = 254;
const PHONE_PUNCTUATION = new Set([" ", "-", ".", "(", ")", "\u00a0"]);

/** The normal form of a handle, or null when it is neither an email nor a phone number. */
export function normalizeHandle(raw: string): string | null {
  const text = raw.trim();
  if (text === "" || text.length > MAX_HANDLE) return null;
  return text.includes("@") ? normalizeEmail(text) : normalizePhone(text);
}

function normalizeEmail(text: string): string | null {
  const at = text.indexOf("@");
  // One @, something on each side, no whitespace or control character anywhere.
  if (at <= 0 || at !== text.lastIndexOf("@") || at === text.length - 1) return null;
  for (const ch of text) if (ch <= " " || ch === "\u007f") return null;
  return text.toLowerCase();
}

function normalizePhone(text: string): string | null {
  let digits = "";
  let plus = false;
  for (const [i, ch] of [...text].entries()) {
    if (ch >= "0" && ch <= "9") digits += ch;
    else if (ch === "+" && i === 0) plus = true;
    else if (!PHONE_PUNCTUATION.has(ch)) return null;
  }
  // Short codes have at least three digits; E.164 allows fifteen (a little slack for extensions).
  if (digits.length < 3 || digits.length > 20) return null;
  return plus ? `+${digits}` : digits;
}

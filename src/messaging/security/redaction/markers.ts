/** Marker strings a redaction leaves behind, and the result/option types of the public API. */

/** The replacement for a redacted credential. */
export const REDACTION_MARKER = "[REDACTED: credential]";
/** The replacement for a base64 run that decodes to a credential. */
export const ENCODED_REDACTION_MARKER = "[REDACTED: encoded credential]";
/** Prefix of the replacement for a suspicious URL; the host and `]` follow. */
export const EXFILTRATION_MARKER_PREFIX = "[REDACTED: suspicious URL to ";

export interface RedactionResult {
  text: string;
  warnings: string[];
}

export interface ExfiltrationOptions {
  /**
   * Hosts trusted to receive URL data. Exact, case-insensitive; an entry starting
   * with "." also covers every subdomain. A listed host skips only the payload-SIZE
   * heuristics (long query, base64-looking blob) and the markdown-target rule; a
   * literal credential in its URL is still redacted.
   */
  allowedHosts?: readonly string[];
}

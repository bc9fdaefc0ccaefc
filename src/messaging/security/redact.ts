/**
 * Credential and exfiltration-URL redaction for every outbound message: the public entry points.
 *
 * Two stages, always in this order (see {@link redactAll}):
 *
 * 1. Exfiltration (redaction/exfiltration.ts): a URL whose path/query CARRIES data (a credential,
 *    an encoded payload, a long query) is replaced by `[REDACTED: suspicious URL to <host>]`.
 *    Markdown link/image targets additionally lose any query string or long path payload unless
 *    their host is allow-listed, because chat apps fetch them without a click.
 * 2. Credentials (redaction/credentials.ts): provider tokens, key/value secrets, PEM blocks, bare
 *    AWS-secret shaped runs, base64-encoded credentials and secret-bearing URL parameters are
 *    replaced by {@link REDACTION_MARKER}.
 *
 * Every rule is a hand-written scanner over char codes (regexes only locate candidate offsets or
 * test backtracking-free shapes): each runs in time linear in its input, and each can answer
 * "undecided: I need more input" at the end of an unfinished buffer. That second property is what
 * lets the StreamRedactor emit exactly what the batch functions would, chunk by chunk: the batch
 * path is the same engine run with `eof = true`.
 *
 * Indices are UTF-16 offsets internally; lengths reported in warnings are code points, matching
 * the reference implementation this module was ported from.
 */
import { credentialSpans, planCredentials } from "./redaction/credentials.js";
import { NO_ALLOWED_HOSTS, planExfiltration, planExfiltrationFull } from "./redaction/exfiltration.js";
import type { ExfiltrationOptions, RedactionResult } from "./redaction/markers.js";
import { quietExfiltrationCut } from "./redaction/quiet.js";
import { spliceSpans } from "./redaction/spans.js";

export { codePointLength } from "./redaction/chars.js";
export { credentialSpans, planCredentials, planCredentialsFull } from "./redaction/credentials.js";
export {
  allowedHostSet,
  planExfiltration,
  planExfiltrationFull,
  planExfiltrationWith,
} from "./redaction/exfiltration.js";
export {
  ENCODED_REDACTION_MARKER,
  EXFILTRATION_MARKER_PREFIX,
  type ExfiltrationOptions,
  REDACTION_MARKER,
  type RedactionResult,
} from "./redaction/markers.js";
export { quietCredentialCut, quietExfiltrationCut } from "./redaction/quiet.js";
export { type RedactionSpan, type StagePlan, spliceSpans } from "./redaction/spans.js";

/** Redacts credentials: provider tokens, key/value secrets, PEM keys, bare AWS secrets, encoded credentials, secret URL parameters. */
export function redactCredentials(text: string): RedactionResult {
  const plan = planCredentials(text, 0, true);
  return { text: plan.spans.length === 0 ? text : spliceSpans(text, plan.spans), warnings: plan.warnings };
}

/** Redacts URLs that carry data out: credentials or encoded payloads in the URL, long or blob-like queries, markdown targets with data. */
export function redactExfiltrationUrls(text: string, opts: ExfiltrationOptions = {}): RedactionResult {
  const plan = planExfiltration(text, 0, true, opts);
  return { text: plan.spans.length === 0 ? text : spliceSpans(text, plan.spans), warnings: plan.warnings };
}

/** Warnings {@link redactExfiltrationUrls} would report, without rewriting anything. */
export function scanExfiltrationUrls(text: string, opts: ExfiltrationOptions = {}): string[] {
  return planExfiltration(text, 0, true, opts).warnings;
}

/**
 * Exfiltration first, then credentials: the contract every outbound path relies on. Each stage asks
 * its quiet-text check once (ordinary prose: no span possible) and plans only what it cannot clear.
 */
export function redactAll(text: string): string {
  let afterUrls = text;
  if (quietExfiltrationCut(text, 0, true) < 0) {
    const plan = planExfiltrationFull(text, 0, true, NO_ALLOWED_HOSTS);
    if (plan.spans.length > 0) afterUrls = spliceSpans(text, plan.spans);
  }
  const spans = credentialSpans(afterUrls);
  return spans.length === 0 ? afterUrls : spliceSpans(afterUrls, spans);
}

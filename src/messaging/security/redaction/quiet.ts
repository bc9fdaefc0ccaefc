import { F_ALNUM, F_B64, F_DIGIT, F_IDENT, has } from "./chars.js";
import { notInsidePair, type Range, type StagePlan } from "./spans.js";

/*
 * Most streamed chunks are ordinary prose ("the ", "**bold** "), and the full planners'
 * fixed cost dwarfs the work such text needs. These checks PROVE what the planner would
 * return for a text without running it, and answer -1 (run the planner) otherwise.
 *
 * Credential stage, over `text[start:]` made only of the characters below, with no
 * [A-Za-z0-9-] run over 15 characters, no `eyJ`, no dash prefix (`--`, `sk-`, `xox`, …)
 * and no key name: no rule can match (every fixed shape needs a longer run, a prefix,
 * `_`, `+`, `/`, `?`, `&`, `://` or a key name), and a rule reads past a character only
 * while it stays in [A-Za-z0-9.-] (spaces, quotes and `:`/`=` are crossed only after a
 * key name). So the earliest undecided offset is the start of the trailing
 * [A-Za-z0-9.-] run, where the generic key/value rule's identifier reaches the end; the
 * base64 tail and partial prefixes start at or after it. Pinned against the planner by
 * test/messaging/security/quiet-path.test.ts.
 */

// 0: anything else (the fast path declines)
export const Q_ALNUM = 1;
export const Q_DOT = 2;
export const Q_INERT = 3; // no rule treats it specially outside a keyword's value
export const Q_COLON = 4; // safe only as `: ` / `:\n` after a non-digit (no `://`, no Telegram id)
export const Q_DASH = 5; // part of runs like an alnum (`well-known`, `-la`); prefixes and `--` checked after
/**
 * `_`, `/`, `+`: part of token and base64 runs, so counted in the run (every shape holding one needs a
 * run over 15 or a prefix checked after). Only for a complete text: a stream's undecided tail would
 * then depend on which rule's run class reaches the end, which the simple tail rule below ignores.
 */
export const Q_RUN_SYMBOL = 6;
/** Outside ASCII: ends runs; only the four that fold onto ASCII letters are declined. */
const Q_NON_ASCII = 7;

export const QUIET = new Uint8Array(128);
(() => {
  for (let c = 0; c < 128; c++) if (has(c, F_ALNUM)) QUIET[c] = Q_ALNUM;
  QUIET[46] = Q_DOT;
  for (const ch of " \t\n\r,;!*`()[]#\"'|<>{}~^$@%=\\") QUIET[ch.charCodeAt(0)] = Q_INERT;
  QUIET[58] = Q_COLON;
  QUIET[45] = Q_DASH;
  for (const ch of "_/+") QUIET[ch.charCodeAt(0)] = Q_RUN_SYMBOL;
})();

/** Longest alnum run that cannot be any fixed-shape token (SendGrid's 16 is the shortest). */
export const QUIET_MAX_RUN = 15;

/**
 * Key names after which a rule reads on across spaces and quotes (`password = …`,
 * `Authorization: …`, `Bearer …`, `SessionToken: …`): a secret-suffixed identifier
 * that ends there, or one of the header/label words anywhere.
 */
export const QUIET_KEYWORD_RE =
  /(?:token|secret|secretkey|secret_key|password|passwd|passphrase|apikey|api-key|api_key|accesskey|access_key|privatekey|private_key)(?![A-Za-z0-9_.-])|accesskeyid|authorization|bearer/gi;

/** Dash-bearing prefixes whose token may follow (PEM, Slack, OpenAI/Anthropic, PyPI, GitLab, Google OAuth). */
export const QUIET_DASH_RE = /--|sk-|xox|xapp-|pypi-|glpat-|GOCSPX-/;
export const QUIET_DASH_EOF_RE = /-----|sk-|xox|xapp-|pypi-|glpat-|GOCSPX-/;

/** Length of the ASCII digit run ending just before `i`, counted up to 6. */
function digitsBefore(s: string, i: number): number {
  let k = 0;
  while (k < 6 && i - k - 1 >= 0 && has(s.charCodeAt(i - k - 1), F_DIGIT)) k++;
  return k;
}

export function isAsciiWs(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

/** The credential plan's cut for a quiet `text[start:]` (no spans), or -1 when not provably quiet. */
export function quietCredentialCut(s: string, start: number, eof: boolean): number {
  return scanQuiet(s, start, eof, null);
}

/*
 * Most text that is not quiet fails only on a long run (a commit id, a UUID, a path, a key): every
 * other reason (a key name, a dash prefix, `eyJ`, a colon after digits, `?`/`&`) can start a rule
 * that reads across words. When runs are the only reason, every rule that can still match is a
 * fixed token shape made of [A-Za-z0-9_+/=.-] holding a run over 15 (see above), so it lies inside
 * one CLUSTER of those characters that holds such a run; and every rule's look-behind and
 * look-ahead classes are subsets of those characters, so a cluster planned as a text of its own
 * (eof, no context) gets exactly the spans the whole text gets there. The credential stage then
 * plans those clusters alone instead of the whole text. Pinned by quiet-path.test.ts.
 */

/**
 * For a complete `text`: the clusters (see above) the credential planner must read, [] when the text
 * is quiet, or null when something other than a long run makes it loud (plan the whole text then).
 */
export function loudClusters(s: string): Range[] | null {
  const windows: Range[] = [];
  if (scanQuiet(s, 0, true, windows) < 0) return null;
  // The one label whose name no key-name check above sees (`access_key` then `_`): its value may
  // follow a space, outside the name's cluster. Quiet text cannot hold it (a 17-character run).
  return windows.length > 0 && s.includes("aws_access_key_id") ? null : windows;
}

/**
 * quietCredentialCut's scan. With `windows` (complete texts only), a run over 15 marks its cluster
 * for planning instead of failing the scan.
 */
function scanQuiet(s: string, start: number, eof: boolean, windows: Range[] | null): number {
  const n = s.length;
  // A run straddling `start` would be judged from its middle: only accept a clean boundary.
  if (start > 0 && has(s.charCodeAt(start - 1), F_IDENT | F_B64)) return -1;
  let run = 0;
  let tail = start; // start of the trailing [A-Za-z0-9.-] run
  let letters = false;
  let dashes = false;
  let bareColon = false;
  let clusterStart = start;
  let clusterLoud = false;
  for (let i = start; i < n; i++) {
    const c = s.charCodeAt(i);
    // ASCII letters first, by range: most of any text (the table below gives them Q_ALNUM too).
    if ((c >= 97 && c <= 122) || (c >= 65 && c <= 90)) {
      if (++run > QUIET_MAX_RUN) {
        if (windows === null) return -1;
        clusterLoud = true;
      }
      letters = true;
      continue;
    }
    if (c === 32) {
      // A space next: inert (the table's Q_INERT), it ends the run and the cluster, as below.
      run = 0;
      tail = i + 1;
      if (windows !== null) {
        if (clusterLoud) windows.push({ start: clusterStart, end: i });
        clusterStart = i + 1;
        clusterLoud = false;
      }
      continue;
    }
    const k = c < 128 ? (QUIET[c] as number) : Q_NON_ASCII;
    if (k === Q_ALNUM || k === Q_DASH) {
      // One counter for the [A-Za-z0-9-] run: it bounds the base64, Discord and prefixed shapes alike.
      if (++run > QUIET_MAX_RUN) {
        if (windows === null) return -1;
        clusterLoud = true;
      }
      if (c >= 65) letters = true;
      else if (c === 45) dashes = true;
      continue;
    }
    if (k === Q_RUN_SYMBOL) {
      if (!eof) return -1;
      if (++run > QUIET_MAX_RUN) {
        if (windows === null) return -1;
        clusterLoud = true;
      }
      continue;
    }
    run = 0;
    if (k === Q_DOT) continue;
    tail = i + 1;
    // Past here only `=` belongs to a cluster: anything else ends the current one.
    if (windows !== null && c !== 61) {
      if (clusterLoud) windows.push({ start: clusterStart, end: i });
      clusterStart = i + 1;
      clusterLoud = false;
    }
    if (k === Q_INERT) continue;
    if (k === Q_NON_ASCII) {
      // Python folds these onto ASCII letters of `authorization`/`sk`/`key`.
      if (c === 0x130 || c === 0x131 || c === 0x17f || c === 0x212a) return -1;
      continue;
    }
    if (k === Q_COLON) {
      if (i + 1 < n && isAsciiWs(s.charCodeAt(i + 1))) {
        const prev = i > 0 ? s.charCodeAt(i - 1) : 32;
        if (prev >= 48 && prev <= 57) return -1;
        continue;
      }
      // `://` and `a:b` in a complete text: only userinfo (which needs an `@`) and a Telegram
      // `<6+ digits>:` read across such a colon; every key/label rule has its keyword checked below.
      if (!eof || i + 1 >= n || digitsBefore(s, i) >= 6) return -1;
      bareColon = true;
      continue;
    }
    return -1;
  }
  if (clusterLoud && windows !== null) windows.push({ start: clusterStart, end: n });
  if (bareColon && s.indexOf("@", start) >= 0) return -1;
  // A complete text needs the PEM rule's full five dashes (`|---|` rows and `--flags` are prose);
  // a stream's trailing `--` may still grow into them.
  if (dashes && (eof ? QUIET_DASH_EOF_RE : QUIET_DASH_RE).test(s.slice(start))) return -1;
  if (letters) {
    if (s.indexOf("eyJ", start) >= 0) return -1;
    QUIET_KEYWORD_RE.lastIndex = start;
    if (QUIET_KEYWORD_RE.test(s)) return -1;
  }
  return eof ? n : notInsidePair(s, tail);
}

/**
 * The exfiltration plan's cut when `text[start:]` holds no `http` and no `](` (one
 * character of context may hold the `]`): no URL or markdown target can start, and
 * only a trailing proper prefix of `http` is undecided. -1 otherwise.
 */
export function quietExfiltrationCut(s: string, start: number, eof: boolean): number {
  if (s.indexOf("http", start) >= 0 || s.indexOf("](", start > 0 ? start - 1 : 0) >= 0) return -1;
  const n = s.length;
  if (eof) return n;
  let cut = n;
  for (let i = Math.max(start, n - 3); i < n && cut === n; i++) {
    let k = i;
    while (k < n && s.charCodeAt(k) === "http".charCodeAt(k - i)) k++;
    if (k === n) cut = i;
  }
  return notInsidePair(s, cut);
}

export function quietPlan(cut: number): StagePlan {
  return { spans: [], warnings: [], cut };
}

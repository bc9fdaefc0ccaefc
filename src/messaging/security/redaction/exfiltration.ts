/** The exfiltration stage: URLs and markdown targets that carry data out of the conversation. */
import { type B64Chunk, chunkDecodesToCredential, scanB64Chunks } from "./base64-runs.js";
import { codePointLength, F_HEX, F_HOST, F_IPV6, F_LETTER, has, pyWs } from "./chars.js";
import { unquote, unquotePlus } from "./codecs.js";
import { EXFILTRATION_MARKER_PREFIX, type ExfiltrationOptions } from "./markers.js";
import { containsCredentialPattern } from "./provider-tokens.js";
import { quietCredentialCut, quietExfiltrationCut, quietPlan } from "./quiet.js";
import { isNeedMore, pyDigitAt, Src } from "./source.js";
import {
  notInsidePair,
  type Range,
  type RedactionSpan,
  type StagePlan,
  settleCut,
  spansBefore,
} from "./spans.js";

export const EXFIL_QUERY_MIN_LEN = 200;
export const MAX_URL_DECODE_PASSES = 3;

/** Python re.IGNORECASE class for [A-Za-z] (adds ſ, K, ı, İ, which fold onto ASCII letters). */
export const PY_CI_LETTERS = "A-Za-z\\u017F\\u212A\\u0131\\u0130";
export const PY_WS_CLASS =
  "\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";

/** Builds a case-insensitive literal as explicit classes with Python's folding (no JS `i` flag). */
export function pyCiLiteral(lit: string): string {
  let out = "";
  for (const ch of lit) {
    const l = ch.toLowerCase();
    if (l >= "a" && l <= "z") {
      let cls = `${l}${l.toUpperCase()}`;
      if (l === "i") cls += "\\u0131\\u0130";
      if (l === "s") cls += "\\u017F";
      if (l === "k") cls += "\\u212A";
      out += `[${cls}]`;
    } else out += ch.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }
  return out;
}

export const AWS_KEY_ID_CI = `(?:${pyCiLiteral("AKIA")}|${pyCiLiteral("ASIA")})[${PY_CI_LETTERS}0-9]{16}`;
export const LABEL_VALUE_CI = `["']?[${PY_WS_CLASS}]*[:=][${PY_WS_CLASS}]*["']?[^${PY_WS_CLASS}"',}]`;

/** Unambiguous credential markers anywhere in a URL's path or query (case-insensitive, like the reference). */
export const HARD_CREDENTIAL_RE = new RegExp(
  [
    AWS_KEY_ID_CI,
    `(?:${pyCiLiteral("SecretAccessKey")}|${pyCiLiteral("aws_secret_access_key")})${LABEL_VALUE_CI}`,
    `(?:${pyCiLiteral("SessionToken")}|${pyCiLiteral("aws_session_token")})${LABEL_VALUE_CI}`,
    `(?:${pyCiLiteral("AccessKeyId")}|${pyCiLiteral("aws_access_key_id")})${LABEL_VALUE_CI}`,
    `(?:${pyCiLiteral("ssh-rsa")}|${pyCiLiteral("ssh-ed25519")})[${PY_WS_CLASS}+%]`,
    `${pyCiLiteral("BEGIN")}[${PY_WS_CLASS}+%](?:${pyCiLiteral("RSA")}|${pyCiLiteral("DSA")}|${pyCiLiteral("EC")}|${pyCiLiteral("OPENSSH")})[${PY_WS_CLASS}+%]${pyCiLiteral("PRIVATE")}[${PY_WS_CLASS}+%]${pyCiLiteral("KEY")}`,
    `${pyCiLiteral("xox")}[bpasBPAS\\u017F]-[0-9${PY_CI_LETTERS}-]`,
  ].join("|"),
);

/** Heavy percent-encoding: 21+ consecutive `%XX` octets (kept apart: it is never exempted). */
export function hasHeavyPercent(s: string): boolean {
  let i = 0;
  while (i + 2 < s.length) {
    let j = i;
    let count = 0;
    while (
      j + 2 < s.length &&
      s.charCodeAt(j) === 37 &&
      has(s.charCodeAt(j + 1), F_HEX) &&
      has(s.charCodeAt(j + 2), F_HEX)
    ) {
      j += 3;
      if (++count >= 21) return true;
    }
    i = count > 0 ? j : i + 1;
  }
  return false;
}

/** Query-data heuristics: base64-like blob, an AWS key id, SSH/PEM headers, Slack tokens (case-insensitive). */
export const EXFIL_PATTERNS_RE = new RegExp(
  [
    `[${PY_CI_LETTERS}0-9+/=]{40}`,
    AWS_KEY_ID_CI,
    `(?:${pyCiLiteral("ssh-rsa")}|${pyCiLiteral("ssh-ed25519")})[${PY_WS_CLASS}+%]`,
    `${pyCiLiteral("BEGIN")}[${PY_WS_CLASS}+%](?:${pyCiLiteral("RSA")}|${pyCiLiteral("DSA")}|${pyCiLiteral("EC")}|${pyCiLiteral("OPENSSH")})[${PY_WS_CLASS}+%]${pyCiLiteral("PRIVATE")}[${PY_WS_CLASS}+%]${pyCiLiteral("KEY")}`,
    `${pyCiLiteral("xox")}[bpasBPAS\\u017F]-[0-9${PY_CI_LETTERS}-]`,
  ].join("|"),
);

export function exfilPatterns(s: string): boolean {
  return EXFIL_PATTERNS_RE.test(s) || hasHeavyPercent(s);
}

/** A canonical credential, literally or base64-encoded, anywhere in a URL payload (not the entropy heuristic). */
export function containsFixedCredential(payload: string): boolean {
  // Quiet text (quiet.ts) gets no credential span at all, so neither a pattern nor an encoded one is in it.
  return quietCredentialCut(payload, 0, true) < 0 && containsFixedCredentialFull(payload);
}

/** {@link containsFixedCredential} without the quiet-text fast path (exported for the test that pins the two equal). */
export function containsFixedCredentialFull(payload: string): boolean {
  if (containsCredentialPattern(payload)) return true;
  if (payload.length < 40) return false; // a base64 chunk has 40+ characters
  const chunks: B64Chunk[] = [];
  scanB64Chunks(new Src(payload, true), 0, chunks);
  for (const ch of chunks) if (chunkDecodesToCredential(payload, ch.start, ch.dataEnd, ch.end)) return true;
  return false;
}

// Valid S3 presigned URLs legitimately carry an AKIA id and a hex signature; every value is validated.
export const PRESIGNED_PARTS = [
  new RegExp(`${pyCiLiteral("X-Amz-Algorithm=AWS4-HMAC-SHA256")}`, "g"),
  new RegExp(`${pyCiLiteral("X-Amz-Credential=")}${AWS_KEY_ID_CI}(?:%2[Ff]|/)`, "g"),
  new RegExp(`${pyCiLiteral("X-Amz-Expires=")}\\p{Nd}`, "gu"),
  new RegExp(`${pyCiLiteral("X-Amz-Signature=")}[0-9a-fA-F]{64}`, "g"),
];
export const PRESIGNED_PARAMS = new Set([
  "X-Amz-Algorithm",
  "X-Amz-Credential",
  "X-Amz-Date",
  "X-Amz-Expires",
  "X-Amz-SignedHeaders",
  "X-Amz-Signature",
  "X-Amz-Security-Token",
]);
export const PRESIGNED_VALIDATORS: Record<string, RegExp> = {
  "X-Amz-Credential":
    /^(?:AKIA|ASIA)[A-Z0-9]{16}(?:%2F|\/)[0-9]{8}(?:%2F|\/)[a-z0-9-]+(?:%2F|\/)s3(?:%2F|\/)aws4_request\n?$/,
  "X-Amz-Signature": /^[0-9a-f]{64}\n?$/,
  "X-Amz-Security-Token": /^(?:FwoGZX|IQoJb3JpZ2lu)[A-Za-z0-9+/=%]{1,2000}\n?$/,
};

export function isSafePresigned(domain: string, query: string): boolean {
  if (!domain.endsWith(".amazonaws.com")) return false;
  let from = 0;
  for (const part of PRESIGNED_PARTS) {
    part.lastIndex = from;
    const m = part.exec(query);
    if (m === null) return false;
    from = m.index + m[0].length;
  }
  const params = new Map<string, string[]>();
  for (const piece of query.split("&")) {
    if (piece === "") continue;
    const eq = piece.indexOf("=");
    const name = unquote((eq < 0 ? piece : piece.slice(0, eq)).replace(/\+/g, " "));
    const value = eq < 0 ? "" : unquote(piece.slice(eq + 1).replace(/\+/g, " "));
    const list = params.get(name) ?? [];
    list.push(value);
    params.set(name, list);
  }
  for (const [name, values] of params) {
    if (!PRESIGNED_PARAMS.has(name)) return false;
    const validator = PRESIGNED_VALIDATORS[name];
    for (const v of values) {
      if (validator !== undefined ? !validator.test(v) : exfilPatterns(v)) return false;
    }
  }
  return true;
}

export function hostAllowed(host: string, allowed: ReadonlySet<string>): boolean {
  const h = host.toLowerCase();
  if (allowed.has(h)) return true;
  for (const entry of allowed)
    if (entry.startsWith(".") && (h.endsWith(entry) || h === entry.slice(1))) return true;
  return false;
}

/** The per-URL verdict (reference `_exfil_url_warning`): a warning, or null when the URL is clean. */
export function exfilUrlWarning(
  domain: string,
  pathAndQuery: string,
  port: string,
  allowed: ReadonlySet<string>,
): string | null {
  const qmark = pathAndQuery.indexOf("?");
  const query = qmark >= 0 ? pathAndQuery.slice(qmark + 1) : "";
  if (query !== "" && isSafePresigned(domain, query)) return null;
  // Hard markers and canonical tokens are unconditional, whatever the host.
  if (HARD_CREDENTIAL_RE.test(pathAndQuery)) return `Suspicious URL with credential in path/query: ${domain}`;
  const full = `${domain}${port}${pathAndQuery}`;
  if (containsFixedCredential(full)) return `Suspicious URL with credential in path/query: ${domain}`;
  // Only `%` and `+` decode (most URLs have neither, and then nothing below can fire).
  if (full.includes("%") || full.includes("+")) {
    // Decode until stable (bounded): a double-encoded credential survives one pass.
    let decoded = full;
    for (let k = 0; k < MAX_URL_DECODE_PASSES; k++) {
      const next = unquotePlus(decoded);
      if (next === decoded) break;
      decoded = next;
      if (HARD_CREDENTIAL_RE.test(decoded) || containsFixedCredential(decoded))
        return `Suspicious URL with encoded credential in path/query: ${domain}`;
    }
    // Still decodable after the budget: never seen in plaintext, so fail closed.
    if (unquotePlus(decoded) !== decoded)
      return `Suspicious URL with encoded credential in path/query: ${domain}`;
    if (hasHeavyPercent(pathAndQuery)) return `Suspicious URL with credential-like query data: ${domain}`;
  }
  if (qmark < 0) return null;
  const heuristicQuery = hostAllowed(domain, allowed) ? "" : query;
  if (heuristicQuery !== "") {
    const qlen = codePointLength(heuristicQuery);
    if (qlen >= EXFIL_QUERY_MIN_LEN) {
      const head = Array.from(pathAndQuery).slice(0, 60).join("");
      return `Suspicious URL with long query params (${qlen} chars): ${domain}${head}...`;
    }
    if (exfilPatterns(heuristicQuery) || exfilPatterns(unquotePlus(heuristicQuery)))
      return `Suspicious URL with credential-like query data: ${domain}`;
  }
  return null;
}

export interface UrlMatch {
  start: number;
  end: number;
  domain: string;
  port: string;
  pathAndQuery: string;
}

/** The reference URL grammar: `https?://` + DNS name | IPv4 | [IPv6], optional `:port`, optional path/query. */
export function urlAt(src: Src, i: number): UrlMatch | null {
  if (!src.lit(i, "http")) return null;
  let h: number;
  if (src.at(i + 4) === 115 && src.lit(i + 5, "://")) h = i + 8;
  else if (src.lit(i + 4, "://")) h = i + 7;
  else return null;
  const s = src.s;
  let he = -1;
  // DNS name: the longest prefix of the host run followed by `.` and 2+ letters.
  const r = src.run(h, F_HOST);
  for (let j = r - 3; j > h; j--) {
    if (s.charCodeAt(j) === 46 && has(s.charCodeAt(j + 1), F_LETTER) && has(s.charCodeAt(j + 2), F_LETTER)) {
      let k = j + 1;
      while (k < r && has(s.charCodeAt(k), F_LETTER)) k++;
      he = k;
      break;
    }
  }
  if (he < 0) he = ipv4End(src, h);
  if (he < 0 && src.at(h) === 91) {
    const e = src.run(h + 1, F_IPV6);
    if (e > h + 1 && src.at(e) === 93) he = e + 1;
  }
  if (he < 0) return null;
  let p = he;
  let port = "";
  if (src.at(p) === 58) {
    let k = p + 1;
    let w = pyDigitAt(src, k);
    while (w > 0) {
      k += w;
      w = pyDigitAt(src, k);
    }
    if (k > p + 1) {
      port = s.slice(p, k);
      p = k;
    }
  }
  let pq = "";
  const c = src.at(p);
  if (c === 47 || c === 63) {
    let k = p + 1;
    let d = src.at(k);
    while (d >= 0 && !pyWs(d) && d !== 41 && d !== 34 && d !== 39 && d !== 62) d = src.at(++k);
    pq = s.slice(p, k);
    p = k;
  }
  return { start: i, end: p, domain: s.slice(h, he), port, pathAndQuery: pq };
}

/** Dotted-quad with Python's Unicode `\d`: three `\d{1,3}.` groups then `\d{1,3}` (greedy). */
export function ipv4End(src: Src, h: number): number {
  let p = h;
  for (let g = 0; g < 4; g++) {
    let digits = 0;
    let w = pyDigitAt(src, p);
    while (w > 0 && digits < 3) {
      p += w;
      digits++;
      w = pyDigitAt(src, p);
    }
    if (digits === 0) return -1;
    if (g < 3) {
      if (src.at(p) !== 46) return -1;
      p++;
    }
  }
  return p;
}

export interface MarkdownTarget {
  start: number;
  end: number;
  /** Empty when the target is not flagged. */
  host: string;
  reason: string;
}

/** A path segment that reads as data rather than a slug or a commit id. */
export function isPayloadSegment(seg: string): boolean {
  if (seg.length < 32) return false;
  if (!/^[A-Za-z0-9+=_%.~-]+$/.test(seg)) return false;
  if (/[%=+]/.test(seg)) return true;
  if (/^[0-9a-fA-F]+$/.test(seg) && seg.length <= 64) return false;
  return /[0-9]/.test(seg) && /[A-Za-z]/.test(seg) && !/[a-z]{6}/.test(seg);
}

/**
 * A markdown link or image target `](url)`: chat apps fetch these without a click
 * (previews, unfurls, inline images), so ANY query string or a long path payload to a
 * host that is not allow-listed is treated as data leaving.
 */
export function markdownTargetAt(src: Src, i: number, allowed: ReadonlySet<string>): MarkdownTarget | null {
  if (src.before(i) !== 93) return null;
  let t = i + 1;
  let c = src.at(t);
  while (c === 32 || c === 9) c = src.at(++t);
  if (c === 60) c = src.at(++t);
  let e = t;
  while (c >= 0 && !pyWs(c) && c !== 41 && c !== 62 && c !== 60 && c !== 34 && c !== 39) c = src.at(++e);
  if (e === t) return null;
  const none: MarkdownTarget = { start: t, end: e, host: "", reason: "" };
  const s = src.s;
  // Only `http(s)://host` (scheme in any case) and `//host` targets are fetched.
  let p = t;
  p += httpSchemeLength(s, p);
  if (p + 2 > e || s.charCodeAt(p) !== 47 || s.charCodeAt(p + 1) !== 47) return none;
  const authorityStart = p + 2;
  p = authorityStart;
  while (p < e && !isAuthorityEnd(s.charCodeAt(p))) p++;
  const pathStart = p;
  while (p < e && s.charCodeAt(p) !== 63 && s.charCodeAt(p) !== 35) p++;
  const pathEnd = p;
  let queryData = false;
  if (p < e && s.charCodeAt(p) === 63) {
    let q = p + 1;
    while (q < e && s.charCodeAt(q) !== 35) q++;
    queryData = q > p + 1 && !isNavigationQuery(s.slice(p + 1, q));
  }
  // The reason first: most targets have none, and then the host does not matter.
  let reason = "";
  if (queryData) reason = "query data";
  else if (pathEnd - pathStart >= EXFIL_QUERY_MIN_LEN || hasPayloadSegment(s, pathStart, pathEnd))
    reason = "path payload";
  if (reason === "") return none;
  const authority = s.slice(authorityStart, pathStart);
  const at = authority.lastIndexOf("@");
  let host = at >= 0 ? authority.slice(at + 1) : authority;
  if (host.startsWith("[")) {
    const close = host.indexOf("]");
    host = close >= 0 ? host.slice(0, close + 1) : host;
  } else {
    const colon = host.indexOf(":");
    if (colon >= 0) host = host.slice(0, colon);
  }
  if (host === "" || hostAllowed(host, allowed)) return none;
  return { start: t, end: e, host, reason };
}

/**
 * Parameters that choose what a page shows (Grafana's `orgId`, `from`, `to`; `page`, `lang`, `tab`, …).
 * A target's query made only of these, with short plain values (`?orgId=1`, `?page=2&lang=en`), is
 * not withheld as data: it carries no more than a short path segment, which passes anyway. Any other
 * parameter, more than four, a value over 16 characters or encoded (`%`, `+`), or one that looks like
 * data (8+ characters mixing case and digits) still makes the query data, so an image's `?d=1` and a
 * link's `?u=<blob>` stay withheld.
 */
const NAVIGATION_PARAMS = new Set([
  "orgid",
  "from",
  "to",
  "refresh",
  "page",
  "per_page",
  "limit",
  "offset",
  "lang",
  "locale",
  "hl",
  "tab",
  "view",
  "sort",
  "order",
  "theme",
  "mode",
  "format",
  "ref",
  "branch",
  "version",
  "plain",
]);
const PLAIN_VALUE = /^[A-Za-z0-9._-]{0,16}$/;

function isNavigationQuery(query: string): boolean {
  if (query.length > 64) return false;
  const params = query.split("&");
  if (params.length > 4) return false;
  for (const param of params) {
    const eq = param.indexOf("=");
    const name = eq < 0 ? param : param.slice(0, eq);
    const value = eq < 0 ? "" : param.slice(eq + 1);
    if (!NAVIGATION_PARAMS.has(name.toLowerCase()) || !PLAIN_VALUE.test(value)) return false;
    if (value.length >= 8 && /[0-9]/.test(value) && /[a-z]/.test(value) && /[A-Z]/.test(value)) return false;
  }
  return true;
}

/** 5 for `http:`, 6 for `https:` (scheme in any ASCII case) at `p`, else 0: compared in place, no slice. */
function httpSchemeLength(s: string, p: number): number {
  // `| 0x20` folds an ASCII capital onto its small letter (and maps nothing else there; NaN past the end).
  for (let k = 0; k < 4; k++) if ((s.charCodeAt(p + k) | 0x20) !== "http".charCodeAt(k)) return 0;
  if (s.charCodeAt(p + 4) === 58) return 5;
  return (s.charCodeAt(p + 4) | 0x20) === 115 && s.charCodeAt(p + 5) === 58 ? 6 : 0;
}

/** `/`, `?` and `#` end a URL's authority. */
function isAuthorityEnd(c: number): boolean {
  return c === 47 || c === 63 || c === 35;
}

/** Whether some `/`-separated segment of `s[a:b]` is a payload (only segments of 32+ characters can be). */
function hasPayloadSegment(s: string, a: number, b: number): boolean {
  let segStart = a;
  for (let k = a; k <= b; k++) {
    if (k < b && s.charCodeAt(k) !== 47) continue;
    if (k - segStart >= 32 && isPayloadSegment(s.slice(segStart, k))) return true;
    segStart = k + 1;
  }
  return false;
}

/**
 * Plans exfiltration redaction for `text[start:]` (`text[:start]` is context only).
 * Each flagged URL is replaced where it matched (the reference replaced every copy of
 * the URL string; positional replacement keeps the decision local, which is what makes
 * exact streaming possible).
 */
export function planExfiltration(
  text: string,
  start = 0,
  eof = true,
  opts: ExfiltrationOptions = {},
): StagePlan {
  return planExfiltrationWith(text, start, eof, allowedHostSet(opts));
}

export const NO_ALLOWED_HOSTS: ReadonlySet<string> = new Set<string>();

/** Normalised allow-list (lower case), built once per options object by callers that plan repeatedly. */
export function allowedHostSet(opts: ExfiltrationOptions): ReadonlySet<string> {
  if (opts.allowedHosts === undefined || opts.allowedHosts.length === 0) return NO_ALLOWED_HOSTS;
  const set = new Set<string>();
  for (const h of opts.allowedHosts ?? []) set.add(h.toLowerCase());
  return set;
}

export interface Flagged {
  span: RedactionSpan;
  warning: string;
}

export function planExfiltrationWith(
  text: string,
  start: number,
  eof: boolean,
  allowed: ReadonlySet<string>,
): StagePlan {
  const quiet = quietExfiltrationCut(text, start, eof);
  return quiet >= 0 ? quietPlan(quiet) : planExfiltrationFull(text, start, eof, allowed);
}

/** {@link planExfiltrationWith} without the quiet-text fast path (exported for the tests that pin the two equal). */
export function planExfiltrationFull(
  text: string,
  start: number,
  eof: boolean,
  allowed: ReadonlySet<string>,
): StagePlan {
  const src = new Src(text, eof);
  const s = text;
  const flagged: Flagged[] = [];
  // Regions (scanner extents a restart must not split) matter only to a stream.
  const regions: Range[] | null = eof ? null : [];
  let uUrl = src.n;
  let i = start;
  try {
    for (;;) {
      let at = s.indexOf("http", i);
      if (at < 0) {
        // A partial `http` at the end of a partial text may still become a URL.
        if (src.eof) break;
        at = Math.max(i, src.n - 3);
        if (at >= src.n) break;
      }
      i = at;
      const m = urlAt(src, i);
      if (m === null) {
        i++;
        continue;
      }
      regions?.push({ start: m.start, end: m.end });
      const w = exfilUrlWarning(m.domain, m.pathAndQuery, m.port, allowed);
      if (w !== null)
        flagged.push({
          span: { start: m.start, end: m.end, replacement: `${EXFILTRATION_MARKER_PREFIX}${m.domain}]` },
          warning: w,
        });
      i = m.end;
    }
  } catch (err) {
    if (!isNeedMore(err)) throw err;
    uUrl = i;
  }
  let uMd = src.n;
  const md: Flagged[] = [];
  i = start;
  try {
    for (;;) {
      const at = s.indexOf("](", Math.max(0, i - 1));
      if (at < 0) break;
      i = at + 1; // the `(`
      const t = markdownTargetAt(src, i, allowed);
      if (t === null) {
        i++;
        continue;
      }
      // The target consumes its run: a `](` inside it belongs to this destination.
      regions?.push({ start: i, end: t.end });
      if (t.host !== "")
        md.push({
          span: { start: t.start, end: t.end, replacement: `${EXFILTRATION_MARKER_PREFIX}${t.host}]` },
          warning: `Suspicious markdown link target with ${t.reason}: ${t.host}`,
        });
      i = t.end;
    }
  } catch (err) {
    if (!isNeedMore(err)) throw err;
    uMd = i;
  }
  const { spans, warnings } =
    flagged.length + md.length === 0 ? { spans: [], warnings: [] } : mergeFlagged(flagged, md);
  if (regions === null) return { spans, warnings, cut: text.length };
  for (const sp of spans) regions.push({ start: sp.start, end: sp.end });
  const cut = notInsidePair(text, settleCut(Math.min(uUrl, uMd), regions));
  return { spans: spansBefore(spans, cut), warnings, cut };
}

/**
 * Combines URL verdicts (sorted, disjoint) with flagged markdown targets (sorted,
 * disjoint). Overlapping items become one span; a cluster holding a reference-rule
 * URL keeps that URL's tag and warnings, otherwise the markdown target's.
 */
export function mergeFlagged(urls: Flagged[], md: Flagged[]): { spans: RedactionSpan[]; warnings: string[] } {
  const all = urls.concat(md).sort(flaggedByStart);
  const spans: RedactionSpan[] = [];
  const warnings: string[] = [];
  let k = 0;
  while (k < all.length) {
    const first = all[k] as Flagged;
    let end = first.span.end;
    let j = k + 1;
    while (j < all.length && (all[j] as Flagged).span.start < end)
      end = Math.max(end, (all[j++] as Flagged).span.end);
    const cluster = all.slice(k, j);
    const refs = cluster.filter(isUrlVerdict);
    const lead = refs[0] ?? first;
    spans.push({ start: first.span.start, end, replacement: lead.span.replacement });
    for (const f of refs.length > 0 ? refs : cluster) warnings.push(f.warning);
    k = j;
  }
  return { spans, warnings };
}

export function isUrlVerdict(f: Flagged): boolean {
  return !f.warning.startsWith("Suspicious markdown");
}

export function flaggedByStart(a: Flagged, b: Flagged): number {
  return a.span.start - b.span.start;
}

/**
 * Outbound local-file extraction (layer: messaging, channel-neutral). An agent that draws a chart writes
 * `![chart](/work/chart.png)` into its reply; a chat channel would deliver that path as text. This module
 * decides which local image references are safe to send, reads each one ONCE into an OutboundFile, rewrites
 * the text without them and reports every refusal. The upload itself stays with each transport, which
 * sends `OutboundFile.bytes` and never re-opens `path`: every gate below applied to one inode, and a path
 * resolved a second time could name a different file by then.
 *
 * Imports: node fs/path, ./raster.js (the one raster table), ./split.js (the one fence parser),
 * ./security (the one credential/beacon scanner). Pinned by test/messaging/outbound-files.test.ts.
 */
import type { Stats } from "node:fs";
import { constants, type FileHandle, lstat, open, readlink, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ParleyError } from "../base/errors.js";
import { redactCredentials, redactExfiltrationUrls } from "../security/index.js";
import { iterFenceSpans } from "../text/split.js";
import { type RasterMime, sniffRasterMime } from "./image-sniff.js";

/** One complete image reference with a local destination, as written in the reply. */
export interface LocalRef {
  /** UTF-16 offsets of the whole `![alt](dest …)` markup. */
  start: number;
  end: number;
  /** Alt text with Markdown backslash escapes removed. */
  alt: string;
  /** Destination with escapes removed: a path (absolute, or relative to the root) or a file: URL. */
  dest: string;
}

export interface OutboundFile {
  ref: LocalRef;
  /** Provenance only (logs, refusal lines); transports MUST NOT open it again. */
  path: string;
  alt: string;
  mime: RasterMime;
  /** The validated bytes, read once from the descriptor every gate was applied to. */
  bytes: Uint8Array;
  /** Safe Content-Disposition name, see uploadFilename. */
  filename: string;
}

export type RejectionReason =
  | "no_root"
  | "invalid_path"
  | "outside_root"
  | "sensitive_path"
  | "not_found"
  | "symlink"
  | "hardlink"
  | "not_regular_file"
  | "changed_during_check"
  | "too_large"
  | "over_total_budget"
  | "not_raster"
  | "unreadable"
  | "too_many_refs";

export interface Rejection {
  ref: LocalRef;
  reason: RejectionReason;
  /** User-facing prose; names no path (the markup stays visible in the text instead). */
  message: string;
}

export interface OutboundLimits {
  /** References EXAMINED per message, accepted or not: bounds filesystem work and the rejection list. */
  maxFiles: number;
  /** Aggregate bytes read per message; it is the memory bound, so it caps the read itself. */
  maxTotalBytes: number;
  /** Per-file read ceiling, for a channel whose per-file limit sits below the aggregate. */
  maxFileBytes: number;
}

export const DEFAULT_OUTBOUND_LIMITS: Readonly<OutboundLimits> = Object.freeze({
  maxFiles: 10,
  maxTotalBytes: 25 * 1024 * 1024,
  maxFileBytes: Number.POSITIVE_INFINITY,
});

export interface ExtractOptions {
  /** The approved root (the agent's actual cwd). Absent, empty or relative: everything is refused. */
  root: string | undefined;
  limits?: Partial<OutboundLimits>;
  /** Test seam: runs after the pre-open checks and right before open(), where a swap race would land. */
  onBeforeOpen?: (path: string) => Promise<void> | void;
}

export interface ExtractResult {
  rewrittenText: string;
  files: OutboundFile[];
  rejections: Rejection[];
}

// Scan bounds: a destination or title longer than this is not a file reference anyone wrote on purpose,
// and bounding each scan keeps adversarial markup from making the scan quadratic.
const MAX_DEST = 2048;
const MAX_TITLE = 512;

// ---------------------------------------------------------------------------------------------------
// Code regions: a reference inside a fence or balanced inline code is literal text, not an image.
// ---------------------------------------------------------------------------------------------------

type Span = [number, number];

interface CodeRegions {
  /** Fenced blocks, from the project's one fence parser; each also ends a paragraph. */
  fences: Span[];
  /** Fences plus balanced inline code spans, sorted and disjoint. */
  all: Span[];
}

function codeRegions(text: string): CodeRegions {
  const fences = Array.from(iterFenceSpans(text), ([s, e]): Span => [s, e]);
  const all: Span[] = [...fences];
  let segStart = 0;
  // Inline code cannot cross a fence or a paragraph break, so each prose segment is masked on its own.
  for (const [s, e] of [...fences, [text.length, text.length] as Span]) {
    for (const seg of paragraphs(text, segStart, s)) all.push(...inlineCodeSpans(text, seg[0], seg[1]));
    segStart = Math.max(segStart, e);
  }
  return { fences, all: all.sort((a, b) => a[0] - b[0]) };
}

function paragraphs(text: string, from: number, to: number): Span[] {
  const out: Span[] = [];
  const blank = /\n[ \t]*\n/g;
  blank.lastIndex = from;
  let start = from;
  for (let m = blank.exec(text); m !== null && m.index < to; m = blank.exec(text)) {
    out.push([start, m.index]);
    start = m.index + m[0].length;
  }
  if (start < to) out.push([start, to]);
  return out;
}

/** CommonMark code spans: a run of N backticks closes at the next run of exactly N, else it is literal. */
function inlineCodeSpans(text: string, from: number, to: number): Span[] {
  const runs: Span[] = [];
  const byLen = new Map<number, number[]>();
  for (let i = from; i < to; ) {
    if (text[i] !== "`") {
      i++;
      continue;
    }
    let j = i;
    while (j < to && text[j] === "`") j++;
    const list = byLen.get(j - i) ?? [];
    list.push(runs.length);
    byLen.set(j - i, list);
    runs.push([i, j]);
    i = j;
  }
  const out: Span[] = [];
  for (let k = 0; k < runs.length; k++) {
    const [rs, re] = runs[k]!;
    // A backslash outside code escapes the first backtick only, so the opener is the rest of the run.
    const start = isEscaped(text, rs) ? rs + 1 : rs;
    const closer = start < re ? nextRunOfLength(byLen.get(re - start), k) : undefined;
    if (closer === undefined) continue;
    out.push([start, runs[closer]![1]]);
    k = closer;
  }
  return out;
}

function nextRunOfLength(indices: number[] | undefined, after: number): number | undefined {
  if (indices === undefined) return undefined;
  let lo = 0;
  let hi = indices.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (indices[mid]! <= after) lo = mid + 1;
    else hi = mid;
  }
  return indices[lo];
}

function isEscaped(text: string, i: number): boolean {
  let n = 0;
  for (let k = i - 1; k >= 0 && text[k] === "\\"; k--) n++;
  return n % 2 === 1;
}

/** Does [start, end) touch any of the sorted, disjoint spans? Binary search on their ends. */
function overlapsAny(spans: Span[], start: number, end: number): boolean {
  let lo = 0;
  let hi = spans.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (spans[mid]![1] <= start) lo = mid + 1;
    else hi = mid;
  }
  return lo < spans.length && spans[lo]![0] < end;
}

// ---------------------------------------------------------------------------------------------------
// The reference scan.
// ---------------------------------------------------------------------------------------------------

type Scan =
  | { kind: "complete"; close: number; end: number; alt: string; dest: string }
  | { kind: "open" | "malformed" };

/**
 * `[`→`]` partners for the whole text in one pass, so alt text is never re-scanned per opener. A blank
 * line or a fence ends a paragraph and with it every pending bracket (MALFORMED); a bracket still pending
 * at the end of the text is OPEN, because a streaming reply may not have sent its `]` yet.
 */
const MALFORMED = -1;
const OPEN = -2;
const NL = 10;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
function bracketPartners(text: string, code: CodeRegions): Int32Array {
  // Typed array rather than a Map: this pass touches every bracket of a possibly adversarial reply.
  const partner = new Int32Array(text.length).fill(MALFORMED);
  let stack: number[] = [];
  const fenceStarts = new Set(code.fences.map(([s]) => s));
  let c = 0;
  for (let i = 0; i < text.length; i++) {
    while (c < code.all.length && code.all[c]![1] <= i) c++;
    const region = code.all[c];
    if (region !== undefined && region[0] <= i) {
      if (fenceStarts.has(region[0])) stack = [];
      i = region[1] - 1;
      continue;
    }
    const ch = text.charCodeAt(i);
    if (ch === NL && isBlankLineAt(text, i + 1)) stack = [];
    else if (ch === OPEN_BRACKET && !isEscaped(text, i)) stack.push(i);
    else if (ch === CLOSE_BRACKET && !isEscaped(text, i) && stack.length > 0) partner[stack.pop()!] = i;
  }
  for (const p of stack) partner[p] = OPEN;
  return partner;
}

function isBlankLineAt(text: string, i: number): boolean {
  while (i < text.length && (text[i] === " " || text[i] === "\t")) i++;
  return text[i] === "\n";
}

function scanImage(text: string, bang: number, partners: Int32Array): Scan {
  const close = partners[bang + 1] ?? MALFORMED;
  if (close === OPEN) return { kind: "open" };
  if (close === MALFORMED) return { kind: "malformed" };
  const alt = unescapeMarkdown(text.slice(bang + 2, close));
  let i = close + 1;
  if (i >= text.length) return { kind: "open" };
  if (text[i] !== "(") return { kind: "malformed" };
  i = skipSpace(text, i + 1);
  const dest = scanDest(text, i);
  if (dest.kind !== "ok") return dest;
  i = skipSpace(text, dest.end);
  if (i >= text.length) return { kind: "open" };
  if (text[i] !== ")") {
    // A title needs whitespace before it; its text is not used, only skipped.
    if (i === dest.end) return { kind: "malformed" };
    const end = scanTitle(text, i);
    if (typeof end !== "number") return end;
    i = skipSpace(text, end);
    if (i >= text.length) return { kind: "open" };
    if (text[i] !== ")") return { kind: "malformed" };
  }
  return { kind: "complete", close, end: i + 1, alt, dest: unescapeMarkdown(dest.raw) };
}

/** Spaces and tabs, and at most one line break (CommonMark allows one inside the parentheses). */
function skipSpace(text: string, i: number): number {
  let newlines = 0;
  for (; i < text.length; i++) {
    if (text[i] === "\n" && newlines++ === 0) continue;
    if (text[i] !== " " && text[i] !== "\t") break;
  }
  return i;
}

type DestScan = { kind: "ok"; raw: string; end: number } | { kind: "open" | "malformed" };

/** `<dest>` or a bare run without whitespace, parentheses balanced, backslash escapes honoured. */
function scanDest(text: string, i: number): DestScan {
  if (i >= text.length) return { kind: "open" };
  const angle = text[i] === "<";
  let depth = 0;
  for (let j = angle ? i + 1 : i; ; j++) {
    if (j - i > MAX_DEST) return { kind: "malformed" };
    if (j >= text.length) return { kind: "open" };
    const ch = text[j]!;
    // A destination never spans another opener: this keeps a run of adversarial `![](` linear.
    if (ch === "!" && text[j + 1] === "[") return { kind: "malformed" };
    if (ch === "\\") {
      j++;
      continue;
    }
    if (angle) {
      if (ch === ">") return { kind: "ok", raw: text.slice(i + 1, j), end: j + 1 };
      if (ch === "<" || ch === "\n") return { kind: "malformed" };
      continue;
    }
    if (ch === "(") depth++;
    else if (ch === ")" && depth > 0) depth--;
    else if (ch === ")" || ch === " " || ch === "\t" || ch === "\n") {
      if (ch !== ")" && depth > 0) return { kind: "malformed" };
      return j === i ? { kind: "malformed" } : { kind: "ok", raw: text.slice(i, j), end: j };
    } else if (ch < " ") return { kind: "malformed" };
  }
}

function scanTitle(text: string, i: number): number | { kind: "open" | "malformed" } {
  const opener = text[i];
  const closer = opener === "(" ? ")" : opener;
  if (opener !== '"' && opener !== "'" && opener !== "(") return { kind: "malformed" };
  for (let j = i + 1; ; j++) {
    if (j - i > MAX_TITLE) return { kind: "malformed" };
    if (j >= text.length) return { kind: "open" };
    if (text[j] === "\\") j++;
    else if (text[j] === "!" && text[j + 1] === "[") return { kind: "malformed" };
    else if (text[j] === closer) return j + 1;
  }
}

function unescapeMarkdown(s: string): string {
  return s.replace(/\\([!-/:-@[-`{-~])/g, "$1");
}

/** Remote, data:, protocol-relative and anchor destinations are not ours; file: URLs and paths are. */
function isLocalDest(dest: string): boolean {
  if (dest === "" || dest.startsWith("//") || dest.startsWith("#")) return false;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(dest);
  return scheme === null || scheme[1]!.toLowerCase() === "file";
}

interface ScanAll {
  refs: LocalRef[];
  openStart: number | null;
}

function scanAll(text: string): ScanAll {
  const regions = codeRegions(text);
  const code = regions.all;
  const partners = bracketPartners(text, regions);
  const refs: LocalRef[] = [];
  let pos = 0;
  while (pos < text.length) {
    const bang = text.indexOf("!", pos);
    if (bang < 0) break;
    pos = bang + 1;
    if (isEscaped(text, bang) || overlapsAny(code, bang, bang + 1)) continue;
    // A trailing `!` may be the first byte of markup still arriving: a cut there would orphan it.
    if (bang === text.length - 1) return { refs, openStart: bang };
    if (text[bang + 1] !== "[") continue;
    const scan = scanImage(text, bang, partners);
    if (scan.kind === "open") return { refs, openStart: bang };
    // Code may sit inside the alt text, but a code span over `](dest)` binds tighter than the image.
    if (scan.kind !== "complete" || overlapsAny(code, scan.close, scan.end)) continue;
    if (isLocalDest(scan.dest)) refs.push({ start: bang, end: scan.end, alt: scan.alt, dest: scan.dest });
    pos = scan.end;
  }
  return { refs, openStart: null };
}

/** Every complete local image reference decidable from the text alone, in order. */
export function iterLocalRefs(text: string): LocalRef[] {
  return scanAll(text).refs;
}

/** Where image markup opens and never closes (it owns the rest of the text), or null. */
export function openRefStart(text: string): number | null {
  return scanAll(text).openStart;
}

/** The single answer to "where is image markup": complete local refs plus an unterminated opener. */
export function protectedRefSpans(text: string): Array<[number, number]> {
  const { refs, openStart } = scanAll(text);
  const spans: Array<[number, number]> = refs.map((r) => [r.start, r.end]);
  if (openStart !== null) spans.push([openStart, text.length]);
  return spans;
}

/**
 * Live-frame cut for a streaming channel: no path flashes and then vanishes. Deliberately more
 * permissive than extraction; a hidden ref that extraction later refuses reappears in the sealed text.
 */
export function hideLocalRefs(text: string): string {
  let out = "";
  let pos = 0;
  for (const [s, e] of protectedRefSpans(text)) {
    out += text.slice(pos, s);
    pos = e;
  }
  return out + text.slice(pos);
}

// ---------------------------------------------------------------------------------------------------
// The security floor, applied per reference: reply text is LLM-authored and may be prompt-injected.
// ---------------------------------------------------------------------------------------------------

const SENSITIVE_DIRS = new Set([".ssh", ".gnupg", ".aws", ".kube", ".docker", ".azure", ".password-store"]);
const SENSITIVE_NAMES = new Set([
  ...[".netrc", "_netrc", ".npmrc", ".pypirc", ".pgpass", ".git-credentials", ".htpasswd", ".history"],
  ...["authorized_keys", "known_hosts", "shadow", "gshadow"],
]);
const SENSITIVE_PATTERNS = [
  /^id_(rsa|dsa|ecdsa|ed25519)(_sk)?(\.pub)?$/,
  /^\.env(\..*)?$/,
  /\.env$/,
  /credentials?(\.[a-z0-9]+)?$/,
  /_history$/,
  /^\.lesshst$/,
  /\.(pem|key|p12|pfx|jks|keystore|kdbx|ppk|asc|gpg)$/,
];

/** Credential-shaped paths are refused by name, before and after open, whatever their bytes. */
export function isSensitivePath(p: string): boolean {
  const parts = p.split(/[\\/]+/).map((s) => s.toLowerCase());
  const base = parts[parts.length - 1] ?? "";
  for (let i = 0; i < parts.length; i++) {
    if (SENSITIVE_DIRS.has(parts[i]!)) return true;
    if (parts[i] === ".config" && (parts[i + 1] === "gcloud" || parts[i + 1] === "gh")) return true;
  }
  return SENSITIVE_NAMES.has(base) || SENSITIVE_PATTERNS.some((re) => re.test(base));
}

function isWithin(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}

interface Root {
  lexical: string;
  real: string;
}

async function resolveRoot(root: string | undefined): Promise<Root | null> {
  // No root, or a relative one, means there is no boundary to check a reference against.
  if (root === undefined || root === "" || !path.isAbsolute(root)) return null;
  try {
    return { lexical: path.resolve(root), real: await realpath(root) };
  } catch (err) {
    if (isErrno(err)) return null;
    throw err;
  }
}

function isErrno(err: unknown): err is NodeJS.ErrnoException {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).code === "string";
}

function toPath(dest: string, root: string): string | null {
  if (dest.includes("\0")) return null;
  if (/^file:/i.test(dest)) {
    try {
      return fileURLToPath(dest);
    } catch (err) {
      if (err instanceof TypeError) return null;
      throw err;
    }
  }
  return path.resolve(root, dest);
}

type Refusal = { reason: RejectionReason; message: string };
type Admitted = { path: string; mime: RasterMime; bytes: Uint8Array };

const refuse = (reason: RejectionReason, message: string): Refusal => ({
  reason,
  message: `not sent: ${message}`,
});
const OUTSIDE = "the file is outside the agent's working folder";
const SENSITIVE = "the path looks like a secret or credential";
const CHANGED = "the file changed while being checked";

function fileKind(st: Stats): string {
  if (st.isDirectory()) return "a directory";
  if (st.isFIFO()) return "a FIFO";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "a device";
  return "not a regular file";
}

/** The realpath of what the descriptor actually names, so a swapped parent directory cannot hide. */
async function descriptorRealPath(fh: FileHandle, opened: string, dev: number, ino: number): Promise<string> {
  try {
    return await readlink(`/proc/self/fd/${fh.fd}`);
  } catch (err) {
    if (!isErrno(err)) throw err;
  }
  // No /proc (macOS, BSD): resolve the name again and prove it still names the opened inode.
  const real = await realpath(opened);
  const st = await stat(real);
  if (st.dev !== dev || st.ino !== ino) throw new RaceError();
  return real;
}

class RaceError extends Error {}

const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

async function admit(
  ref: LocalRef,
  root: Root,
  maxFileBytes: number,
  remaining: number,
  onBeforeOpen: ExtractOptions["onBeforeOpen"],
): Promise<Admitted | Refusal> {
  const candidate = toPath(ref.dest, root.lexical);
  if (candidate === null) return refuse("invalid_path", "the destination is not a usable file path");
  // Lexical containment comes before any metadata probe, so nothing outside the root is even stat'ed.
  if (!isWithin(candidate, root.lexical) && !isWithin(candidate, root.real)) {
    return refuse("outside_root", OUTSIDE);
  }
  if (isSensitivePath(candidate)) return refuse("sensitive_path", SENSITIVE);
  let pre: Stats;
  try {
    pre = await lstat(candidate);
  } catch (err) {
    return errnoRefusal(err);
  }
  // Refused before open so a FIFO or device is never opened (opening either can block or have effects).
  if (pre.isSymbolicLink()) return refuse("symlink", "the path is a symbolic link");
  if (!pre.isFile()) return refuse("not_regular_file", `the path is ${fileKind(pre)}`);
  await onBeforeOpen?.(candidate);
  let fh: FileHandle;
  try {
    // O_NOFOLLOW refuses a final-component symlink; O_NONBLOCK keeps a FIFO swapped in from hanging open().
    fh = await open(candidate, OPEN_FLAGS);
  } catch (err) {
    if (isErrno(err) && err.code === "ELOOP") return refuse("symlink", "the path is a symbolic link");
    return errnoRefusal(err);
  }
  try {
    return await checkAndRead(fh, candidate, pre, root, maxFileBytes, remaining);
  } finally {
    await fh.close();
  }
}

async function checkAndRead(
  fh: FileHandle,
  candidate: string,
  pre: { dev: number; ino: number },
  root: Root,
  maxFileBytes: number,
  remaining: number,
): Promise<Admitted | Refusal> {
  // Every check below is on the OPENED descriptor: the name may have been swapped since lstat.
  const st = await fh.stat();
  if (!st.isFile()) return refuse("not_regular_file", `the path is ${fileKind(st)}`);
  let real: string;
  try {
    real = await descriptorRealPath(fh, candidate, st.dev, st.ino);
  } catch (err) {
    return err instanceof RaceError ? refuse("changed_during_check", CHANGED) : errnoRefusal(err);
  }
  if (!isWithin(real, root.real)) return refuse("outside_root", OUTSIDE);
  if (st.dev !== pre.dev || st.ino !== pre.ino) return refuse("changed_during_check", CHANGED);
  // A hard link makes the file reachable under names no gate saw (a hardlinked secret keeps its bytes).
  if (st.nlink !== 1) return refuse("hardlink", "the file has more than one hard link");
  if (isSensitivePath(real)) return refuse("sensitive_path", SENSITIVE);
  // Size gates come before allocation: an oversize file is refused, never read.
  if (st.size > maxFileBytes)
    return refuse("too_large", `the file exceeds the ${formatBytes(maxFileBytes)} limit`);
  if (st.size > remaining) {
    return refuse("over_total_budget", "this message's upload budget is already used by earlier files");
  }
  const bytes = await readBounded(fh, st.size);
  if (bytes === null) return refuse("changed_during_check", "the file grew while being read");
  const mime = sniffRasterMime(bytes);
  // Type comes from the leading bytes, never the suffix: a script named .png is refused, SVG has no signature.
  if (mime === null) return refuse("not_raster", "the file is not a PNG, JPEG, GIF, WebP or BMP image");
  return { path: candidate, mime, bytes };
}

/** Reads at most `size` bytes (already within budget); one extra byte detects growth after fstat. */
async function readBounded(fh: FileHandle, size: number): Promise<Uint8Array | null> {
  const buf = new Uint8Array(size + 1);
  let got = 0;
  while (got < buf.length) {
    const { bytesRead } = await fh.read(buf, got, buf.length - got, got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got > size ? null : buf.subarray(0, got);
}

function errnoRefusal(err: unknown): Refusal {
  if (!isErrno(err)) throw err;
  if (err.code === "ENOENT" || err.code === "ENOTDIR") return refuse("not_found", "the file does not exist");
  if (err.code === "ELOOP") return refuse("symlink", "the path goes through a symbolic link loop");
  return refuse("unreadable", `the file could not be read (${err.code})`);
}

function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${Math.round((n / (1024 * 1024)) * 10) / 10} MiB`;
  if (n >= 1024) return `${Math.round((n / 1024) * 10) / 10} KiB`;
  return `${n} bytes`;
}

function resolveLimits(partial: Partial<OutboundLimits> | undefined): OutboundLimits {
  const limits = { ...DEFAULT_OUTBOUND_LIMITS, ...partial };
  for (const [key, value] of Object.entries(limits)) {
    if (!(value >= 0)) throw new ParleyError("CONFIG_INVALID", `outbound limit ${key} must be >= 0`);
  }
  return limits;
}

/**
 * Pull local image references out of a reply. Every refused reference keeps its markup so the path
 * stays visible; accepted ones are cut from the text (a line left blank by the cut goes with it).
 */
export async function extractLocalRefs(text: string, opts: ExtractOptions): Promise<ExtractResult> {
  const limits = resolveLimits(opts.limits);
  const refs = iterLocalRefs(text);
  const files: OutboundFile[] = [];
  const rejections: Rejection[] = [];
  if (refs.length === 0) return { rewrittenText: text, files, rejections };
  const root = await resolveRoot(opts.root);
  // A file bigger than the whole aggregate could never fit: that is too_large, not a spent budget.
  const perFile = Math.min(limits.maxFileBytes, limits.maxTotalBytes);
  let used = 0;
  for (const [i, ref] of refs.entries()) {
    if (i >= limits.maxFiles) {
      // One summary line, not one per reference: the cap also bounds the rejection list.
      const more = refs.length - i;
      rejections.push({
        ref,
        reason: "too_many_refs",
        message: `not sent: ${more} more image reference(s) beyond the ${limits.maxFiles}-per-message limit`,
      });
      break;
    }
    if (root === null) {
      rejections.push({
        ref,
        ...refuse("no_root", "no approved working folder is set for this conversation"),
      });
      continue;
    }
    const remaining = limits.maxTotalBytes - used;
    const got = await admit(ref, root, perFile, remaining, opts.onBeforeOpen);
    if ("reason" in got) {
      rejections.push({ ref, ...got });
      continue;
    }
    used += got.bytes.length;
    const base = { ref, path: got.path, alt: ref.alt, mime: got.mime, bytes: got.bytes };
    files.push({ ...base, filename: uploadFilename(base, files.length) });
  }
  return { rewrittenText: cutRefs(text, files), files, rejections };
}

function cutRefs(text: string, files: OutboundFile[]): string {
  let out = "";
  let pos = 0;
  for (const { start, end } of files.map((f) => f.ref)) {
    const lineStart = text.lastIndexOf("\n", start - 1) + 1;
    const nl = text.indexOf("\n", end);
    const lineEnd = nl < 0 ? text.length : nl;
    const alone = /^[ \t]*$/.test(text.slice(lineStart, start)) && /^[ \t]*$/.test(text.slice(end, lineEnd));
    const whole = alone && lineStart >= pos;
    let [s, e] = whole ? [lineStart, nl < 0 ? lineEnd : nl + 1] : [start, end];
    // An image paragraph between blank lines takes one blank line with it, so no gap doubles.
    const blankBefore = s === 0 || text.slice(text.lastIndexOf("\n", s - 2) + 1, s - 1).trim() === "";
    if (whole && blankBefore && isBlankLineAt(text, e)) e = text.indexOf("\n", e) + 1;
    out += text.slice(pos, s);
    pos = e;
  }
  out += text.slice(pos);
  return out.trim() === "" ? "" : out;
}

const MIME_EXT: Record<RasterMime, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/bmp": "bmp",
};

/**
 * The name a transport puts in Content-Disposition. The path came from LLM-authored text, so only a
 * sanitized basename survives, the extension follows the SNIFFED type (not the written suffix), and a
 * name still shaped like a credential or a beacon URL, before or after the cut, is replaced outright.
 */
export function uploadFilename(file: { path: string; mime: RasterMime }, index: number): string {
  const ext = MIME_EXT[file.mime];
  const fallback = `image-${index + 1}.${ext}`;
  const source = path.basename(file.path.replace(/\\/g, "/"));
  const stem = source
    .replace(/\.[^.]*$/, "")
    .replace(/[^A-Za-z0-9._-]+/g, "_")
    .replace(/^[._-]+/, "")
    .slice(0, 64);
  if (stem === "") return fallback;
  const name = `${stem}.${ext}`;
  return looksSecret(source) || looksSecret(name) ? fallback : name;
}

function looksSecret(s: string): boolean {
  return redactCredentials(s).text !== s || redactExfiltrationUrls(s).text !== s;
}

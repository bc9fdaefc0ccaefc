/**
 * Channel-neutral inbound attachment ingest (layer: messaging). A channel maps its platform descriptor
 * onto `Attachment` (a name, a declared type, a byte source) and this module owns everything else:
 * per-kind caps enforced on bytes READ, classification by signature, text injection limits, and the temp
 * files, which belong to the frame that awaits the turn and are deleted in its finally, even when the
 * turn throws or is aborted. Ingest runs after the busy check, never at arrival: a queued message's
 * prompt would otherwise name files deleted before the drained turn read them.
 *
 * Imports: node fs/os/path, ./raster.js (the one raster table, shared with outbound extraction).
 * Pinned by test/messaging/attachments.test.ts.
 */
import { type FileHandle, mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ParleyError } from "../base/errors.js";
import type { Logger } from "../base/logger.js";
import { redactAll } from "../security/index.js";
import { SNIFF_BYTES, sniffRasterMime } from "./image-sniff.js";

export type AttachmentKind = "image" | "audio" | "video" | "document" | "text";

/** One inbound file as a channel hands it over. Name, type and size are the sender's CLAIMS. */
export interface Attachment {
  name: string;
  mimeType?: string;
  /** Declared size: used only to refuse before fetching, never trusted as the bound. */
  size?: number;
  /** The bytes, pulled lazily; called at most once. Should stop when `signal` aborts. */
  read(signal: AbortSignal): AsyncIterable<Uint8Array>;
}

export interface IngestLimits {
  /** Attachments ingested per turn; the rest are refused (a queue may carry them to the next turn). */
  maxAttachments: number;
  maxImageBytes: number;
  maxAudioBytes: number;
  maxVideoBytes: number;
  maxDocumentBytes: number;
  /** Bytes of a text file read into gateway memory. Not a transport ceiling: do not raise it to one. */
  maxTextBytes: number;
  /** Characters of that text that may reach the prompt. */
  maxTextInject: number;
}

export const DEFAULT_INGEST_LIMITS: Readonly<IngestLimits> = Object.freeze({
  maxAttachments: 10,
  maxImageBytes: 20 * 1024 * 1024,
  maxAudioBytes: 25 * 1024 * 1024,
  maxVideoBytes: 50 * 1024 * 1024,
  maxDocumentBytes: 25 * 1024 * 1024,
  maxTextBytes: 1024 * 1024,
  maxTextInject: 32_000,
});

export interface IngestedAttachment {
  /** Position in the input list, so a refusal and a file can be matched back to the message. */
  index: number;
  /** The sender's name, for display; the temp path carries a sanitized form. */
  name: string;
  /** Temp file; valid only inside the withIngestedAttachments callback. */
  path: string;
  kind: AttachmentKind;
  /** Decided by signature; the declared type is kept only for the record. */
  mime: string;
  declaredMime: string | undefined;
  /** Bytes actually read. */
  size: number;
  /** Text kind only: the decoded text, cut to maxTextInject characters. */
  text?: string;
  textTruncated?: boolean;
}

export type IngestRefusalReason =
  | "too_many_attachments"
  | "too_large"
  | "empty"
  | "unrecognized_type"
  | "read_failed";

export interface IngestRefusal {
  index: number;
  name: string;
  reason: IngestRefusalReason;
  message: string;
}

export interface IngestResult {
  files: IngestedAttachment[];
  refusals: IngestRefusal[];
}

export interface IngestOptions {
  /** Aborting stops reading, stops awaiting `fn`, and still deletes every temp file. */
  signal?: AbortSignal;
  /** Parent of the private temp dir (default: os.tmpdir()). */
  tmpRoot?: string;
  logger?: Logger;
}

// ---------------------------------------------------------------------------------------------------
// Classification: leading bytes decide the kind, never the declared type or the file name.
// ---------------------------------------------------------------------------------------------------

// Enough for every signature below (WebM's doctype sits within the first few dozen bytes).
const HEAD_BYTES = Math.max(64, SNIFF_BYTES);

export interface Classification {
  kind: AttachmentKind;
  mime: string;
}

const ascii = (b: Uint8Array, at: number, s: string): boolean =>
  b.length >= at + s.length && [...s].every((ch, i) => b[at + i] === ch.charCodeAt(0));

const ZIP_BY_EXT: Record<string, string> = {
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  odt: "application/vnd.oasis.opendocument.text",
  ods: "application/vnd.oasis.opendocument.spreadsheet",
  epub: "application/epub+zip",
};
const OLE_BY_EXT: Record<string, string> = {
  doc: "application/msword",
  xls: "application/vnd.ms-excel",
  ppt: "application/vnd.ms-powerpoint",
};
const TEXTY_APPLICATION = new Set([
  "application/json",
  "application/xml",
  "application/yaml",
  "application/x-yaml",
  "application/toml",
  "application/javascript",
  "application/x-sh",
]);

/**
 * Classify by signature. A container's name may refine WITHIN its signature (a ZIP named .docx), but can
 * never move a file to another kind. No signature and valid UTF-8 without NUL is text (refined at the end
 * of the read); anything else is refused.
 */
export function classifyBytes(head: Uint8Array, name = "", declaredMime?: string): Classification | null {
  const ext = path.extname(name).slice(1).toLowerCase();
  const raster = sniffRasterMime(head);
  if (raster !== null) return { kind: "image", mime: raster };
  if (ascii(head, 0, "%PDF-")) return { kind: "document", mime: "application/pdf" };
  if (ascii(head, 0, "PK\x03\x04")) return { kind: "document", mime: ZIP_BY_EXT[ext] ?? "application/zip" };
  if (ascii(head, 0, "\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1")) {
    return { kind: "document", mime: OLE_BY_EXT[ext] ?? "application/x-ole-storage" };
  }
  if (ascii(head, 0, "{\\rtf")) return { kind: "document", mime: "application/rtf" };
  if (ascii(head, 0, "OggS")) return { kind: "audio", mime: "audio/ogg" };
  if (ascii(head, 0, "fLaC")) return { kind: "audio", mime: "audio/flac" };
  if (ascii(head, 0, "#!AMR")) return { kind: "audio", mime: "audio/amr" };
  if (ascii(head, 0, "ID3")) return { kind: "audio", mime: "audio/mpeg" };
  if (ascii(head, 0, "RIFF") && ascii(head, 8, "WAVE")) return { kind: "audio", mime: "audio/wav" };
  if (ascii(head, 0, "RIFF") && ascii(head, 8, "AVI ")) return { kind: "video", mime: "video/x-msvideo" };
  if (ascii(head, 4, "ftyp")) return classifyIsoMedia(String.fromCharCode(...head.subarray(8, 12)));
  if (ascii(head, 0, "\x1A\x45\xDF\xA3")) {
    const webm = Buffer.from(head).includes("webm");
    return { kind: "video", mime: webm ? "video/webm" : "video/x-matroska" };
  }
  const b0 = head[0] ?? 0;
  const b1 = head[1] ?? 0;
  // MPEG audio frame sync (11 set bits); layer bits 00 are ADTS AAC.
  if (b0 === 0xff && (b1 & 0xe0) === 0xe0) {
    return { kind: "audio", mime: (b1 & 0x06) === 0 ? "audio/aac" : "audio/mpeg" };
  }
  if (!looksLikeTextPrefix(head)) return null;
  return { kind: "text", mime: textMime(declaredMime) };
}

function classifyIsoMedia(brand: string): Classification | null {
  if (/^M4[ABP] $/.test(brand)) return { kind: "audio", mime: "audio/mp4" };
  if (brand === "qt  ") return { kind: "video", mime: "video/quicktime" };
  if (/^3g[p2]/.test(brand)) return { kind: "video", mime: "video/3gpp" };
  // HEIF/AVIF are stills the shared raster table does not admit, not videos.
  if (/^(heic|heix|heim|heis|hevc|mif1|msf1|avif|avis)$/.test(brand)) return null;
  return { kind: "video", mime: "video/mp4" };
}

function looksLikeTextPrefix(head: Uint8Array): boolean {
  if (head.includes(0)) return false;
  try {
    // stream: a multi-byte character cut at the head boundary is not an error yet.
    new TextDecoder("utf-8", { fatal: true }).decode(head, { stream: true });
    return true;
  } catch (err) {
    if (err instanceof TypeError) return false;
    throw err;
  }
}

function textMime(declared: string | undefined): string {
  const base = (declared ?? "").split(";")[0]!.trim().toLowerCase();
  // The declared type may only pick a text subtype; it never makes bytes text.
  return base.startsWith("text/") || TEXTY_APPLICATION.has(base) ? base : "text/plain";
}

// ---------------------------------------------------------------------------------------------------
// Reading one attachment into the private temp dir.
// ---------------------------------------------------------------------------------------------------

const EXT_BY_MIME: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/bmp": "bmp",
  "application/pdf": "pdf",
  "application/zip": "zip",
  "application/rtf": "rtf",
  "application/x-ole-storage": "bin",
  "audio/ogg": "ogg",
  "audio/flac": "flac",
  "audio/amr": "amr",
  "audio/mpeg": "mp3",
  "audio/aac": "aac",
  "audio/wav": "wav",
  "audio/mp4": "m4a",
  "video/x-msvideo": "avi",
  "video/quicktime": "mov",
  "video/3gpp": "3gp",
  "video/mp4": "mp4",
  "video/webm": "webm",
  "video/x-matroska": "mkv",
  ...Object.fromEntries(Object.entries(ZIP_BY_EXT).map(([e, m]) => [m, e])),
  ...Object.fromEntries(Object.entries(OLE_BY_EXT).map(([e, m]) => [m, e])),
};
const EXT_ALIASES: Record<string, string[]> = { jpg: ["jpeg"], mp4: ["m4v"], ogg: ["oga", "opus"] };

/**
 * Downstream parsers pick a decoder by extension, so the temp name's extension must agree with the
 * SNIFFED type: the sender's own suffix survives only when it already does (or, for text, when it is a
 * plain alphanumeric suffix such as .csv or .py). The stem is sanitized: the name is attacker-chosen.
 */
function tempName(index: number, name: string, cls: Classification): string {
  const own = path.extname(name).slice(1).toLowerCase();
  const stem = path
    .basename(name.replace(/\\/g, "/"), path.extname(name))
    .replace(/[^A-Za-z0-9._-]+/g, "_")
    .replace(/^[._-]+/, "")
    .slice(0, 64);
  const canonical = EXT_BY_MIME[cls.mime] ?? "bin";
  const ownFits =
    own === canonical ||
    (EXT_ALIASES[canonical] ?? []).includes(own) ||
    (cls.kind === "text" && /^[a-z0-9]{1,10}$/.test(own));
  const ext = ownFits ? own : cls.kind === "text" ? "txt" : canonical;
  return `${String(index + 1).padStart(2, "0")}-${stem || "attachment"}.${ext}`;
}

function capFor(kind: AttachmentKind, limits: IngestLimits): number {
  switch (kind) {
    case "image":
      return limits.maxImageBytes;
    case "audio":
      return limits.maxAudioBytes;
    case "video":
      return limits.maxVideoBytes;
    case "document":
      return limits.maxDocumentBytes;
    case "text":
      return limits.maxTextBytes;
  }
}

type Outcome = IngestedAttachment | Omit<IngestRefusal, "index" | "name">;

const refusal = (reason: IngestRefusalReason, message: string): Outcome => ({ reason, message });

async function ingestOne(
  dir: string,
  index: number,
  att: Attachment,
  limits: IngestLimits,
  signal: AbortSignal,
  logger: Logger,
): Promise<Outcome> {
  const iterator = att.read(signal)[Symbol.asyncIterator]();
  let done = false;
  let tempPath: string | undefined;
  let fh: FileHandle | undefined;
  let kept = false;
  try {
    const pending: Uint8Array[] = [];
    let got = 0;
    while (got < HEAD_BYTES) {
      const r = await iterator.next();
      if (r.done) {
        done = true;
        break;
      }
      pending.push(r.value);
      got += r.value.length;
    }
    if (got === 0) return refusal("empty", "the file is empty");
    const head = Buffer.concat(pending).subarray(0, HEAD_BYTES);
    const cls = classifyBytes(head, att.name, att.mimeType);
    if (cls === null) return refusal("unrecognized_type", "the file type is not one this agent can read");
    const cap = capFor(cls.kind, limits);
    const over = () => refusal("too_large", `the ${cls.kind} is larger than the ${formatBytes(cap)} limit`);
    // A declared size over the cap is refused before fetching the rest; an honest one saves the read.
    if (att.size !== undefined && att.size > cap) return over();
    tempPath = path.join(dir, tempName(index, att.name, cls));
    // wx: O_EXCL never follows or reuses a planted file; 0600 keeps other local users out.
    fh = await open(tempPath, "wx", 0o600);
    const textChunks: Uint8Array[] = [];
    let size = 0;
    const take = async (chunk: Uint8Array): Promise<boolean> => {
      // The cap is enforced on bytes READ: a declared size or Content-Length is only a claim.
      if (size + chunk.length > cap) return false;
      size += chunk.length;
      // write() may be partial; loop until the whole chunk is on disk.
      for (let off = 0; off < chunk.length; ) off += (await fh!.write(chunk, off)).bytesWritten;
      if (cls.kind === "text") textChunks.push(chunk);
      return true;
    };
    for (const chunk of pending) if (!(await take(chunk))) return over();
    while (!done) {
      signal.throwIfAborted();
      const r = await iterator.next();
      if (r.done) done = true;
      else if (!(await take(r.value))) return over();
    }
    const file: IngestedAttachment = {
      index,
      name: att.name,
      path: tempPath,
      kind: cls.kind,
      mime: cls.mime,
      declaredMime: att.mimeType,
      size,
    };
    if (cls.kind === "text") {
      const text = decodeText(Buffer.concat(textChunks));
      if (text === null)
        return refusal("unrecognized_type", "the file is neither valid UTF-8 text nor a known type");
      Object.assign(file, cutText(text, limits.maxTextInject));
    }
    kept = true;
    return file;
  } catch (err) {
    // An abort is the turn ending, not a bad file: it propagates. Anything else is this file's refusal.
    if (signal.aborted) throw err;
    // Redacted here, once, for every channel: a source's error may quote a URL that carries a token,
    // and this text reaches both the log and the user's refusal line.
    const detail = redactAll(err instanceof Error ? err.message : String(err));
    logger.warn("attachment read failed", { index, error: detail });
    return refusal("read_failed", `the file could not be fetched (${detail})`);
  } finally {
    if (!done) await closeSource(iterator, logger);
    await fh?.close();
    if (!kept && tempPath !== undefined) await rm(tempPath, { force: true });
  }
}

/** Tell the source we stopped early, so a platform download can release its connection. */
async function closeSource(iterator: AsyncIterator<Uint8Array>, logger: Logger): Promise<void> {
  try {
    await iterator.return?.();
  } catch (err) {
    logger.warn("attachment source failed to close", {
      error: err instanceof Error ? err.message : String(err),
    });
  }
}

function decodeText(bytes: Uint8Array): string | null {
  if (bytes.includes(0)) return null;
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch (err) {
    if (err instanceof TypeError) return null;
    throw err;
  }
}

/** Only maxTextInject characters reach the prompt; never split a surrogate pair at the cut. */
function cutText(text: string, max: number): { text: string; textTruncated: boolean } {
  if (text.length <= max) return { text, textTruncated: false };
  let end = max;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return { text: text.slice(0, end), textTruncated: true };
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${Math.round((n / (1024 * 1024)) * 10) / 10} MiB` : `${Math.ceil(n / 1024)} KiB`;
}

// ---------------------------------------------------------------------------------------------------
// The owner: temp files live exactly as long as the callback.
// ---------------------------------------------------------------------------------------------------

export function resolveIngestLimits(partial?: Partial<IngestLimits>): IngestLimits {
  const limits = { ...DEFAULT_INGEST_LIMITS, ...partial };
  for (const [key, value] of Object.entries(limits)) {
    if (!(value >= 0)) throw new ParleyError("CONFIG_INVALID", `ingest limit ${key} must be >= 0`);
  }
  return limits;
}

/** Without a logger, warnings still surface as process warnings rather than vanishing. */
const processWarningLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: (message) => process.emitWarning(message, { code: "PARLEY_INGEST" }),
  error: (message) => process.emitWarning(message, { code: "PARLEY_INGEST" }),
};

/**
 * Ingest `attachments` into a private temp dir, run `fn` with the result, and delete the dir in
 * `finally`: after fn resolves, after it throws, and when `opts.signal` aborts (the frame stops awaiting
 * fn, which received the same signal and should stop too). Per-item problems come back as refusals.
 */
export async function withIngestedAttachments<T>(
  attachments: readonly Attachment[],
  limits: Partial<IngestLimits> | undefined,
  fn: (ingested: IngestResult, signal: AbortSignal) => Promise<T>,
  opts: IngestOptions = {},
): Promise<T> {
  const resolved = resolveIngestLimits(limits);
  const signal = opts.signal ?? new AbortController().signal;
  const logger = opts.logger ?? processWarningLogger;
  signal.throwIfAborted();
  // mkdtemp creates the dir 0700: the files are readable by this user only.
  const dir = await mkdtemp(path.join(opts.tmpRoot ?? tmpdir(), "parley-ingest-"));
  try {
    const result: IngestResult = { files: [], refusals: [] };
    const largest = Math.max(
      resolved.maxImageBytes,
      resolved.maxAudioBytes,
      resolved.maxVideoBytes,
      resolved.maxDocumentBytes,
      resolved.maxTextBytes,
    );
    for (const [index, att] of attachments.entries()) {
      signal.throwIfAborted();
      const base = { index, name: att.name };
      if (index >= resolved.maxAttachments) {
        const message = `only ${resolved.maxAttachments} attachments are read per message`;
        result.refusals.push({ ...base, reason: "too_many_attachments", message });
      } else if (att.size !== undefined && att.size > largest) {
        // No kind allows this much, so nothing is fetched at all.
        const message = `the file is larger than the ${formatBytes(largest)} limit`;
        result.refusals.push({ ...base, reason: "too_large", message });
      } else {
        const outcome = await ingestOne(dir, index, att, resolved, signal, logger);
        if ("path" in outcome) result.files.push(outcome);
        else result.refusals.push({ ...base, ...outcome });
      }
    }
    return await untilAborted(fn(result, signal), signal, logger);
  } finally {
    await removeDir(dir, logger);
  }
}

/** Settle with `work`, or reject with the abort reason as soon as `signal` aborts. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal, logger: Logger): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let abandoned = false;
    const onAbort = () => {
      abandoned = true;
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        // After an abort nobody awaits fn any more; a failure other than the abort itself is still logged.
        if (abandoned && err !== signal.reason) {
          logger.warn("ingest callback failed after abort", {
            error: err instanceof Error ? err.message : String(err),
          });
        }
        reject(err);
      },
    );
  });
}

/**
 * Cleanup never throws: the caller is usually propagating the real reason the turn ended, and a cleanup
 * error would replace it. A failure is logged at error level instead, so a stranded file is visible.
 */
async function removeDir(dir: string, logger: Logger): Promise<void> {
  try {
    await rm(dir, { recursive: true, force: true, maxRetries: 2 });
  } catch (err) {
    logger.error("could not delete ingested attachments", {
      dir,
      error: err instanceof Error ? err.message : String(err),
    });
  }
}

/** A byte source over data already in memory (tests, platforms that deliver bytes inline). */
export function bytesAttachment(name: string, bytes: Uint8Array, mimeType?: string): Attachment {
  return {
    name,
    mimeType,
    size: bytes.length,
    async *read() {
      yield bytes;
    },
  };
}

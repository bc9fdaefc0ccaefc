/**
 * Inbound Telegram files: which parts of a message are files (for the transport's normalize), and
 * the byte source the shared ingest reads for one of them. Telegram hands over a file_id, not a
 * URL: only at read time does the source ask getFile (through grammY, so the configured apiRoot,
 * the pacing and the 429 handling apply) for a file_path, then download
 * `<apiRoot>/file/bot<token>/<file_path>`. That URL carries the bot TOKEN, so it is built here and
 * nowhere else, checked to stay on the apiRoot's origin under the token's own file prefix, fetched
 * without redirects, bounded in time and in bytes read, aborted with the turn, and never shown:
 * every error leaving this module is scrubbed of the token before the ingest logs it or quotes it
 * in a refusal line. Caps per kind, classification and temp files belong to
 * messaging/attachments.ts; nothing of that is repeated here.
 */

import type { Timers } from "../messaging/base/clock.js";
import type { InboundAttachment } from "../messaging/channel/transport.js";
import { boundedDownload } from "../messaging/files/bounded-download.js";
import type { Attachment, IngestLimits } from "../messaging/files/ingest.js";
import { DEFAULT_INGEST_LIMITS } from "../messaging/files/ingest.js";
import { apiErrorOf } from "./errors.js";
import { TELEGRAM_MAX_DOWNLOAD_BYTES } from "./limits.js";
import type { TelegramOps, TgFile, TgFileRef, TgMessage, TgPhotoSize } from "./wire.js";

/** grammY's default apiRoot: downloads go to the same server the Bot API calls do. */
export const TELEGRAM_API_ROOT = "https://api.telegram.org";
/** Backstop on bytes read per file, above the 20 MiB the ingest is clamped to (the real bound). */
export const DEFAULT_FETCH_MAX_BYTES = 24 * 1024 * 1024;

const clamp = (n: number) => Math.min(n, TELEGRAM_MAX_DOWNLOAD_BYTES);

/**
 * The shared per-kind caps, clamped to what a bot may download at all: a file declared bigger is
 * refused by the ingest before any request, with the limit that actually applies in its line.
 */
export const TELEGRAM_INGEST_LIMITS: Readonly<Partial<IngestLimits>> = Object.freeze({
  maxImageBytes: clamp(DEFAULT_INGEST_LIMITS.maxImageBytes),
  maxAudioBytes: clamp(DEFAULT_INGEST_LIMITS.maxAudioBytes),
  maxVideoBytes: clamp(DEFAULT_INGEST_LIMITS.maxVideoBytes),
  maxDocumentBytes: clamp(DEFAULT_INGEST_LIMITS.maxDocumentBytes),
  maxTextBytes: clamp(DEFAULT_INGEST_LIMITS.maxTextBytes),
});

// ---------------------------------------------------------------------------------------------------
// Normalize: the files a message carries, as RAW descriptors (the file_id is the ref).
// ---------------------------------------------------------------------------------------------------

/** Display extensions for files Telegram sends without a name (the ingest sniffs the real type). */
const EXT_BY_MIME: Record<string, string> = {
  "image/jpeg": "jpg",
  "image/png": "png",
  "image/gif": "gif",
  "image/webp": "webp",
  "audio/ogg": "ogg",
  "audio/mpeg": "mp3",
  "audio/mp4": "m4a",
  "audio/x-m4a": "m4a",
  "audio/flac": "flac",
  "audio/wav": "wav",
  "audio/x-wav": "wav",
  "video/mp4": "mp4",
  "video/quicktime": "mov",
  "video/webm": "webm",
  "application/pdf": "pdf",
  "application/zip": "zip",
  "text/plain": "txt",
};

function nameFor(stem: string, mime: string | undefined, fallbackExt?: string): string {
  const ext = EXT_BY_MIME[(mime ?? "").split(";")[0]?.trim().toLowerCase() ?? ""] ?? fallbackExt;
  return ext ? `${stem}.${ext}` : stem;
}

/** Telegram lists a photo's sizes smallest first; picked by area so an odd order cannot matter. */
function largestSize(sizes: readonly TgPhotoSize[] | undefined): TgPhotoSize | undefined {
  let best: TgPhotoSize | undefined;
  for (const s of sizes ?? []) if (!best || s.width * s.height >= best.width * best.height) best = s;
  return best;
}

/**
 * The files in one message, in the form every channel hands the ingest. Names: a document, audio,
 * video or animation keeps the sender's file_name; everything else (photos, voice and video notes,
 * unnamed files) gets a plain one by kind (`photo.jpg`, `voice.ogg`, `video-note.mp4`).
 *
 * Stickers are not files here: they are Telegram's emoji (an animated one is a Lottie archive no
 * agent reads, a static one a picture of an emoji), so a sticker-only message stays empty and is
 * dropped, as it always was, instead of spending a turn or a refusal line.
 */
export function inboundFilesOf(m: TgMessage): InboundAttachment[] {
  const out: InboundAttachment[] = [];
  const add = (file: TgFileRef | undefined, name: string, mimeType: string | undefined) => {
    if (typeof file?.file_id !== "string" || file.file_id === "") return;
    out.push({
      name,
      ref: file.file_id,
      ...(mimeType ? { mimeType } : {}),
      ...(typeof file.file_size === "number" ? { size: file.file_size } : {}),
    });
  };
  // Telegram re-encodes every photo as JPEG.
  add(largestSize(m.photo), "photo.jpg", "image/jpeg");
  const animation = m.animation;
  if (animation)
    add(
      animation,
      animation.file_name || nameFor("animation", animation.mime_type, "mp4"),
      animation.mime_type,
    );
  // An animation message repeats its file as `document` (backward compatibility): one file, once.
  else if (m.document)
    add(m.document, m.document.file_name || nameFor("document", m.document.mime_type), m.document.mime_type);
  if (m.audio) add(m.audio, m.audio.file_name || nameFor("audio", m.audio.mime_type), m.audio.mime_type);
  if (m.voice) {
    const mime = m.voice.mime_type ?? "audio/ogg";
    add(m.voice, nameFor("voice", mime, "ogg"), mime);
  }
  if (m.video)
    add(m.video, m.video.file_name || nameFor("video", m.video.mime_type, "mp4"), m.video.mime_type);
  // A round video message: always MP4, never named.
  if (m.video_note) add(m.video_note, "video-note.mp4", "video/mp4");
  return out;
}

/**
 * Names made unique across one turn ("photo.jpg", "photo-2.jpg"): an album or a queued burst would
 * otherwise show the agent, and the user's refusal lines, several files with the same name.
 */
export function distinctNames(files: readonly InboundAttachment[]): InboundAttachment[] {
  const seen = new Map<string, number>();
  return files.map((f) => {
    const n = (seen.get(f.name) ?? 0) + 1;
    seen.set(f.name, n);
    if (n === 1) return f;
    const dot = f.name.lastIndexOf(".");
    const renamed = dot > 0 ? `${f.name.slice(0, dot)}-${n}${f.name.slice(dot)}` : `${f.name}-${n}`;
    return { ...f, name: renamed };
  });
}

// ---------------------------------------------------------------------------------------------------
// The byte source: getFile, then the token-bearing download.
// ---------------------------------------------------------------------------------------------------

export interface TelegramFileOptions {
  /** The bot token: part of every download URL, and therefore scrubbed from every error. */
  token: string;
  /** The Bot API root the channel calls (default Telegram's); downloads go to its origin only. */
  apiRoot?: string | undefined;
  timeoutMs?: number;
  maxBytes?: number;
  timers?: Timers;
  /** Injected for tests; the global fetch otherwise. */
  fetch?: typeof fetch;
}

/** Why a file is not fetched; the message ends up in the user's refusal line (never a URL). */
export class FileDownloadRefused extends Error {}

const TOO_BIG = `Telegram lets bots download files of at most ${TELEGRAM_MAX_DOWNLOAD_BYTES / (1024 * 1024)} MiB`;

/**
 * The download URL for a file_path getFile returned: on the apiRoot's exact origin, under
 * `/file/bot<token>/`, every segment a plain name. A path that could climb out of that prefix (or
 * an absolute one, which a local-mode Bot API server returns for files on its own disk) is refused.
 * The returned URL holds the token: it must go to fetch and nowhere else.
 */
export function fileDownloadUrl(apiRoot: string | undefined, token: string, filePath: string): URL {
  let base: URL;
  try {
    base = new URL((apiRoot ?? TELEGRAM_API_ROOT).replace(/\/+$/, ""));
  } catch {
    throw new FileDownloadRefused("the configured Bot API root is not a URL");
  }
  if (filePath.startsWith("/") || /^[A-Za-z]:[\\/]/.test(filePath))
    throw new FileDownloadRefused("the Bot API server named a path on its own disk, not a download");
  const segments = filePath.split("/");
  if (segments.some((s) => s === "" || s === "." || s === ".." || s.includes("\\")))
    throw new FileDownloadRefused("the file path Telegram gave is not a plain relative path");
  const prefix = `${base.pathname.replace(/\/+$/, "")}/file/bot${token}/`;
  const url = new URL(base.origin);
  url.pathname = prefix + segments.map((s) => encodeURIComponent(s)).join("/");
  if (url.origin !== base.origin || !url.pathname.startsWith(prefix) || url.username || url.password)
    throw new FileDownloadRefused("the file path Telegram gave leaves the Bot API's file server");
  return url;
}

/** The shared ingest's byte source for one Telegram file; nothing is requested until it is read. */
export function telegramAttachment(
  att: InboundAttachment,
  ops: TelegramOps | undefined,
  opts: TelegramFileOptions | undefined,
): Attachment {
  return {
    name: att.name,
    ...(att.mimeType !== undefined ? { mimeType: att.mimeType } : {}),
    ...(att.size !== undefined ? { size: att.size } : {}),
    read: (signal) => scrubbed(download(att, ops, opts, signal), opts?.token),
  };
}

async function* download(
  att: InboundAttachment,
  ops: TelegramOps | undefined,
  opts: TelegramFileOptions | undefined,
  signal: AbortSignal,
): AsyncGenerator<Uint8Array> {
  if (!ops || !opts?.token)
    throw new FileDownloadRefused("this gateway is not set up to download Telegram files");
  // Before any request: Telegram would give no link for it, and the user should hear why.
  if (att.size !== undefined && att.size > TELEGRAM_MAX_DOWNLOAD_BYTES)
    throw new FileDownloadRefused(TOO_BIG);
  const { apiRoot, token } = opts;
  yield* boundedDownload(
    // The lookup shares the download's deadline; the URL (its path holds the token) stays on apiRoot.
    async (bound) => {
      const file = await lookUp(ops, att.ref, bound);
      if (file.file_size !== undefined && file.file_size > TELEGRAM_MAX_DOWNLOAD_BYTES)
        throw new FileDownloadRefused(TOO_BIG);
      if (!file.file_path) throw new FileDownloadRefused("Telegram offered no download for this file");
      return fileDownloadUrl(apiRoot, token, file.file_path);
    },
    signal,
    {
      maxBytes: opts.maxBytes ?? DEFAULT_FETCH_MAX_BYTES,
      ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
      serverName: "Telegram's file server",
      ...(opts.timers ? { timers: opts.timers } : {}),
      ...(opts.fetch ? { fetch: opts.fetch } : {}),
    },
  );
}

/** getFile through grammY; its failures become short, token-free reasons. */
async function lookUp(ops: TelegramOps, fileId: string, signal: AbortSignal): Promise<TgFile> {
  try {
    return await ops.call<TgFile>("getFile", { file_id: fileId }, signal);
  } catch (error) {
    if (signal.aborted && signal.reason instanceof Error) throw signal.reason;
    const api = apiErrorOf(error);
    if (api) throw new Error(`Telegram refused the file (${api.description || `error ${api.code}`})`);
    throw new Error("Telegram could not be reached to look the file up");
  }
}

/** Every error out of the source passes here: the ingest logs it and quotes it to the user. */
async function* scrubbed(
  source: AsyncGenerator<Uint8Array>,
  token: string | undefined,
): AsyncGenerator<Uint8Array> {
  try {
    yield* source;
  } catch (error) {
    throw withoutToken(error, token);
  }
}

/**
 * The error unchanged when neither it nor its causes mention the token (an abort reason keeps its
 * identity); otherwise a plain Error with the token cut out of its message and no cause attached.
 */
export function withoutToken(error: unknown, token: string | undefined): unknown {
  if (!token) return error;
  const forms = [token, encodeURIComponent(token)];
  const leaks = (text: string) => forms.some((f) => text.includes(f));
  let leaked = false;
  let cursor: unknown = error;
  for (let depth = 0; depth < 8 && cursor !== undefined && cursor !== null; depth += 1) {
    const text = cursor instanceof Error ? `${cursor.message}\n${cursor.stack ?? ""}` : String(cursor);
    if (leaks(text)) leaked = true;
    cursor = cursor instanceof Error ? cursor.cause : undefined;
  }
  if (!leaked) return error;
  let message = error instanceof Error ? error.message : String(error);
  for (const f of forms) message = message.split(f).join("<token>");
  return new Error(message);
}

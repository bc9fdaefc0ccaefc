/**
 * The web chat's wire protocol (JSON over one WebSocket per open page). Client frames are validated
 * with zod: a malformed frame gets an error frame and an audited drop, and the connection lives on.
 *
 * Files travel INSIDE the message frame, base64-encoded, rather than through a separate upload
 * endpoint. The socket is already the one authenticated channel (token on the upgrade), so there is
 * no second door to authenticate or to protect from cross-site posts, and no server-side upload store
 * whose unreferenced entries would need expiry: the bytes exist exactly as long as the message that
 * carries them. The price is a third of overhead on the wire and one buffered frame, which the bounds
 * below keep small (the ws maxPayload is derived from them and is no larger than they need).
 */
import { z } from "zod";
import { DEFAULT_INGEST_LIMITS } from "../messaging/files/ingest.js";

/** Files per message: the shared ingest reads no more than this per turn anyway. */
export const MAX_UPLOAD_FILES = DEFAULT_INGEST_LIMITS.maxAttachments;
/** Decoded bytes of all the files of one message together. */
export const MAX_UPLOAD_BYTES = 25 * 1024 * 1024;
/** Characters of a message's text. */
export const MAX_TEXT_CHARS = 20_000;
/** A file name as the browser reports it (display only: the ingest sanitizes what touches disk). */
const MAX_NAME_CHARS = 255;

/** Length of the base64 form of `bytes` bytes (padded). */
export function base64Length(bytes: number): number {
  return Math.ceil(bytes / 3) * 4;
}

/**
 * Room for everything in a message frame besides the file data: 20,000 characters of text even if
 * every one were JSON-escaped (\uXXXX, 6 bytes), ten names and types likewise, and the keys. It is
 * also the frame bound the web chat had before it took files.
 */
const FRAME_OVERHEAD_BYTES = 256 * 1024;

/**
 * The ws maxPayload: the largest legal message frame and no more. A bigger frame closes the socket
 * (close code 1009; the page says so and reconnects), so the page checks the limits before sending.
 */
export const MAX_FRAME_BYTES = base64Length(MAX_UPLOAD_BYTES) + FRAME_OVERHEAD_BYTES;

/**
 * Standard base64, padded. Checked with a flat character class: a grouped pattern recurses per
 * quantum and overflows the regex stack on a 30 MB string.
 */
function isBase64(data: string): boolean {
  return data.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(data);
}

const TOO_MANY_FILES = `at most ${MAX_UPLOAD_FILES} files can be sent with one message`;
const TOO_LARGE = "the files of one message may total at most 25 MiB";
const FILE_TOO_LARGE = "a file is larger than the 25 MiB limit per message";
/** The refusals that are an upload over the limits rather than a malformed frame. */
const UPLOAD_LIMIT_MESSAGES: ReadonlySet<string> = new Set([TOO_MANY_FILES, TOO_LARGE, FILE_TOO_LARGE]);

const uploadSchema = z.strictObject({
  name: z.string().min(1).max(MAX_NAME_CHARS),
  /** The browser's claim, kept for the record only: the shared ingest classifies by the bytes. */
  mime: z.string().max(MAX_NAME_CHARS),
  data: z
    .string()
    .max(base64Length(MAX_UPLOAD_BYTES), FILE_TOO_LARGE)
    .refine(isBase64, "file data is not base64")
    .transform((data) => Buffer.from(data, "base64")),
});
export type Upload = z.output<typeof uploadSchema>;

/**
 * The page's own id for a message it sends: the dedupe key of accept-before-ack. The page keeps a
 * message until the server answers "accepted" with its id, and sends it again after a reconnect;
 * the journal drops the second copy when the first one had arrived.
 */
const CLIENT_MESSAGE_ID = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, "a message id is 1-64 letters, digits, _ or -");

export const clientFrameSchema = z.discriminatedUnion("type", [
  z
    .strictObject({
      type: z.literal("message"),
      id: CLIENT_MESSAGE_ID.optional(),
      text: z.string().max(MAX_TEXT_CHARS),
      /** Attached files; a message may be files only (then text is ""). */
      files: z.array(uploadSchema).max(MAX_UPLOAD_FILES, TOO_MANY_FILES).optional(),
    })
    .refine((m) => m.text.length > 0 || (m.files?.length ?? 0) > 0, "a message needs text or a file")
    .refine((m) => (m.files ?? []).reduce((n, f) => n + f.data.length, 0) <= MAX_UPLOAD_BYTES, TOO_LARGE),
  z.strictObject({
    type: z.literal("press"),
    requestId: z.string().min(1).max(200),
    nonce: z.string().max(200),
    verdict: z.enum(["approve", "approve_always", "deny"]),
  }),
  /** An [OPTIONS:] chip: re-dispatched as content, never as a command. */
  z.strictObject({
    type: z.literal("chip"),
    id: CLIENT_MESSAGE_ID.optional(),
    text: z.string().min(1).max(2_000),
  }),
]);
/** A validated frame: a message's file data is already decoded to bytes. */
export type ClientFrame = z.output<typeof clientFrameSchema>;

/**
 * Why a frame was refused: malformed, of a type the server does not know, an upload over the limits,
 * or a frame over the ws maxPayload (the socket is closed then; the kinds are counted apart).
 */
export interface FrameRefusal {
  kind: "bad_frame" | "unknown_type" | "upload_refused" | "frame_too_large";
  reason: string;
  /** For an unknown type: the type the frame named (clipped), so the drop says which. */
  shape?: string;
}

/** The frame types a page may send. */
const CLIENT_FRAME_TYPES: ReadonlySet<string> = new Set(["message", "press", "chip"]);
/** Characters of an unknown type kept for the record. */
const MAX_SHAPE_CHARS = 64;

/** Parse one client frame's raw text. Never throws. */
export function parseClientFrame(raw: string): { frame: ClientFrame } | { refusal: FrameRefusal } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { refusal: { kind: "bad_frame", reason: "not JSON" } };
  }
  // A frame of a type this server does not speak (a newer page, a probe): named apart from a malformed one.
  const type = (parsed as { type?: unknown } | null)?.type;
  if (typeof type === "string" && !CLIENT_FRAME_TYPES.has(type))
    return {
      refusal: {
        kind: "unknown_type",
        reason: "unknown frame type",
        shape: [...type].slice(0, MAX_SHAPE_CHARS).join(""),
      },
    };
  const result = clientFrameSchema.safeParse(parsed);
  if (result.success) return { frame: result.data };
  const reason = result.error.issues[0]?.message ?? "invalid frame";
  return { refusal: { kind: UPLOAD_LIMIT_MESSAGES.has(reason) ? "upload_refused" : "bad_frame", reason } };
}

export interface BubbleButton {
  label: string;
  verdict: "approve" | "approve_always" | "deny";
  requestId: string;
  nonce: string;
}

export interface Bubble {
  id: string;
  role: "user" | "assistant" | "system" | "receipt" | "approval";
  /** Rendered, sanitized HTML (markdown-it with raw HTML disabled). */
  html: string;
  /** Plain-text source, for history and tests. */
  text: string;
  /** A small status line (tool progress, turn status). Plain text. */
  status?: string;
  buttons?: BubbleButton[];
  chips?: string[];
  /** Names of the files a user message carried (plain text, one line each). */
  files?: string[];
  final: boolean;
}

export type ServerFrame =
  | { type: "snapshot"; conversationId: string; bubbles: Bubble[]; title?: string }
  /** The conversation was named (auto-title or /title). */
  | { type: "title"; title: string }
  | { type: "upsert"; bubble: Bubble }
  /** The message the page sent with this id is journaled: it will be answered, even across a restart. */
  | { type: "accepted"; id: string }
  | { type: "error"; message: string };

/** Conversation ids are chosen by the page; constrained so they are safe in keys and logs. */
export const CONVERSATION_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * What arrived in a WhatsApp message, decided from the protobuf alone: its text, the files it
 * carries (as descriptors; the bytes are fetched by the turn, attachments.ts), the content parley
 * cannot read (a location, a poll, a contact card: a visible note, never silence), who it mentions
 * and what it quotes.
 *
 * Presence is read from the fields actually set, never from truthiness: a decoded protobuf answers
 * every absent field with a default (a zero length, an empty submessage), and reading those as
 * present reports a file that is not there or a length of 0 that nobody declared.
 */
import { getContentType, normalizeMessageContent, proto } from "@whiskeysockets/baileys";
import type { InboundAttachment } from "../messaging/channel/transport.js";
import type { WAMessage } from "./wire.js";

export type MediaKind = "image" | "video" | "audio" | "document" | "sticker";

/** One file as the journal keeps it (in `InboundAttachment.ref`, JSON): enough to fetch it later. */
export interface MediaDescriptor {
  kind: MediaKind;
  directPath: string;
  /** base64 */
  mediaKey: string;
  /** The sender's declared plaintext length; null when the message declares none. */
  declared: number | null;
  mimetype: string;
}

export interface Extracted {
  text: string;
  files: InboundAttachment[];
  /** Content parley cannot read, said to the sender. */
  notes: string[];
  /** JIDs the message mentions (contextInfo.mentionedJid). */
  mentions: string[];
  /** The id of the message it replies to (contextInfo.stanzaId). */
  quotedId: string | undefined;
}

/** True only for a field the message actually carries (own, set, not null). */
export function hasField(obj: object | null | undefined, field: string): boolean {
  if (!obj || !Object.hasOwn(obj, field)) return false;
  const value = (obj as Record<string, unknown>)[field];
  return value !== null && value !== undefined;
}

type Proto = Record<string, unknown>;
const field = (obj: Proto | null | undefined, name: string): Proto | undefined =>
  obj && hasField(obj, name) ? (obj[name] as Proto) : undefined;
const str = (obj: Proto | undefined, name: string): string =>
  obj && hasField(obj, name) && typeof obj[name] === "string" ? (obj[name] as string) : "";

const MEDIA_FIELDS: readonly [string, MediaKind][] = [
  ["imageMessage", "image"],
  ["videoMessage", "video"],
  ["audioMessage", "audio"],
  ["documentMessage", "document"],
  ["stickerMessage", "sticker"],
];

/** What a message of each kind is called when it carries no name of its own. */
const STEM: Readonly<Record<MediaKind, string>> = {
  image: "photo",
  video: "video",
  audio: "audio",
  document: "document",
  sticker: "sticker",
};

const EXT_BY_MIME: Readonly<Record<string, string>> = {
  "image/jpeg": "jpg",
  "image/png": "png",
  "image/webp": "webp",
  "image/gif": "gif",
  "video/mp4": "mp4",
  "audio/ogg": "ogg",
  "audio/mpeg": "mp3",
  "audio/mp4": "m4a",
  "application/pdf": "pdf",
  "text/plain": "txt",
};

/**
 * A file's name: the sender's (basename only: WhatsApp shows whatever `fileName` says, and a path
 * in it means nothing here), with a suffix from the declared type only when it has none. A type
 * with no known suffix adds nothing: `report.pdf.bin` would match no reader.
 */
export function fileNameOf(kind: MediaKind, fileName: string, mimetype: string, voice: boolean): string {
  const base = fileName.split(/[\\/]/).pop()?.trim() ?? "";
  const ext = EXT_BY_MIME[mimetype.split(";")[0]?.trim().toLowerCase() ?? ""];
  if (base) return /\.[A-Za-z0-9]{1,8}$/.test(base) || !ext ? base : `${base}.${ext}`;
  const stem = voice ? "voice" : STEM[kind];
  return ext ? `${stem}.${ext}` : stem;
}

/** A protobuf length (a number, or a Long from protobufjs) as a safe integer; null when unusable. */
export function lengthOf(value: unknown): number | null {
  const n =
    typeof value === "number"
      ? value
      : typeof value === "object" && value !== null && "toNumber" in value
        ? (value as { toNumber(): number }).toNumber()
        : Number.NaN;
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

function describeMedia(kind: MediaKind, m: Proto): InboundAttachment | null {
  const mediaKey = m.mediaKey;
  const directPath = str(m, "directPath");
  if (!hasField(m, "mediaKey") || !(mediaKey instanceof Uint8Array) || !directPath) return null;
  const mimetype = str(m, "mimetype");
  const declared = hasField(m, "fileLength") ? lengthOf(m.fileLength) : null;
  const descriptor: MediaDescriptor = {
    kind,
    directPath,
    mediaKey: Buffer.from(mediaKey).toString("base64"),
    declared,
    mimetype,
  };
  const voice = kind === "audio" && m.ptt === true;
  return {
    name: fileNameOf(kind, str(m, "fileName"), mimetype, voice),
    ...(mimetype ? { mimeType: mimetype } : {}),
    ...(declared !== null ? { size: declared } : {}),
    ref: JSON.stringify(descriptor),
  };
}

export function mediaDescriptorOf(attachment: InboundAttachment): MediaDescriptor {
  return JSON.parse(attachment.ref) as MediaDescriptor;
}

/** The note for content parley cannot hand the agent. */
function unsupportedNote(type: string, inner: Proto): string | null {
  switch (type) {
    case "locationMessage":
    case "liveLocationMessage":
      return "📍 I can't read shared locations: please describe the place in words.";
    case "pollCreationMessage":
    case "pollCreationMessageV2":
    case "pollCreationMessageV3":
      return `📊 I can't take part in polls${str(inner, "name") ? ` ("${str(inner, "name")}")` : ""}: please ask in words.`;
    case "contactMessage":
    case "contactsArrayMessage":
      return "👤 I can't read contact cards: please send the details as text.";
    default:
      return null;
  }
}

/** Message kinds that are not a message from a person (edits, reactions, protocol traffic). */
export const NOT_A_MESSAGE = new Set([
  "protocolMessage",
  "reactionMessage",
  "senderKeyDistributionMessage",
  "messageContextInfo",
  "pollUpdateMessage",
  "keepInChatMessage",
  "pinInChatMessage",
]);

/** The content's kind (baileys' getContentType of the unwrapped message), or undefined for none. */
export function contentTypeOf(message: WAMessage): string | undefined {
  const content = normalizeMessageContent(message.message);
  return content ? getContentType(content) : undefined;
}

/**
 * A message parley can never read, said in one line to its sender. baileys delivers these as stubs:
 * a view-once message arrives on a linked device without its content (`key.isViewOnce`, from the
 * `<unavailable type="view_once"/>` child; lib/Utils/decode-wa-message.js `decryptMessageNode`),
 * and one that failed to decrypt or came without content as a CIPHERTEXT stub whose parameter
 * names why (same function; the retry it asks for is lib/Socket/messages-recv.js `handleMessage`).
 */
export function unreadableNote(message: WAMessage): string | null {
  if (message.message) return null;
  if ((message.key as { isViewOnce?: boolean }).isViewOnce === true)
    return "👁️ I can't open view-once messages (WhatsApp does not show them on linked devices): please send it as a normal message.";
  if (message.messageStubType === proto.WebMessageInfo.StubType.CIPHERTEXT)
    return "⚠️ I couldn't read that message (it did not decrypt on this device): please send it again.";
  return null;
}

/** null: nothing a person said (a receipt, an edit, a reaction, an empty stub). */
export function extract(message: WAMessage): Extracted | null {
  const content = normalizeMessageContent(message.message) as Proto | undefined;
  if (!content) return null;
  const type = getContentType(content as never);
  if (!type || NOT_A_MESSAGE.has(type)) return null;
  const inner = field(content, type) ?? {};
  const out: Extracted = { text: "", files: [], notes: [], mentions: [], quotedId: undefined };
  if (type === "conversation")
    out.text = typeof content.conversation === "string" ? content.conversation : "";
  else if (type === "extendedTextMessage") out.text = str(inner, "text");
  const media = MEDIA_FIELDS.find(([name]) => name === type);
  if (media) {
    out.text = str(inner, "caption");
    const file = describeMedia(media[1], inner);
    if (file) out.files.push(file);
    else out.notes.push("⚠️ That file arrived without what is needed to fetch it; please send it again.");
  }
  const note = unsupportedNote(type, inner);
  if (note) out.notes.push(note);
  const context = field(inner, "contextInfo");
  if (context) {
    const mentioned = context.mentionedJid;
    if (Array.isArray(mentioned)) out.mentions = mentioned.filter((j): j is string => typeof j === "string");
    const quoted = str(context, "stanzaId");
    if (quoted) out.quotedId = quoted;
  }
  if (!out.text && out.files.length === 0 && out.notes.length === 0) return null;
  return out;
}

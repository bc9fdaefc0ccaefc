/**
 * Webex's upload half: local image references in the answer become files, one per message, posted
 * after the whole answer. The shared extraction validates and reads the bytes once (the agent's
 * folder under the session's ceiling); a refusal keeps the markup visible and is audited with reason
 * codes and counts only, never the model-authored path.
 */
import type { OutboundFilePolicy } from "../messaging/channel/surface.js";
import type { OutboundFile } from "../messaging/files/outbound-files.js";
import { extractLocalRefs } from "../messaging/files/outbound-files.js";
import type { AuditSink } from "../messaging/security/audit.js";
import { lastByteGuard, webexSafe } from "./format.js";

/** Webex's per-file limit is 100 MB; the aggregate bounds what one answer holds in memory. */
const LIMITS = { maxFiles: 10, maxFileBytes: 100 * 1024 * 1024, maxTotalBytes: 100 * 1024 * 1024 };

/** Posting one file as its own message (WebexClient.uploadMessage). */
export type WebexUpload = (
  roomId: string,
  file: { name: string; mime: string; bytes: Uint8Array },
  markdown: string,
) => Promise<{ ok: true; data: { id: string } } | { ok: false; status: number }>;

export interface Extracted {
  text: string;
  files: OutboundFile[];
  notes: string[];
}

export async function extractUploads(
  text: string,
  policy: OutboundFilePolicy,
  audit: AuditSink,
): Promise<Extracted> {
  const none = { text, files: [], notes: [] };
  // A "![" pre-check keeps an ordinary answer off the filesystem entirely.
  if (!text.includes("![") || !policy.allowed()) return none;
  const result = await extractLocalRefs(text, { root: await policy.root(), limits: LIMITS });
  if (result.files.length === 0 && result.rejections.length === 0) return none;
  const reasons = new Set(result.rejections.map((r) => r.reason));
  audit.log("webex_renderer.upload_files", result.rejections.length ? "refused" : "allowed", {
    accepted: result.files.length,
    refused: result.rejections.length,
    reasons: [...reasons].join(","),
  });
  const notes = [...new Set(result.rejections.map((r) => r.message))].map((m) => `⚠️ image not sent: ${m}`);
  return { text: result.rewrittenText, files: result.files, notes };
}

/**
 * Each file as its own message (Webex takes one per message), captioned by its redacted alt text.
 * A file that did not go is said in the chat (never silently lost) and fails the turn's delivery.
 */
export async function sendUploads(
  files: readonly OutboundFile[],
  o: {
    roomId: string;
    upload: WebexUpload;
    say: (markdown: string) => Promise<string | null>;
    lost: () => void;
  },
): Promise<{ landed: boolean; lost: boolean }> {
  let landed = false;
  let lost = false;
  for (const file of files) {
    const caption = lastByteGuard(webexSafe(file.alt))[0] ?? "";
    const res = await o.upload(
      o.roomId,
      { name: file.filename, mime: file.mime, bytes: file.bytes },
      caption,
    );
    if (res.ok) {
      landed = true;
      continue;
    }
    o.lost();
    if ((await o.say(webexSafe(`⚠️ an image could not be sent: ${file.filename}`))) === null) lost = true;
  }
  return { landed, lost };
}

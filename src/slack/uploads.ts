/**
 * Slack's upload half: local image references in a sealed segment become files in the thread,
 * uploaded through the external upload flow from the bytes the shared extraction validated. Only
 * the semantic (steer/prompt/final) seal extracts, once, over the segment's whole canonical text.
 * Two gates leave the text untouched when they refuse: the shared upload policy (absent in a
 * shared channel thread: nothing leaves for an audience the allow-list does not name) and the
 * restricted-session ceiling. Every refusal keeps its markup visible, adds a note naming why, and is
 * audited with reason codes and counts only, never the LLM-authored destination.
 */
import type { LiveFiles } from "../messaging/channel/live-surface.js";
import type { OutboundFilePolicy } from "../messaging/channel/surface.js";
import { extractLocalRefs, hideLocalRefs, protectedRefSpans } from "../messaging/files/outbound-files.js";
import type { AuditSink } from "../messaging/security/audit.js";
import { oneLine } from "../messaging/text/clip.js";
import { plainSafe } from "./format.js";
import type { LiveTarget } from "./live.js";
import { postMarkdown } from "./live.js";

/** Per message: files examined, and the bytes read for them (the memory bound). */
export const SLACK_MAX_FILES_PER_MESSAGE = 10;
export const SLACK_MAX_TOTAL_UPLOAD_BYTES = 25 * 1024 * 1024;

export interface SealFile {
  filename: string;
  bytes: Uint8Array;
  /** Display-safe: Slack shows the title above the image to everyone in the thread. */
  title: string;
  /** The original markup, display-safe, to show instead if the upload fails. */
  markup: string;
}

export interface SealUploads {
  /** The remainder with accepted references cut (refused ones keep their markup). */
  remainder: string;
  files: SealFile[];
  /** One line per distinct refusal reason; names no path. */
  notes: string[];
}

export const SHARED_THREAD_NOTE = "⚠️ image not sent: files are not uploaded into a shared channel thread";

/**
 * Extract what may be uploaded. `policy` undefined: uploads are off here (a shared channel thread),
 * so every reference stays as text, with one note saying why.
 */
export async function extractForSeal(
  fedText: string,
  remainder: string,
  policy: OutboundFilePolicy | undefined,
  audit: AuditSink,
): Promise<SealUploads> {
  const none = { remainder, files: [], notes: [] };
  // A "![" pre-check keeps an ordinary answer off the filesystem entirely.
  if (!remainder.includes("![")) return none;
  if (!policy) {
    if (protectedRefSpans(remainder).length === 0) return none;
    audit.log("slack_renderer.upload_files", "refused", { reason: "shared_audience" });
    return { ...none, notes: [SHARED_THREAD_NOTE] };
  }
  if (!policy.allowed()) return none;
  const whole = fedText + remainder;
  const result = await extractLocalRefs(whole, {
    root: await policy.root(),
    limits: { maxFiles: SLACK_MAX_FILES_PER_MESSAGE, maxTotalBytes: SLACK_MAX_TOTAL_UPLOAD_BYTES },
  });
  if (result.files.length === 0 && result.rejections.length === 0) return none;
  const reasons = new Set(result.rejections.map((r) => r.reason));
  audit.log("slack_renderer.upload_files", result.rejections.length ? "refused" : "allowed", {
    accepted: result.files.length,
    refused: result.rejections.length,
    reasons: [...reasons].join(","),
  });
  // The cut can only touch text at or after the earliest reference, which was never fed; the one
  // exception is the newline before a reference on the last line, already delivered with the line.
  let keep = 0;
  const limit = Math.min(fedText.length, result.rewrittenText.length);
  while (keep < limit && fedText.charCodeAt(keep) === result.rewrittenText.charCodeAt(keep)) keep++;
  const notes = [...new Set(result.rejections.map((r) => r.message))].map((m) => `⚠️ image not sent: ${m}`);
  return {
    remainder: result.rewrittenText.slice(keep),
    files: result.files.map((f) => ({
      filename: f.filename,
      bytes: f.bytes,
      // Alt text was unescaped by extraction: a separate sink, scanned again before it is shown.
      title: oneLine(plainSafe(f.alt || f.filename), 250),
      markup: plainSafe(whole.slice(f.ref.start, f.ref.end)),
    })),
    notes,
  };
}

/**
 * Local images uploaded after the text. A reference Slack may not have (a shared channel thread,
 * a refused file) keeps its markup, with a note under the text saying why.
 */
export function slackFiles(t: LiveTarget, uploads: OutboundFilePolicy | undefined): LiveFiles {
  return {
    hide: hideLocalRefs,
    extract: async (source) => {
      const ups = await extractForSeal("", source, uploads, t.audit);
      const notes = ups.notes.join("\n");
      return {
        text: notes ? `${ups.remainder.replace(/\s+$/u, "")}\n\n${notes}` : ups.remainder,
        files: ups.files,
      };
    },
    send: async (found) => {
      let landed = false;
      let lost = false;
      for (const f of found as readonly SealFile[]) {
        const res = await t.api.uploadFile({
          channel: t.channel,
          threadTs: t.threadTs,
          filename: f.filename,
          title: f.title,
          bytes: f.bytes,
        });
        if (res.ok) {
          landed = true;
          continue;
        }
        // The text still says what the image was: its markup (display-safe) and why it is missing.
        lost = true;
        if (await postMarkdown(t, `${f.markup}\n⚠️ the image upload failed`)) landed = true;
      }
      return { landed, lost };
    },
  };
}

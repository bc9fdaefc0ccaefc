/**
 * Discord's upload half: local image references in a sealed segment become multipart attachments.
 * Only the semantic (steer/final) seal extracts, once, over the segment's whole canonical text so a
 * reference inside a fence that opened earlier stays literal. Two gates leave the text untouched when
 * they refuse: filesOutbound (checked by the caller) and the restricted-session ceiling. Every
 * refusal keeps its markup visible and is audited with reason codes and counts only, never the
 * LLM-authored destination.
 */

import type { OutboundFilePolicy } from "../messaging/channel/surface.js";
import { extractLocalRefs } from "../messaging/files/outbound-files.js";
import type { AuditSink } from "../messaging/security/audit.js";
import { oneLine } from "../messaging/text/clip.js";
import type { UploadFile } from "./client.js";
import {
  DISCORD_MAX_FILE_BYTES,
  DISCORD_MAX_FILES_PER_MESSAGE,
  DISCORD_MAX_TOTAL_UPLOAD_BYTES,
} from "./client.js";
import { discordSafe } from "./format.js";

/** The shared upload policy: the agent's working folder under the restricted-session ceiling. */
export type UploadPolicy = OutboundFilePolicy;

/** An accepted image, plus its original markup (display-safe) for recovery if the upload fails. */
export type SealFile = UploadFile & { description: string; markup: string };

export interface SealUploads {
  /** The remainder with accepted references cut (rejected ones keep their markup). */
  remainder: string;
  files: SealFile[];
  /** One subtext-ready line per distinct refusal reason; names no path. */
  notes: string[];
}

export async function extractForSeal(
  fedText: string,
  remainder: string,
  policy: UploadPolicy,
  audit: AuditSink,
): Promise<SealUploads> {
  const none = { remainder, files: [], notes: [] };
  // A "![" pre-check keeps an ordinary answer off the filesystem entirely.
  if (!remainder.includes("![")) return none;
  if (!policy.allowed()) return none;
  const whole = fedText + remainder;
  const result = await extractLocalRefs(whole, {
    root: await policy.root(),
    limits: {
      maxFiles: DISCORD_MAX_FILES_PER_MESSAGE,
      maxTotalBytes: DISCORD_MAX_TOTAL_UPLOAD_BYTES,
      maxFileBytes: DISCORD_MAX_FILE_BYTES,
    },
  });
  if (result.files.length === 0 && result.rejections.length === 0) return none;
  const reasons = new Map<string, number>();
  for (const r of result.rejections) reasons.set(r.reason, (reasons.get(r.reason) ?? 0) + 1);
  audit.log("discord_renderer.upload_files", result.rejections.length ? "refused" : "allowed", {
    accepted: result.files.length,
    refused: result.rejections.length,
    reasons: [...reasons.keys()].join(","),
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
      name: f.filename,
      data: f.bytes,
      contentType: f.mime,
      // Alt text was unescaped by extraction: a separate sink, scanned again before it is shown.
      description: oneLine(discordSafe(f.alt), 1024),
      markup: discordSafe(whole.slice(f.ref.start, f.ref.end)),
    })),
    notes,
  };
}

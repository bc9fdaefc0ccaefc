/**
 * Discord's upload half: local image references in a sealed segment become multipart attachments
 * of its last message. Only the semantic (steer/final) seal extracts, once, over the segment's last
 * message whole (a fence opened earlier is reopened there, so a reference inside it stays literal).
 * Two gates leave the text untouched when they refuse: uploads on for the turn (the caller) and the
 * restricted-session ceiling. Every refusal keeps its markup visible and is audited with reason
 * codes and counts only, never the LLM-authored destination.
 */

import type { Logger } from "../messaging/base/logger.js";
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
import { discordSafe, subtext, withLine } from "./format.js";
import type { MessageBody } from "./payload.js";

/** The shared upload policy: the agent's working folder under the restricted-session ceiling. */
export type UploadPolicy = OutboundFilePolicy;

/** An accepted image, plus its original markup (display-safe) for recovery if the upload fails. */
export type SealFile = UploadFile & { description: string; markup: string };

/**
 * Take the accepted images out of a sealed segment's source (`text`: the rest, each refusal's note
 * as a subtext line under it, naming no path); the files ride the segment's last message.
 */
export async function extractForSeal(
  source: string,
  policy: UploadPolicy,
  audit: AuditSink,
): Promise<{ text: string; files: SealFile[] }> {
  const none = { text: source, files: [] };
  // A "![" pre-check keeps an ordinary answer off the filesystem entirely.
  if (!source.includes("![")) return none;
  if (!policy.allowed()) return none;
  const result = await extractLocalRefs(source, {
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
  const notes = [...new Set(result.rejections.map((r) => r.message))].map((m) =>
    subtext(`⚠️ image not sent: ${m}`),
  );
  return {
    text: [result.rewrittenText, ...notes].join("\n"),
    files: result.files.map((f) => ({
      name: f.filename,
      data: f.bytes,
      contentType: f.mime,
      // Alt text was unescaped by extraction: a separate sink, scanned again before it is shown.
      description: oneLine(discordSafe(f.alt), 1024),
      markup: discordSafe(source.slice(f.ref.start, f.ref.end)),
    })),
  };
}

/** What a message carries to upload with it, and the footer its body ends with (LiveMessage.files). */
export type Carried = { items: readonly unknown[]; footer: string } | undefined;

/**
 * Send `body` with the images it carries (each descriptor names its files[N] part). Multipart is
 * all-or-nothing: when it fails, the text goes again alone, each image's markup restored
 * (display-safe) above the footer, so the paths stay visible instead of vanishing with the upload.
 */
export async function sendWithFiles<T>(
  body: MessageBody,
  carried: Carried,
  send: (body: MessageBody, files: SealFile[]) => Promise<T>,
  landed: (result: T) => boolean,
  logger: Pick<Logger, "warn">,
): Promise<T> {
  const files = (carried?.items ?? []) as SealFile[];
  if (!files.length) return send(body, []);
  const attachments = files.map((f, n) => ({ id: n, filename: f.name, description: f.description }));
  const result = await send({ ...body, attachments }, files);
  if (landed(result)) return result;
  logger.warn("discord: the image upload failed; sending the text with its references restored");
  const footer = carried?.footer ?? "";
  const text = footer && body.content.endsWith(footer) ? body.content.slice(0, -footer.length) : body.content;
  const lines = [...files.map((f) => f.markup), subtext("⚠️ the image upload failed"), footer];
  const content = lines.reduce((out, line) => withLine(out, line), text.replace(/\n$/, ""));
  return send({ ...body, content, attachments: [] }, []);
}

/**
 * Ingested attachments -> ACP prompt blocks, and the user-facing refusal lines. Channel-neutral: the
 * ingest (attachments.ts) decides what was read; this module only decides how the agent and the user
 * are told. Runs inside withIngestedAttachments, so every path it names is alive for the turn.
 * Layer: messaging (imports node fs/url and ./attachments, ./events only).
 */
import { readFile } from "node:fs/promises";
import { pathToFileURL } from "node:url";
import { oneLine } from "../text/clip.js";
import type { PromptContent } from "../turn/provider-events.js";
import type { IngestedAttachment, IngestRefusal, IngestResult } from "./ingest.js";

/** The subset of ACP promptCapabilities parley reads (from the agent's initialize response). */
export interface AgentPromptCapabilities {
  readonly image?: boolean;
}

/** A user-supplied name on one line, bounded: it is shown in a chat and quoted to the agent. */
function displayName(name: string): string {
  return oneLine(name, 80) || "attachment";
}

/** One short line per refused file (name + reason), for the user. Empty when nothing was refused. */
export function refusalLines(refusals: readonly IngestRefusal[]): string {
  return refusals.map((r) => `⚠️ Could not read ${displayName(r.name)}: ${r.message}.`).join("\n");
}

async function blocksFor(file: IngestedAttachment, caps: AgentPromptCapabilities): Promise<PromptContent[]> {
  const name = displayName(file.name);
  // An image block only when the agent declared it can take one; anything else would be rejected.
  if (file.kind === "image" && caps.image === true) {
    const data = (await readFile(file.path)).toString("base64");
    return [{ type: "image", mimeType: file.mime, data }];
  }
  // The agent runs on this host, so a file:// link to the temp file is readable for the turn's life.
  const link: PromptContent = {
    type: "resource_link",
    uri: pathToFileURL(file.path).href,
    name,
    mimeType: file.mime,
  };
  if (file.kind !== "text" || file.text === undefined) return [link];
  const cut = file.textTruncated ? ` (first ${file.text.length} characters; the full file is linked)` : "";
  return [link, { type: "text", text: `Contents of the attached file ${name}${cut}:\n${file.text}` }];
}

/**
 * The blocks an ingest adds after the message's own prompt: per file, an image block or a
 * resource_link (plus the decoded text for a text file), then one note naming the files that
 * could not be read, so the agent never answers as if it had seen them.
 */
export async function attachmentBlocks(
  ingested: IngestResult,
  caps: AgentPromptCapabilities,
): Promise<PromptContent[]> {
  const blocks: PromptContent[] = [];
  for (const file of ingested.files) blocks.push(...(await blocksFor(file, caps)));
  if (ingested.refusals.length > 0) {
    const lines = ingested.refusals.map((r) => `- ${displayName(r.name)}: ${r.message}`);
    blocks.push({
      type: "text",
      text: `The user attached files that could not be read (you have not seen them):\n${lines.join("\n")}`,
    });
  }
  return blocks;
}

/** The message's prompt (text or blocks, as the context builder made it) followed by `extra`. */
export function appendBlocks(
  prompt: string | PromptContent[],
  extra: PromptContent[],
): string | PromptContent[] {
  if (extra.length === 0) return prompt;
  const head: PromptContent[] =
    typeof prompt === "string" ? (prompt.trim() === "" ? [] : [{ type: "text", text: prompt }]) : prompt;
  return [...head, ...extra];
}

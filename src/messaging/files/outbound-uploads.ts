/**
 * Which local images a sealed answer ships, for a channel that sends them after its text. Two
 * gates, both leaving the text untouched when they refuse (the path stays visible, never silently
 * dropped): the restricted-session ceiling (a temporary/incognito conversation promised to leave
 * no trace), then the shared extractor (approved root, sensitive paths, raster sniffing, one read
 * per file) under the channel's ceilings. Refusals are spoken in the answer, one line each.
 */
import type { Logger } from "../base/logger.js";
import type { OutboundFilePolicy } from "../channel/surface.js";
import type { OutboundFile, OutboundLimits } from "./outbound-files.js";
import { extractLocalRefs } from "./outbound-files.js";

export async function extractUploads(
  body: string,
  policy: OutboundFilePolicy,
  o: { limits: Partial<OutboundLimits>; logger: Logger; channel: string },
): Promise<{ text: string; files: OutboundFile[] }> {
  if (!policy.allowed()) return { text: body, files: [] };
  const result = await extractLocalRefs(body, { root: await policy.root(), limits: o.limits });
  if (result.rejections.length > 0)
    o.logger.info(`${o.channel}: image references not uploaded`, {
      reasons: result.rejections.map((r) => r.reason).join(","),
    });
  const notes = result.rejections.map((r) => `⚠️ ${r.message}`);
  const text = notes.length
    ? `${result.rewrittenText}${result.rewrittenText ? "\n\n" : ""}${notes.join("\n")}`
    : result.rewrittenText;
  return { text, files: result.files };
}

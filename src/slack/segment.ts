/**
 * The presentation Slack is sent of a streamed answer's text: pipe tables flattened by the shared
 * reduction (Slack renders none) and links with their targets shown. The kit's live stream feeds it
 * settled whole lines only (channel/live-stream.ts: settledCut), so a table reaches it whole. Pure.
 */
import { iterFenceLines } from "../messaging/text/fences.js";
import { flattenPipeTables } from "../messaging/text/markup.js";

/**
 * A link shows where it goes: `[label](url)` becomes `label (url)` (an image's too, once local ones
 * were cut for upload), so no label can hide its target. Inline code is left as written.
 */
function visibleTargets(line: string): string {
  if (!line.includes("](")) return line;
  return line
    .split(/(`[^`\n]*`)/)
    .map((part, i) =>
      i % 2 === 1
        ? part
        : part.replace(/!?\[([^\]\n]*)\]\(([^()\s]+)\)/g, (_m, label: string, url: string) =>
            label && label !== url ? `${label} (${url})` : url,
          ),
    )
    .join("");
}

/**
 * The presentation Slack is sent, outside code fences: pipe tables flattened into labelled bullets
 * (the shared reduction), links with their targets shown. Code stays byte for byte.
 */
export function present(text: string): string {
  if (!text.includes("|") && !text.includes("](")) return text;
  const out: string[] = [];
  let run: string[] = [];
  const flush = () => {
    if (run.length) out.push(flattenPipeTables(run.join("\n")).split("\n").map(visibleTargets).join("\n"));
    run = [];
  };
  for (const [line, role] of iterFenceLines(text)) {
    if (role === "outside") run.push(line);
    else {
      flush();
      out.push(line);
    }
  }
  flush();
  // iterFenceLines drops the terminator of every line: a text ending in "\n" keeps it.
  return out.join("\n") + (text.endsWith("\n") ? "\n" : "");
}

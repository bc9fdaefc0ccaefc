/**
 * One walk over a reply's blocks for a channel that rewrites markdown into its own form (WhatsApp's
 * dialect, iMessage's plain text): prose runs get the shared table reduction and then the channel's
 * line rule; a fence's body is handed over untouched (code is copied out of messages; rewriting it
 * corrupts it silently), a mermaid fence as its arrows. An unclosed fence is closed at the end, so
 * nothing after it is taken for code. The fence grammar is the shared machine's (fences.ts).
 */
import { iterFenceLines, openerOf } from "./fences.js";
import { flattenMermaidBody, flattenPipeTables, MERMAID_INFO } from "./markup.js";

export interface BlockRules {
  /** One prose line, after the table reduction. */
  line(line: string): string;
  /** A fence's body lines, verbatim. */
  code(body: readonly string[]): string[];
  /** A mermaid fence: the arrows it draws, or null when it yields none (then its body, verbatim). */
  diagram(arrows: readonly string[] | null, body: readonly string[]): string[];
}

export function reduceBlocks(text: string, rules: BlockRules): string {
  const out: string[] = [];
  let prose: string[] = [];
  let fence: { mermaid: boolean; body: string[] } | null = null;
  const flushProse = () => {
    if (prose.length === 0) return;
    for (const line of flattenPipeTables(prose.join("\n")).split("\n")) out.push(rules.line(line));
    prose = [];
  };
  const closeFence = () => {
    if (!fence) return;
    if (fence.mermaid) {
      const arrows = flattenMermaidBody(fence.body.join("\n"));
      out.push(...rules.diagram(arrows ? arrows.split("\n") : null, fence.body));
    } else out.push(...rules.code(fence.body));
    fence = null;
  };
  for (const [line, role] of iterFenceLines(text)) {
    if (role === "outside") prose.push(line);
    else if (role === "open") {
      flushProse();
      fence = { mermaid: infoOf(line).toLowerCase() === MERMAID_INFO, body: [] };
    } else if (role === "body") fence?.body.push(line);
    else closeFence();
  }
  flushProse();
  closeFence();
  return out.join("\n");
}

/** The first word of a fence's info string. */
function infoOf(openerLine: string): string {
  return (
    (openerOf(openerLine)?.opener ?? "")
      .trim()
      .replace(/^[`~]+/, "")
      .trim()
      .split(/\s+/)[0] ?? ""
  );
}

/**
 * One segment of a streamed answer (turn start or a steer boundary, up to the next semantic seal) in
 * two forms: the CANONICAL source the model wrote, which steer rotation, [OPTIONS:] extraction and
 * image extraction read, and its PRESENTATION (pipe tables flattened by the shared reduction, since
 * Slack renders none), which the shared StreamingSplitter seals into messages.
 *
 * Only SETTLED canonical text is fed, whole lines at a time. Held back: a trailing [OPTIONS trailer
 * (complete or still arriving), the earliest local image reference and everything after it (so
 * extraction at the semantic seal sees it whole and a cut can never strand half of it), and a
 * trailing run of pipe lines (a table is flattened whole, or a header could be fed without the
 * rows it labels). Pure: no I/O, no clock.
 */
import { settledCut } from "../messaging/channel/live-stream.js";
import { hideLocalRefs } from "../messaging/files/outbound-files.js";
import { iterFenceLines } from "../messaging/text/fences.js";
import { flattenPipeTables } from "../messaging/text/markup.js";
import { splitOptionsTrailer } from "../messaging/text/options.js";
import { StreamingSplitter } from "../messaging/text/streaming-splitter.js";

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

export class SlackSegment {
  private source = "";
  private fed = 0;
  private presented = "";
  private splitter: StreamingSplitter;

  constructor(private readonly limit: number) {
    this.splitter = new StreamingSplitter(limit);
  }

  append(text: string): void {
    this.source += text;
  }

  /** Canonical text of the segment so far. */
  get canonical(): string {
    return this.source;
  }

  /** Canonical text already fed to the splitter. */
  get fedText(): string {
    return this.source.slice(0, this.fed);
  }

  /** Canonical text not yet fed (the semantic seal transforms this). */
  get remainder(): string {
    return this.source.slice(this.fed);
  }

  isEmpty(): boolean {
    return this.source.trim() === "";
  }

  /** Feed whatever settled; returns the chunks the splitter sealed (each one message). */
  advance(): string[] {
    const cut = this.settledCut();
    if (cut <= this.fed) return [];
    const next = present(this.source.slice(0, cut));
    // Settled text ends at a line break outside any held table, so its presentation only grows.
    if (!next.startsWith(this.presented)) return [];
    const delta = next.slice(this.presented.length);
    this.fed = cut;
    this.presented = next;
    return this.splitter.append(delta);
  }

  /** What no later text can move out of the message being filled (presentation form). */
  get committed(): string {
    return this.splitter.committed;
  }

  /** The live frame: the splitter's tail plus the unsettled rest, partial markers hidden. */
  livePreview(): string {
    const rest = hideLocalRefs(splitOptionsTrailer(this.remainder, { hidePartial: true }).body);
    return this.splitter.tail + rest;
  }

  /**
   * The semantic seal: `remainder` as the caller transformed it (trailer and extracted images cut)
   * is presented, fed, and every remaining chunk returned. The segment then starts afresh.
   */
  finish(remainder: string): string[] {
    const whole = present(this.fedText + remainder);
    const delta = whole.startsWith(this.presented) ? whole.slice(this.presented.length) : present(remainder);
    const chunks = [...this.splitter.append(delta), ...this.splitter.finish()];
    this.source = "";
    this.fed = 0;
    this.presented = "";
    this.splitter = new StreamingSplitter(this.limit);
    return chunks;
  }

  /** Never behind what was already fed. */
  private settledCut(): number {
    return Math.max(settledCut(this.source), this.fed);
  }
}

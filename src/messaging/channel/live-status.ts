/**
 * The live half of the render kit: the one status line a running turn shows (what the agent is
 * doing now, said the same way on every channel) and the paragraph rule for text around a tool
 * call. Each channel decides WHERE the line goes (a bubble's status, a footer, a subtext line);
 * what it says is decided here. Pure: no I/O, no clock.
 */
import { redactForDisplay } from "../security/display-safety.js";
import { clip, oneLine } from "../text/clip.js";
import type { AgentStatus, ToolChange, ToolStatus } from "../turn/renderer.js";
import { formatElapsed } from "./phase-ladder.js";

/** Longest tool title a status line shows (code points); the agent may put a whole command there. */
export const MAX_TOOL_TITLE_CHARS = 200;

type Phase =
  | { name: "thinking" }
  | { name: "writing" }
  | { name: "tool"; id: string; title: string; status: ToolStatus }
  | { name: "waiting"; position: number };

/**
 * What the agent is doing now, as one line. The phase follows the stream (thinking, writing, a
 * tool as the agent retitles and finishes it, waiting in line for a free agent); a silence notice
 * overrides it until the agent sends anything again, because "nothing for 90 s, /stop ends it" is
 * what a user waiting on a stuck turn needs to read, not the phase it got stuck in.
 */
export class LiveStatus {
  private phase: Phase = { name: "thinking" };
  private silentSeconds = 0;

  /** `stopCommand` as the channel spells it ("/stop", "`!stop`"). */
  constructor(private readonly stopCommand: string) {}

  thinking(): void {
    this.set({ name: "thinking" });
  }

  writing(): void {
    this.set({ name: "writing" });
  }

  tool(toolCallId: string, title: string): void {
    this.set({ name: "tool", id: toolCallId, title, status: "in_progress" });
  }

  /** Follows the tool on the line; a change to another call (one already left behind) is ignored. */
  toolChanged(toolCallId: string, change: ToolChange): void {
    const phase = this.phase;
    if (phase.name !== "tool" || phase.id !== toolCallId) return;
    this.set({
      ...phase,
      ...(change.title ? { title: change.title } : {}),
      ...(change.status ? { status: change.status } : {}),
    });
  }

  /** The agent's own notices: a wait in line is a phase; a silence overrides the line until activity. */
  agent(status: AgentStatus): void {
    if (status.type === "waiting") this.set({ name: "waiting", position: status.position });
    else if (status.type === "silent") this.silentSeconds = Math.max(1, Math.floor(status.seconds));
  }

  get line(): string {
    if (this.silentSeconds > 0)
      return `⏳ No output from the agent for ${formatElapsed(this.silentSeconds * 1000)} · ${this.stopCommand} ends the turn`;
    const phase = this.phase;
    switch (phase.name) {
      case "thinking":
        return "💭 Thinking…";
      case "writing":
        return "✍️ Writing…";
      case "waiting":
        return `⏳ Waiting for a free agent… (${phase.position <= 1 ? "next in line" : `${phase.position - 1} ahead`})`;
    }
    const title = oneLine(phase.title, MAX_TOOL_TITLE_CHARS) || "Working";
    if (phase.status === "completed") return `✅ ${title}`;
    if (phase.status === "failed") return `❌ ${title}`;
    return `🔧 ${title}…`;
  }

  private set(phase: Phase): void {
    this.phase = phase;
    // Anything the agent does ends its silence.
    this.silentSeconds = 0;
  }
}

/**
 * Text after a tool call opens a new paragraph: "I'll list the files." and "Done: 3 files." are two
 * thoughts with work between them, and run together ("I'll list the files.Done") they read as one
 * garbled sentence. One rule for every channel; each appends the result to its own buffer.
 */
export class ToolParagraphs {
  private pending = false;

  /** A tool call happened: the next text starts a paragraph. */
  toolCalled(): void {
    this.pending = true;
  }

  /** `text` as it should be appended after `before` (the text the current message holds so far). */
  next(before: string, text: string): string {
    if (!this.pending) return text;
    this.pending = false;
    // Nothing above it in this message, or already a paragraph break: nothing to separate.
    if (!before.trim() || before.endsWith("\n\n")) return text;
    // The new paragraph's own leading blank lines go (the break is the separator); indentation stays.
    return (before.endsWith("\n") ? "\n" : "\n\n") + text.replace(/^[ \t]*(?:\r?\n)+|^[ \t]+/, "");
  }
}

/** Longest reasoning preview, in code points. */
const REASONING_PREVIEW_CHARS = 300;

/** The agent's reasoning, gathered while shown, offered once as a preview ahead of the answer. */
export class ReasoningPreview {
  private text = "";
  private taken = false;

  constructor(private readonly shown: boolean) {}

  add(text: string): void {
    // Off, reasoning is never even accumulated.
    if (this.shown && !this.taken) this.text += text;
  }

  /** The preview, once (null after, or when there is none). Redacted on the joined text: the driver redacts each chunk alone, and a key can span two. */
  take(): string | null {
    if (this.taken || !this.text.trim()) return null;
    this.taken = true;
    return clip(redactForDisplay(this.text).text, REASONING_PREVIEW_CHARS);
  }
}

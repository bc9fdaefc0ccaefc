/**
 * RecordingRenderer: records the ordered renderer calls (the golden-transcript harness). A channel's
 * own golden tests record platform calls instead; this one pins the driver's output contract.
 */
import type { TransportCapabilities } from "../channel/capabilities.js";
import type { AgentStatus, PromptOption, ToolChange, TurnEnding } from "./renderer.js";
import { Renderer } from "./renderer.js";

export type RecordedCall =
  | { call: "onTurnStart" }
  | { call: "onTextChunk"; text: string }
  | { call: "onThinking"; text: string }
  | { call: "onToolCall"; toolCallId: string; title: string; toolKind: string; toolPurpose: string }
  | ({ call: "onToolUpdate"; toolCallId: string } & ToolChange)
  | { call: "onAgentStatus"; status: AgentStatus }
  | {
      call: "onPromptChoice";
      requestId: string;
      options: PromptOption[];
      toolTitle: string;
      toolPurpose: string;
    }
  | { call: "onCompaction"; contextUsagePct: number | null; receipt: string }
  | ({ call: "onDone"; stopReason: string } & TurnEnding)
  | { call: "onSteerConsumed"; steerId: string; summary: string }
  | { call: "close" };

export class RecordingRenderer extends Renderer {
  readonly calls: RecordedCall[] = [];
  /** Nonces are random; recorded separately so golden files stay deterministic. */
  readonly nonces: string[] = [];
  /** Called after each PROMPT_CHOICE is recorded (tests press buttons from here). */
  onPrompt: ((requestId: string, nonce: string) => void) | undefined;
  /** What onPromptChoice answers (shown or not): a test of the unshown-prompt rule sets it false. */
  promptShown = true;

  constructor(capabilities?: TransportCapabilities) {
    super(capabilities);
  }

  override async onTurnStart(): Promise<void> {
    this.calls.push({ call: "onTurnStart" });
  }
  async onTextChunk(text: string): Promise<void> {
    this.calls.push({ call: "onTextChunk", text });
  }
  async onThinking(text: string): Promise<void> {
    this.calls.push({ call: "onThinking", text });
  }
  async onToolCall(toolCallId: string, title: string, toolKind: string, toolPurpose: string): Promise<void> {
    this.calls.push({ call: "onToolCall", toolCallId, title, toolKind, toolPurpose });
  }
  async onToolUpdate(toolCallId: string, change: ToolChange): Promise<void> {
    this.calls.push({ call: "onToolUpdate", toolCallId, ...change });
  }
  async onAgentStatus(status: AgentStatus): Promise<void> {
    this.calls.push({ call: "onAgentStatus", status });
  }
  async onPromptChoice(
    options: PromptOption[],
    requestId: string,
    context: { toolTitle: string; toolPurpose: string; nonce: string },
  ): Promise<boolean> {
    this.nonces.push(context.nonce);
    this.calls.push({
      call: "onPromptChoice",
      requestId,
      options,
      toolTitle: context.toolTitle,
      toolPurpose: context.toolPurpose,
    });
    this.onPrompt?.(requestId, context.nonce);
    return this.promptShown;
  }
  async onCompaction(contextUsagePct: number | undefined, receipt: string): Promise<void> {
    this.calls.push({ call: "onCompaction", contextUsagePct: contextUsagePct ?? null, receipt });
  }
  async onDone(stopReason: string, ending: TurnEnding = {}): Promise<void> {
    this.calls.push({ call: "onDone", stopReason, ...ending });
  }
  override async onSteerConsumed(summary: string, steerId: string): Promise<void> {
    this.calls.push({ call: "onSteerConsumed", steerId, summary });
  }
  override async close(): Promise<void> {
    this.calls.push({ call: "close" });
  }

  /** Every string any recorded call carries (for "never reaches a renderer" assertions). */
  allStrings(): string[] {
    const out: string[] = [];
    const walk = (v: unknown) => {
      if (typeof v === "string") out.push(v);
      else if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === "object") Object.values(v).forEach(walk);
    };
    walk(this.calls);
    return out;
  }

  /** The calls with adjacent text chunks merged: chunking-independent comparisons. */
  coalesced(): RecordedCall[] {
    const out: RecordedCall[] = [];
    for (const c of this.calls) {
      const last = out[out.length - 1];
      if (c.call === "onTextChunk" && last?.call === "onTextChunk")
        out[out.length - 1] = { call: "onTextChunk", text: last.text + c.text };
      else out.push(c);
    }
    return out;
  }
}

/**
 * Layer 2b: the Renderer contract and the OutputEvent union the TurnDriver dispatches. A renderer
 * maps channel-neutral events onto one platform's surface (edits, buttons, reactions).
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { ParleyError } from "../base/errors.js";
import type { TransportCapabilities } from "../channel/capabilities.js";
import { DEFAULT_CAPABILITIES } from "../channel/capabilities.js";
import type { SessionResumeCause } from "./provider-events.js";

export const TEXT_CHUNK = "text_chunk";
export const THINKING = "thinking";
export const TOOL_CALL = "tool_call";
export const PROMPT_CHOICE = "prompt_choice";
export const COMPACTION = "compaction";
export const DONE = "done";
export const STEER_CONSUMED = "steer_consumed";
export const TOOL_UPDATE = "tool_update";
export const AGENT_STATUS = "agent_status";

export const OUTPUT_KINDS: ReadonlySet<string> = new Set([
  TEXT_CHUNK,
  THINKING,
  TOOL_CALL,
  TOOL_UPDATE,
  PROMPT_CHOICE,
  COMPACTION,
  AGENT_STATUS,
  DONE,
  STEER_CONSUMED,
]);

/** How a turn ended, beyond its stop reason. */
export interface TurnEnding {
  /** Why a failed turn (stopReason "error") failed: one redacted line a user may read. */
  error?: string;
  /** The agent's context usage (0..100) as last reported during the turn, when it reported one. */
  contextUsagePct?: number;
}

export type ToolStatus = "pending" | "in_progress" | "completed" | "failed";

/** What the agent changed about a tool call it announced (only the fields it changed; title redacted). */
export interface ToolChange {
  title?: string;
  toolKind?: string;
  status?: ToolStatus;
}

/**
 * What the user should know about the agent itself, beside its answer: the conversation waits in
 * line for a free agent; the agent has sent nothing for a while; or its session had to be started
 * afresh and the earlier context is gone. (A session restored with its history says nothing: that
 * is the normal case.)
 */
export type AgentStatus =
  | { type: "waiting"; position: number }
  | { type: "silent"; seconds: number }
  | { type: "fresh_session"; cause: SessionResumeCause; reason: string; replayed?: number };

/** One choice of an approval prompt. `verdict` says what pressing it means. */
export interface PromptOption {
  id: string;
  label: string;
  verdict: "approve" | "approve_always" | "deny";
}

/** Said in the chat when an approval prompt could not be shown and was denied at once. */
export const PROMPT_NOT_SHOWN_NOTICE = "⚠️ The approval prompt could not be shown, so the tool was denied.";

export type OutputEvent =
  | { kind: typeof TEXT_CHUNK; text: string }
  | { kind: typeof THINKING; text: string }
  | { kind: typeof TOOL_CALL; toolCallId: string; title: string; toolKind: string; toolPurpose: string }
  | ({ kind: typeof TOOL_UPDATE; toolCallId: string } & ToolChange)
  | { kind: typeof AGENT_STATUS; status: AgentStatus }
  | {
      kind: typeof PROMPT_CHOICE;
      requestId: string;
      options: PromptOption[];
      /** Redacted; paired to the request by toolCallId, never by recency. */
      toolTitle: string;
      toolPurpose: string;
      /** Per-prompt nonce minted by the approval registry; widgets must carry it back. */
      nonce: string;
    }
  | { kind: typeof COMPACTION; contextUsagePct: number | undefined; receipt: string }
  | ({ kind: typeof DONE; stopReason: string } & TurnEnding)
  | { kind: typeof STEER_CONSUMED; steerId: string; summary: string };

export type OutputKind = OutputEvent["kind"];

/** The approval prompt event, as `Renderer.showPrompt` takes it. */
export type PromptEvent = Extract<OutputEvent, { kind: typeof PROMPT_CHOICE }>;

/** JSON form with snake_case keys (golden fixtures, transcripts). */
export function outputEventToJson(event: OutputEvent): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(event)) {
    out[key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = value;
  }
  return out;
}

export abstract class Renderer {
  readonly capabilities: TransportCapabilities;
  /** Set by a renderer when part of the answer did not land; the pipeline records a failure. */
  deliveryFailed = false;
  /**
   * A relay, not an agent turn (an agent host's reply or permission prompt in channel-server mode):
   * no turn-status line, no no-answer notice, no live "thinking" frame after a decided prompt. Set
   * by whoever made the renderer, before the first event; a renderer that ignores it still works,
   * only more talkatively.
   */
  quiet = false;
  /**
   * What the person is told when this renderer could not show an approval prompt and it was denied
   * at once (the driver says it, out of band). A channel may name its prompt its own way.
   */
  readonly promptNotShownNotice: string = PROMPT_NOT_SHOWN_NOTICE;

  constructor(capabilities: TransportCapabilities = DEFAULT_CAPABILITIES) {
    this.capabilities = capabilities;
  }

  /** Routes each kind to its handler; an unknown kind is a programming error, never ignored. */
  async dispatch(event: OutputEvent): Promise<void> {
    switch (event.kind) {
      case TEXT_CHUNK:
        return this.onTextChunk(event.text);
      case THINKING:
        return this.onThinking(event.text);
      case TOOL_CALL:
        return this.onToolCall(event.toolCallId, event.title, event.toolKind, event.toolPurpose);
      case TOOL_UPDATE: {
        const { kind: _kind, toolCallId, ...change } = event;
        return this.onToolUpdate(toolCallId, change);
      }
      case AGENT_STATUS:
        return this.onAgentStatus(event.status);
      case PROMPT_CHOICE:
        // The shown-or-not answer is for whoever asks (showPrompt); dispatch only routes.
        return void (await this.showPrompt(event));
      case COMPACTION:
        return this.onCompaction(event.contextUsagePct, event.receipt);
      case DONE: {
        const { kind: _kind, stopReason, ...ending } = event;
        return this.onDone(stopReason, ending);
      }
      case STEER_CONSUMED:
        return this.onSteerConsumed(event.summary, event.steerId);
      default: {
        const unknownKind: never = event;
        throw new ParleyError(
          "UNKNOWN_OUTPUT_KIND",
          `unknown output event kind: ${JSON.stringify((unknownKind as { kind?: unknown }).kind)}`,
        );
      }
    }
  }

  /**
   * Show an approval prompt. Resolves true once the person can answer it (its widget or its typed
   * reply prompt landed), false when nothing of it landed. A throw means "not shown" too: whoever
   * asked (the driver, the channel-server bridge) then denies it at once, since nobody can answer a
   * prompt nobody saw.
   */
  showPrompt(event: PromptEvent): Promise<boolean> {
    return this.onPromptChoice(event.options, event.requestId, {
      toolTitle: event.toolTitle,
      toolPurpose: event.toolPurpose,
      nonce: event.nonce,
    });
  }

  /** Called once before the stream begins. */
  async onTurnStart(): Promise<void> {}
  abstract onTextChunk(text: string): Promise<void>;
  abstract onThinking(text: string): Promise<void>;
  /** Uniform tool-call semantics: each call completes the previous task and starts a new one. */
  abstract onToolCall(
    toolCallId: string,
    title: string,
    toolKind: string,
    toolPurpose: string,
  ): Promise<void>;
  /** The agent retitled a tool call, or it moved on (completed, failed): the live line follows it. */
  abstract onToolUpdate(toolCallId: string, change: ToolChange): Promise<void>;
  /** A notice about the agent (waiting for one, silence, a fresh session): see AgentStatus. */
  abstract onAgentStatus(status: AgentStatus): Promise<void>;
  /** True when the prompt was shown, false when nothing of it landed (see showPrompt). */
  abstract onPromptChoice(
    options: PromptOption[],
    requestId: string,
    context: { toolTitle: string; toolPurpose: string; nonce: string },
  ): Promise<boolean>;
  abstract onCompaction(contextUsagePct: number | undefined, receipt: string): Promise<void>;
  /** The turn ended; a failed one (stopReason "error") says why in `ending.error` when it is known. */
  abstract onDone(stopReason: string, ending?: TurnEnding): Promise<void>;
  /** The hub hands over the user's own words for the steer chip (not the backend's echo). */
  noteSteer?(text: string): void;
  /** Write a decided prompt's outcome onto the prompt itself and retire its widgets. */
  markApproval?(requestId: string, outcome: string): Promise<void> | void;
  /** The driver's structured steer boundary; streaming renderers seal the pre-steer segment here. */
  async onSteerConsumed(_summary: string, _steerId: string): Promise<void> {}
  /** Finish the turn (final edits, error placeholder). Must tolerate a turn that never started. */
  async close(..._args: unknown[]): Promise<void> {}
}

/**
 * All no-ops: substituted when a conversation is muted. The turn still runs; only the writes back
 * are dropped. It is the object that gets CLOSED too, because a concrete close() posts an error
 * placeholder when a turn produced no output, which a muted turn always did. close() accepts any
 * arguments since channels widen that signature.
 */
export class SilentRenderer extends Renderer {
  async onTextChunk(): Promise<void> {}
  async onThinking(): Promise<void> {}
  async onToolCall(): Promise<void> {}
  async onToolUpdate(): Promise<void> {}
  async onAgentStatus(): Promise<void> {}
  /** Muted: only the writes are dropped, never the ladder; the prompt counts as asked (typed replies still answer). */
  async onPromptChoice(): Promise<boolean> {
    return true;
  }
  async onCompaction(): Promise<void> {}
  async onDone(): Promise<void> {}
  override async close(..._args: unknown[]): Promise<void> {}
}

/** A fresh per-prompt nonce: 16 random bytes, base64url (22 chars, fits Telegram's 64-byte data). */
export function newApprovalNonce(random: (size: number) => Uint8Array = randomBytes): string {
  return Buffer.from(random(16)).toString("base64url");
}

/** Constant-time nonce comparison; a missing or differently-sized nonce never matches. */
export function nonceMatches(expected: string, presented: string | null | undefined): boolean {
  if (typeof presented !== "string" || expected.length === 0) return false;
  const a = Buffer.from(expected, "utf8");
  const b = Buffer.from(presented, "utf8");
  if (a.length !== b.length) return false;
  return timingSafeEqual(a, b);
}

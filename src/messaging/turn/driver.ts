/**
 * Layer 2: TurnDriver. Consumes one provider turn and dispatches OutputEvents to a Renderer. It owns
 * the channel-neutral turn concerns so every channel inherits them once: protocol framing (steer
 * frames, compaction notices), unconditional redaction (exfiltration URLs, then credentials) of
 * every model-authored string, and the tool-approval ladder (deny by default, every decision audited).
 */
import type { ApprovalDecider, ApprovalRequest, ApprovalVerdict } from "../approval/approvals.js";
import type { Timers } from "../base/clock.js";
import { realClock } from "../base/clock.js";
import type { Logger } from "../base/logger.js";
import { silentLogger } from "../base/logger.js";
import type { AuditSink } from "../security/audit.js";
import { redactAll, StreamRedactor } from "../security/index.js";
import { isProviderEvent } from "./event-guard.js";
import { failureReason } from "./failure.js";
import { COMPACTION_RECEIPT, CompactionNoticeFilter, SteerFrameParser } from "./frames.js";
import type {
  PermissionOption,
  PermissionRequestEvent,
  PromptContent,
  ProviderEvent,
} from "./provider-events.js";
import type { PromptOption, Renderer } from "./renderer.js";
import {
  AGENT_STATUS,
  COMPACTION,
  DONE,
  PROMPT_CHOICE,
  STEER_CONSUMED,
  TEXT_CHUNK,
  THINKING,
  TOOL_CALL,
  TOOL_UPDATE,
} from "./renderer.js";
import { PROMPT_NOT_SHOWN, PromptNotShownError, presentPrompt, tellPromptNotShown } from "./unshown.js";

export const APPROVAL_AUTO = "auto";
export const APPROVAL_TRUST = "trust";
export const APPROVAL_TRUST_READS = "trust-reads";
export const APPROVAL_INTERACTIVE = "interactive";
export type ApprovalMode =
  | typeof APPROVAL_AUTO
  | typeof APPROVAL_TRUST
  | typeof APPROVAL_TRUST_READS
  | typeof APPROVAL_INTERACTIVE;

/** Everything that decides a permission request, grouped into one port. */
export interface TurnPolicy {
  /** Default interactive: with no decider that denies. */
  approvalMode?: ApprovalMode;
  decider?: ApprovalDecider;
  /** Rejects EVERY request ahead of every approve path (e.g. the sender is not the operator). */
  denyAllTools?: boolean;
  /** Hook-driven auto-approve for a tool title; read per request. */
  autoApproveTool?: (toolTitle: string) => boolean;
  /** The process-wide (or session) grant; a callable so a revoke applies to the very next tool. */
  autoApproveSession?: () => boolean;
  /** Upper bound on a decider that never settles; it then denies. */
  deciderTimeoutMs?: number;
}

/**
 * Told what a turn did that outlives it (the conversation's history records it): each tool call and
 * each approval decision, titles redacted. Its failures are logged, never raised into the turn.
 */
export interface TurnObserver {
  toolCall(title: string): void;
  /** outcome: "approved", "approved always", "auto-approved" or "denied". */
  approval(title: string, outcome: string): void;
}

/** The minimal provider surface the driver needs (a Provider satisfies it). */
export interface TurnSource {
  prompt(content: string | PromptContent[]): AsyncIterable<ProviderEvent>;
  answerPermission(requestId: string, verdict: ApprovalVerdict | "cancelled"): void;
}

export interface TurnDriverOptions {
  provider: TurnSource;
  renderer: Renderer;
  sessionKey: string;
  policy?: TurnPolicy;
  audit: AuditSink;
  logger?: Logger;
  timers?: Timers;
  /** Aborted on /stop: an open approval denies instead of waiting. */
  signal?: AbortSignal;
  observer?: TurnObserver;
  /**
   * A short out-of-band line to the conversation (absent, or muted: nothing is said). It tells the
   * person that a prompt which could not be shown was denied.
   */
  notify?: (text: string) => Promise<unknown>;
  /** Told once per run, when the first answer text goes to the renderer (time to first token). */
  onFirstText?: () => void;
}

const DEFAULT_DECIDER_TIMEOUT_MS = 6 * 60_000;

const VERDICT_BY_KIND: Readonly<Record<PermissionOption["kind"], PromptOption["verdict"]>> = {
  allow_once: "approve",
  allow_always: "approve_always",
  reject_once: "deny",
  reject_always: "deny",
};

export class TurnDriver {
  private readonly o: TurnDriverOptions;
  private readonly policy: TurnPolicy;
  private readonly log: Logger;
  private readonly timers: Timers;
  private steerParser = new SteerFrameParser();
  private compactionFilter = new CompactionNoticeFilter();
  private redactor = new StreamRedactor();
  private readonly steersEmitted = new Set<string>();
  private readonly tools = new Map<string, { title: string; purpose: string }>();
  private accumulated = "";
  /** The context usage the agent last reported in this turn (the turn-status line shows it). */
  private usagePct: number | undefined;
  /** The stop reason of the last run ("error" when the provider failed). */
  stopReason = "";

  constructor(options: TurnDriverOptions) {
    this.o = options;
    this.policy = options.policy ?? {};
    this.log = options.logger ?? silentLogger;
    this.timers = options.timers ?? realClock;
  }

  /** Run one turn; returns the accumulated redacted assistant text. */
  async run(message: string | PromptContent[]): Promise<string> {
    this.reset();
    const { renderer } = this.o;
    await renderer.onTurnStart();
    let done = false;
    try {
      for await (const raw of this.o.provider.prompt(message)) {
        if (!isProviderEvent(raw)) {
          this.log.warn("malformed provider event skipped", {
            session: this.o.sessionKey,
            type: describeType(raw),
          });
          continue;
        }
        if (raw.type === "complete") {
          await this.flushText();
          this.stopReason = raw.stopReason;
          done = true;
          await this.emit({ kind: DONE, stopReason: raw.stopReason, ...this.usage() });
          continue;
        }
        // The common case stays off the async call chain: one promise per emitted chunk, none per
        // chunk the redactor holds back (this loop runs once per streamed token).
        if (raw.type === "text" && this.textIsPlain(raw.text)) {
          const emitted = this.emitText(this.redactor.push(raw.text));
          if (emitted) await emitted;
          continue;
        }
        await this.handle(raw);
      }
      if (!done) {
        // A stream that ended without `complete` still ends the turn for the renderer.
        await this.flushText();
        this.stopReason = "end_turn";
        await this.emit({ kind: DONE, stopReason: "end_turn", ...this.usage() });
      }
    } catch (error) {
      await this.flushText();
      this.stopReason = "error";
      // The reason reaches the chat (redacted, one line): a failed turn never ends in silence.
      await this.emit({ kind: DONE, stopReason: "error", error: failureReason(error), ...this.usage() });
      throw error;
    }
    return this.accumulated;
  }

  private reset(): void {
    this.steerParser = new SteerFrameParser();
    this.compactionFilter = new CompactionNoticeFilter();
    this.redactor = new StreamRedactor();
    this.steersEmitted.clear();
    this.tools.clear();
    this.accumulated = "";
    this.usagePct = undefined;
    this.stopReason = "";
  }

  private usage(): { contextUsagePct?: number } {
    return this.usagePct === undefined ? {} : { contextUsagePct: this.usagePct };
  }

  private async handle(event: Exclude<ProviderEvent, { type: "complete" }>): Promise<void> {
    switch (event.type) {
      case "text":
        return this.onText(event.text);
      case "thinking":
        return this.emit({ kind: THINKING, text: redactAll(event.text) });
      case "tool_call": {
        await this.flushText();
        const title = redactAll(event.title);
        const purpose = redactAll(event.purpose ?? "");
        this.tools.set(event.toolCallId, { title, purpose });
        this.observe((o) => o.toolCall(title));
        return this.emit({
          kind: TOOL_CALL,
          toolCallId: event.toolCallId,
          title,
          toolKind: event.kind,
          toolPurpose: purpose,
        });
      }
      // A tool's result is the agent's to read, and sub-agent activity is its own business: nothing shows.
      case "tool_result":
        return;
      case "permission_request":
        await this.flushText();
        return this.onPermission(event);
      case "compaction":
        if (event.contextUsagePct !== undefined) this.usagePct = event.contextUsagePct;
        await this.flushText();
        // The summary body is protocol, never speech: only the terse receipt is rendered.
        return this.emit({
          kind: COMPACTION,
          contextUsagePct: event.contextUsagePct,
          receipt: event.summary ? COMPACTION_RECEIPT : "",
        });
      case "steer_consumed":
        await this.flushText();
        return this.emitSteer(event.id, event.summary);
      case "subagent_activity":
        return;
      case "usage":
        if (event.size > 0) this.usagePct = Math.min(100, Math.max(0, (event.used / event.size) * 100));
        return;
      case "plan":
      case "available_commands":
        return;
      case "tool_call_update": {
        // Unknown ids included: an update may describe a call the agent announced before a resume.
        const title = event.title === undefined ? undefined : redactAll(event.title);
        if (title !== undefined) {
          const known = this.tools.get(event.toolCallId);
          this.tools.set(event.toolCallId, { title, purpose: known?.purpose ?? "" });
        }
        return this.emit({
          kind: TOOL_UPDATE,
          toolCallId: event.toolCallId,
          ...(title !== undefined ? { title } : {}),
          ...(event.kind !== undefined ? { toolKind: event.kind } : {}),
          ...(event.status !== undefined ? { status: event.status } : {}),
        });
      }
      case "agent_wait":
        return this.emit({ kind: AGENT_STATUS, status: { type: "waiting", position: event.position } });
      case "silence":
        return this.emit({ kind: AGENT_STATUS, status: { type: "silent", seconds: event.seconds } });
      case "session_resume":
        // A restored session is the normal case and says nothing; a fresh one lost the context.
        if (event.outcome === "restored") return;
        await this.flushText();
        return this.emit({
          kind: AGENT_STATUS,
          status: {
            type: "fresh_session",
            cause: event.cause,
            reason: redactAll(event.reason),
            ...(event.replayed ? { replayed: event.replayed } : {}),
          },
        });
    }
  }

  /** Framing first (compaction notice, then steer frames), then streaming redaction. */
  private async onText(text: string): Promise<void> {
    if (this.textIsPlain(text)) return this.emitText(this.redactor.push(text));
    for (const piece of this.compactionFilter.push(text)) {
      if (piece.type === "compacted") await this.emitCompactionReceipt();
      else await this.onFramedText(piece.text);
    }
  }

  private async onFramedText(text: string): Promise<void> {
    for (const piece of this.steerParser.push(text)) {
      if (piece.type === "text") await this.emitText(this.redactor.push(piece.text));
      else {
        await this.emitText(this.redactor.flush());
        await this.emitSteer(piece.id, piece.summary);
      }
    }
  }

  private async flushText(): Promise<void> {
    for (const piece of this.compactionFilter.flush()) {
      if (piece.type === "compacted") await this.emitCompactionReceipt();
      else await this.onFramedText(piece.text);
    }
    for (const piece of this.steerParser.flush()) {
      if (piece.type === "text") await this.emitText(this.redactor.push(piece.text));
      else await this.emitSteer(piece.id, piece.summary);
    }
    await this.emitText(this.redactor.flush());
  }

  private async emitCompactionReceipt(): Promise<void> {
    await this.emit({ kind: COMPACTION, contextUsagePct: undefined, receipt: COMPACTION_RECEIPT });
  }

  /** Fast path with identical output: no notice pending, no frame held, no "[" that could start one. */
  private textIsPlain(text: string): boolean {
    return this.compactionFilter.passthrough && this.steerParser.idle && !text.includes("[");
  }

  /** Undefined when there is nothing to emit (the redactor held the whole chunk back). */
  private emitText(text: string): Promise<void> | undefined {
    if (!text) return undefined;
    if (this.accumulated === "") this.firstText();
    this.accumulated += text;
    return this.emit({ kind: TEXT_CHUNK, text });
  }

  /** Exactly one STEER_CONSUMED per steer id, whichever of frame and typed event arrives first. */
  private async emitSteer(id: string, summary: string): Promise<void> {
    if (this.steersEmitted.has(id)) return;
    this.steersEmitted.add(id);
    await this.emit({ kind: STEER_CONSUMED, steerId: id, summary: redactAll(summary) });
  }

  /** A renderer failure is recorded as a delivery failure, never raised into the turn. */
  private async emit(event: Parameters<Renderer["dispatch"]>[0]): Promise<void> {
    try {
      await this.o.renderer.dispatch(event);
    } catch (error) {
      // A renderer failure must not strand the agent mid-turn; it is recorded as a delivery failure.
      this.o.renderer.deliveryFailed = true;
      this.log.error("renderer failed", {
        session: this.o.sessionKey,
        kind: event.kind,
        error: String(error),
      });
    }
  }

  private async onPermission(event: PermissionRequestEvent): Promise<void> {
    const verdict = await this.decide(event);
    try {
      this.o.provider.answerPermission(event.requestId, verdict);
    } catch (error) {
      this.log.error("permission answer failed", { session: this.o.sessionKey, error: String(error) });
    }
  }

  /** The ladder. Order matters: denyAllTools first, then the two predicates, then the mode. */
  private async decide(event: PermissionRequestEvent): Promise<ApprovalVerdict> {
    const p = this.policy;
    const known = this.tools.get(event.toolCallId);
    const title = redactAll(event.title) || known?.title || "";
    const audit = (outcome: "auto_approved" | "approved" | "denied", reason: string, always = false) => {
      this.o.audit.log("tool_permission", outcome, {
        caller: "turn_driver",
        source: "messaging",
        session: this.o.sessionKey,
        request: event.requestId,
        tool_kind: event.kind,
        reason,
      });
      const label = outcome === "auto_approved" ? "auto-approved" : always ? "approved always" : outcome;
      this.observe((o) => o.approval(title, label));
    };
    if (p.denyAllTools) {
      audit("denied", "deny_all_tools");
      return "deny";
    }
    if (p.autoApproveTool?.(title)) {
      audit("auto_approved", "hook_auto_approve");
      return "approve";
    }
    if (p.autoApproveSession?.()) {
      audit("auto_approved", "session_trust");
      return "approve";
    }
    const mode = p.approvalMode ?? APPROVAL_INTERACTIVE;
    if (mode === APPROVAL_AUTO || mode === APPROVAL_TRUST) {
      audit("auto_approved", `mode_${mode}`);
      return "approve";
    }
    if (mode === APPROVAL_TRUST_READS && event.kind === "read") {
      audit("auto_approved", "mode_trust_reads");
      return "approve";
    }
    // Interactive (and trust-reads for a non-read tool): only a decider can approve.
    if (!p.decider) {
      audit("denied", "no_decider");
      return "deny";
    }
    const { verdict, reason } = await this.askDecider(p.decider, event, title, known?.purpose ?? "");
    audit(verdict === "deny" ? "denied" : "approved", reason, verdict === "approve_always");
    return verdict;
  }

  /** A metrics hook's failure is logged, never raised into the turn. */
  private firstText(): void {
    try {
      this.o.onFirstText?.();
    } catch (error) {
      this.log.warn("first-text hook failed", { session: this.o.sessionKey, error: String(error) });
    }
  }

  private observe(fn: (observer: TurnObserver) => void): void {
    if (!this.o.observer) return;
    try {
      fn(this.o.observer);
    } catch (error) {
      this.log.warn("turn observer failed", { session: this.o.sessionKey, error: String(error) });
    }
  }

  private async askDecider(
    decider: ApprovalDecider,
    event: PermissionRequestEvent,
    toolTitle: string,
    toolPurpose: string,
  ): Promise<{ verdict: ApprovalVerdict; reason: string }> {
    const decided = (verdict: ApprovalVerdict) => ({ verdict, reason: "decider" });
    const options: PromptOption[] = event.options.map((o) => ({
      id: o.optionId,
      label: redactAll(o.name),
      verdict: VERDICT_BY_KIND[o.kind] ?? "deny",
    }));
    const request: ApprovalRequest = {
      sessionKey: this.o.sessionKey,
      requestId: event.requestId,
      toolCallId: event.toolCallId,
      toolTitle,
      toolPurpose,
      toolKind: event.kind,
      options,
    };
    const abort = new AbortController();
    const onOuterAbort = () => abort.abort(this.o.signal?.reason);
    this.o.signal?.addEventListener("abort", onOuterAbort, { once: true });
    let timer: unknown;
    try {
      const ticket = decider.open(request, abort.signal);
      const shown = await presentPrompt(
        this.o.renderer,
        {
          kind: PROMPT_CHOICE,
          requestId: event.requestId,
          options,
          toolTitle,
          toolPurpose,
          nonce: ticket.nonce,
        },
        this.log,
        this.o.sessionKey,
      );
      // A prompt nobody could see is answered by nobody: deny now instead of waiting out the window.
      if (!shown) {
        // The abort closes the prompt in the decider: a late press on it approves nothing.
        abort.abort(new PromptNotShownError(event.requestId));
        this.log.warn("approval prompt could not be shown; denied at once", {
          session: this.o.sessionKey,
          request: event.requestId,
        });
        await tellPromptNotShown(this.o.renderer, this.o.notify, this.log, this.o.sessionKey);
        return { verdict: "deny", reason: PROMPT_NOT_SHOWN };
      }
      const timeout = new Promise<ApprovalVerdict>((resolve) => {
        timer = this.timers.setTimeout(() => {
          abort.abort(new Error("decider timeout"));
          resolve("deny");
        }, this.policy.deciderTimeoutMs ?? DEFAULT_DECIDER_TIMEOUT_MS);
      });
      const verdict = await Promise.race([ticket.verdict, timeout]);
      return decided(verdict === "approve" || verdict === "approve_always" ? verdict : "deny");
    } catch (error) {
      // A decider that throws denies: failure never turns into an approval.
      this.log.error("approval decider failed", { session: this.o.sessionKey, error: String(error) });
      return decided("deny");
    } finally {
      this.timers.clearTimeout(timer);
      this.o.signal?.removeEventListener("abort", onOuterAbort);
    }
  }
}

function describeType(raw: unknown): string {
  if (typeof raw === "object" && raw !== null && typeof (raw as { type?: unknown }).type === "string") {
    return String((raw as { type: string }).type).slice(0, 40);
  }
  return typeof raw;
}

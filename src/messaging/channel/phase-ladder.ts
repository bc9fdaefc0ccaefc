/**
 * Turn-status surfacing: a reaction on the user's message that follows the turn's phase, plus the
 * one-line turn-end status. Owns no channel API and no emoji vocabulary: the sink and the phase→emoji
 * table are injected per channel, and so are the clock and timers. Layer: messaging.
 */
import { type Clock, realClock } from "../base/clock.js";
import type { Logger } from "../base/logger.js";

export const PHASES = ["queued", "thinking", "coding", "browsing", "tool", "done", "error"] as const;
export type Phase = (typeof PHASES)[number];
/** A channel may add phases of its own; an unknown phase shows its own name as the emoji. */
export type PhaseName = Phase | (string & {});

/** Land at once and end the ladder. */
export const TERMINAL_PHASES: ReadonlySet<string> = new Set<Phase>(["done", "error"]);
/** Land at once: "queued" is the receipt for "your message arrived", and a delay defeats it. */
export const IMMEDIATE_PHASES: ReadonlySet<string> = new Set<Phase>(["queued"]);

// ── Classification ─────────────────────────────────────────────────────────────────────────────

// ACP kinds plus lower-cased tool names some agents report as a kind.
const CODING_KINDS = new Set([
  "read",
  "edit",
  "delete",
  "move",
  "search",
  "execute",
  "bash",
  "write",
  "glob",
  "grep",
]);
const WEB_KINDS = new Set(["fetch", "webfetch", "websearch", "browser"]);
const CODING_TOOLS = new Set([
  "Bash",
  "Write",
  "Edit",
  "Read",
  "Glob",
  "Grep",
  "NotebookEdit",
  "fs_read",
  "fs_write",
  "execute_bash",
]);
const WEB_TOOLS = new Set(["WebFetch", "WebSearch", "Browser", "web_fetch", "web_search"]);
const RUN_TITLE_PREFIX = "Running: ";

/**
 * Map a tool onto a phase. A declared kind wins over the name, because a bring-your-own tool can be
 * named anything while still declaring a known kind; anything unrecognised is the generic "tool".
 */
export function toolToPhase(kind: string | undefined, name: string): Phase {
  const k = (kind ?? "").toLowerCase();
  if (CODING_KINDS.has(k)) return "coding";
  if (WEB_KINDS.has(k)) return "browsing";
  if (k === "think") return "thinking";
  // An MCP tool arrives fully qualified (mcp__server__Bash); the base name is what we know.
  const base = name.includes("__") ? (name.split("__").pop() ?? name) : name;
  if (CODING_TOOLS.has(base)) return "coding";
  if (WEB_TOOLS.has(base)) return "browsing";
  return "tool";
}

/**
 * The same answer for a DISPLAY title. kiro-cli titles a command "Running: <cmd>"; handed over as a
 * name it would classify every command as a generic tool, so the prefix itself means "a command ran".
 */
export function phaseForToolTitle(title: string, kind?: string): Phase {
  if (title.startsWith(RUN_TITLE_PREFIX)) return "coding";
  return toolToPhase(kind, title.trim());
}

export type PhaseEmojis = Readonly<Record<string, string | null>>;

/**
 * Apply a user's overrides onto a channel's table. `null` suppresses a phase. Unknown keys are
 * RETURNED rather than applied so the caller can report a typo instead of dropping it silently.
 */
export function mergePhaseEmojis(
  defaults: PhaseEmojis,
  overrides: PhaseEmojis = {},
): { emojis: Record<string, string | null>; unknownKeys: string[] } {
  const emojis: Record<string, string | null> = { ...defaults };
  const unknownKeys: string[] = [];
  for (const [key, value] of Object.entries(overrides)) {
    if (Object.hasOwn(defaults, key)) emojis[key] = value;
    else unknownKeys.push(key);
  }
  return { emojis, unknownKeys };
}

// ── Turn-end status line ───────────────────────────────────────────────────────────────────────

// Most-used first: a glance-level read on how close the window is to needing a compaction.
const CONTEXT_BANDS: ReadonlyArray<readonly [number, string]> = [
  [70, "🔴"],
  [50, "🟠"],
  [30, "🟡"],
];
const CONTEXT_CLEAR = "🟢";

export function formatElapsed(elapsedMs: number): string {
  const seconds = Math.max(0, Math.floor(elapsedMs / 1000));
  if (seconds < 60) return `${seconds}s`;
  return `${Math.floor(seconds / 60)}m ${seconds % 60}s`;
}

export function contextIcon(pct: number): string {
  return CONTEXT_BANDS.find(([threshold]) => pct >= threshold)?.[1] ?? CONTEXT_CLEAR;
}

// Half to even, so a figure on the .5 boundary reads the same as the reference implementation's.
function roundHalfEven(value: number): number {
  const floor = Math.floor(value);
  const diff = value - floor;
  if (diff !== 0.5) return Math.round(value);
  return floor % 2 === 0 ? floor : floor + 1;
}

/**
 * "Finished in 3m 7s · 🟡 ctx 42%". The chip appears only when usage is known: absent means unknown,
 * which is not 0% and must not render as a reassuring green.
 */
export function formatTurnStatus(status: { elapsedMs: number; contextUsagePct?: number | null }): string {
  const line = `Finished in ${formatElapsed(status.elapsedMs)}`;
  const pct = status.contextUsagePct;
  if (pct === undefined || pct === null || !Number.isFinite(pct)) return line;
  return `${line} · ${contextIcon(pct)} ctx ${roundHalfEven(pct)}%`;
}

// ── The ladder ─────────────────────────────────────────────────────────────────────────────────

/**
 * Add (`set`) or remove (`clear`) ONE emoji on ONE message; bound to that message by the channel.
 * A sink without `clear` is a replace-on-set platform (one reaction per message): the ladder then
 * skips removals and re-sets the phase emoji after a stall mark. `signal` aborts when close() gives up.
 */
export interface ReactionSink {
  set(emoji: string, signal: AbortSignal): Promise<void> | void;
  clear?(emoji: string, signal: AbortSignal): Promise<void> | void;
}

export interface LadderTimings {
  /** Hold an intermediate phase this long: a five-tool burst costs one swap of the rate budget. */
  debounceMs: number;
  stallSoftMs: number;
  stallHardMs: number;
  /** Longest close() waits for in-flight sink calls; a wedged channel must not hold teardown open. */
  closeDrainMs: number;
}

export const DEFAULT_LADDER_TIMINGS: LadderTimings = {
  debounceMs: 700,
  stallSoftMs: 15_000,
  stallHardMs: 45_000,
  closeDrainMs: 5_000,
};

/** Marks for a turn gone quiet; a null/absent one schedules no timer at all. */
export interface StallEmojis {
  soft?: string | null;
  hard?: string | null;
}

export interface LadderOptions {
  sink: ReactionSink;
  emojis: PhaseEmojis;
  stall?: StallEmojis;
  timings?: Partial<LadderTimings>;
  clock?: Clock;
  /** Required: a sink failure is logged and dropped, and a dropped failure must leave a trace. */
  logger: Pick<Logger, "debug">;
}

/**
 * Exactly one reaction represents the turn: entering a phase removes the previous emoji and adds the
 * new one. A stall watchdog adds a second mark (soft, then hard replacing it) when nothing happened
 * for a while. Every sink call runs on one serial queue, so edits land in the order they were decided.
 */
export class PhaseReactionLadder {
  private readonly sink: ReactionSink;
  private readonly emojis: Record<string, string | null>;
  private readonly stall: StallEmojis;
  private readonly timings: LadderTimings;
  private readonly timers: Clock;
  private readonly logger: Pick<Logger, "debug">;
  private readonly abort = new AbortController();

  private pendingPhase: string | null = null;
  private debounceTimer: unknown = null;
  private softTimer: unknown = null;
  private hardTimer: unknown = null;
  private paused = false;
  private finalized = false;
  private closed = false;
  private abandoned = false;
  private closing: Promise<void> | null = null;

  // Applied state: written only by queued ops, so it always matches what the sink was last told.
  private shownPhase: string | null = null;
  private shownStall: string | null = null;

  private queue: Promise<void> = Promise.resolve();
  private inFlight = 0;

  constructor(options: LadderOptions) {
    this.sink = options.sink;
    // A snapshot: a config swap mid-turn would have the ladder remove an emoji it never added.
    this.emojis = { ...options.emojis };
    this.stall = { ...options.stall };
    this.timings = { ...DEFAULT_LADDER_TIMINGS, ...options.timings };
    // realClock's timers are unref'd: decoration must never keep the process alive.
    this.timers = options.clock ?? realClock;
    this.logger = options.logger;
  }

  setPhase(phase: PhaseName): void {
    if (this.finalized || this.closed) return;
    if (TERMINAL_PHASES.has(phase)) {
      this.finalize(phase === "error");
      return;
    }
    if (IMMEDIATE_PHASES.has(phase)) {
      this.cancelDebounce();
      this.pendingPhase = null;
      const emoji = this.emojiFor(phase);
      this.enqueue(() => this.swapTo(emoji));
      this.resetWatchdog();
      return;
    }
    // Trailing debounce, re-armed per transition: only the phase that holds still reaches the channel.
    this.pendingPhase = phase;
    this.cancelDebounce();
    this.debounceTimer = this.timers.setTimeout(() => this.fireDebounce(), this.timings.debounceMs);
  }

  /** Any agent or tool activity: the turn is not stalled. */
  onProgress(): void {
    if (this.finalized || this.closed || this.paused) return;
    this.resetWatchdog();
  }

  /** The turn is legitimately waiting on a human (an approval): it must not earn a "gone quiet" mark. */
  pause(): void {
    if (this.closed) return;
    this.paused = true;
    this.cancelStallTimers();
    this.enqueue(() => this.clearStallMark());
  }

  resume(): void {
    this.paused = false;
    if (!this.finalized && !this.closed) this.resetWatchdog();
  }

  /** Land the terminal emoji and stop every timer. Idempotent. */
  finalize(error = false): void {
    if (this.finalized || this.closed) return;
    this.finalized = true;
    this.pendingPhase = null;
    this.cancelDebounce();
    this.cancelStallTimers();
    const emoji = this.emojiFor(error ? "error" : "done");
    this.enqueue(async () => {
      // Stall mark first: beside the terminal emoji it would read as still stuck.
      await this.clearStallMark();
      await this.swapTo(emoji);
    });
  }

  /**
   * Cancel timers FIRST so nothing new is scheduled, then give the sink calls already queued one
   * bounded window to land (they are the turn's last emoji). Past it, the rest is abandoned and the
   * sink's signal aborted. Idempotent.
   */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.closed = true;
    this.pendingPhase = null;
    this.cancelDebounce();
    this.cancelStallTimers();
    this.closing = this.drain();
    return this.closing;
  }

  private async drain(): Promise<void> {
    if (this.inFlight === 0) return;
    let timer: unknown = null;
    const expired = new Promise<boolean>((resolve) => {
      timer = this.timers.setTimeout(() => resolve(true), this.timings.closeDrainMs);
    });
    const timedOut = await Promise.race([this.queue.then(() => false), expired]);
    this.timers.clearTimeout(timer);
    if (timedOut) {
      this.abandoned = true;
      this.abort.abort();
      this.logger.debug("status reactions: close abandoned sink calls still in flight", {
        pending: this.inFlight,
      });
    }
  }

  private emojiFor(phase: string): string | null {
    // Own name as fallback, so a channel that adds a phase without a table entry still shows something.
    return Object.hasOwn(this.emojis, phase) ? (this.emojis[phase] ?? null) : phase;
  }

  private fireDebounce(): void {
    this.debounceTimer = null;
    const phase = this.pendingPhase;
    this.pendingPhase = null;
    if (phase === null || this.finalized || this.closed) return;
    const emoji = this.emojiFor(phase);
    this.enqueue(() => this.swapTo(emoji));
    this.resetWatchdog();
  }

  private resetWatchdog(): void {
    this.cancelStallTimers();
    this.enqueue(() => this.clearStallMark());
    if (this.paused || this.finalized || this.closed) return;
    const { soft, hard } = this.stall;
    if (soft) this.softTimer = this.timers.setTimeout(() => this.fireStall(soft), this.timings.stallSoftMs);
    if (hard) this.hardTimer = this.timers.setTimeout(() => this.fireStall(hard), this.timings.stallHardMs);
  }

  private fireStall(emoji: string): void {
    if (this.finalized || this.closed || this.paused) return;
    this.enqueue(async () => {
      if (this.finalized || this.shownStall === emoji) return;
      // The hard mark replaces the soft one rather than joining it.
      if (this.shownStall !== null) await this.sinkClear(this.shownStall);
      this.shownStall = emoji;
      await this.sinkSet(emoji);
    });
  }

  private cancelDebounce(): void {
    if (this.debounceTimer !== null) this.timers.clearTimeout(this.debounceTimer);
    this.debounceTimer = null;
  }

  private cancelStallTimers(): void {
    if (this.softTimer !== null) this.timers.clearTimeout(this.softTimer);
    if (this.hardTimer !== null) this.timers.clearTimeout(this.hardTimer);
    this.softTimer = null;
    this.hardTimer = null;
  }

  // ── queued sink operations ──

  private enqueue(op: () => Promise<void>): void {
    // Once closed, nothing new starts: a late edit would decorate a turn nobody is waiting on.
    if (this.closed) return;
    this.inFlight += 1;
    this.queue = this.queue.then(async () => {
      try {
        if (!this.abandoned) await op();
      } catch (error) {
        this.logger.debug("status reactions: ladder step failed", { error });
      } finally {
        this.inFlight -= 1;
      }
    });
  }

  private async swapTo(emoji: string | null): Promise<void> {
    if (emoji === this.shownPhase) return;
    const old = this.shownPhase;
    this.shownPhase = emoji;
    if (old !== null) await this.sinkClear(old);
    // null means the phase is suppressed: the previous emoji still goes, nothing replaces it.
    if (emoji !== null) await this.sinkSet(emoji);
  }

  private async clearStallMark(): Promise<void> {
    if (this.shownStall === null) return;
    const mark = this.shownStall;
    this.shownStall = null;
    await this.sinkClear(mark);
    // A replace-on-set sink lost the phase emoji to the mark; put it back.
    if (!this.sink.clear && this.shownPhase !== null && !this.finalized) await this.sinkSet(this.shownPhase);
  }

  private sinkSet(emoji: string): Promise<void> {
    return this.sinkCall("set", emoji, () => this.sink.set(emoji, this.abort.signal));
  }

  private sinkClear(emoji: string): Promise<void> {
    const clear = this.sink.clear?.bind(this.sink);
    if (!clear) return Promise.resolve();
    return this.sinkCall("clear", emoji, () => clear(emoji, this.abort.signal));
  }

  // A reaction is decoration: a deleted message, a revoked scope or a refused rate limit must not
  // fail the turn, so a failure is logged and dropped.
  private async sinkCall(action: string, emoji: string, call: () => Promise<void> | void): Promise<void> {
    try {
      await call();
    } catch (error) {
      this.logger.debug(`status reaction ${action} failed`, { emoji, error });
    }
  }
}

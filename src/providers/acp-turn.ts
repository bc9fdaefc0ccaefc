/**
 * One prompt turn of AcpProvider: the ordered event queue the prompt iterable drains, the pending
 * permission requests, and the flags that decide how the turn ends. Layer: providers (no I/O).
 */
import type { Timers } from "../messaging/base/clock.js";
import type { PermissionVerdict, ProviderEvent } from "../messaging/turn/provider-events.js";

type Settle = (verdict: PermissionVerdict) => void;

/** What counts as the agent answering (usage and command lists do not). */
const CONTENT_EVENTS: ReadonlySet<ProviderEvent["type"]> = new Set([
  "text",
  "thinking",
  "tool_call",
  "tool_call_update",
  "tool_result",
  "permission_request",
  "plan",
  "compaction",
  "steer_consumed",
  "subagent_activity",
]);

export class Turn {
  /** session/prompt has resolved or rejected: hasActiveTurn() is false from here on. */
  requestSettled = false;
  /** The iterable got its `complete` (or its error): nothing more is pushed. */
  finished = false;
  cancelRequested = false;
  /** parley ended the turn itself (cancel budget spent, or close()); the agent is being killed. */
  hardStopped = false;
  cancelPromise: Promise<boolean> | undefined;
  /** session/prompt was sent (false while the turn still waits for an agent slot). */
  sent = false;
  /** When the prompt was (last) sent, and when the agent last produced an event for it. */
  sentAt = 0;
  lastActivityAt = 0;
  /** The agent produced content for it (text, thinking, a tool, a permission request, a plan). */
  contentSeen = false;
  /** The post-cancel recovery already ran for this turn: it never runs twice. */
  recovered = false;
  /** Resolves when the turn finishes, however it finishes. */
  readonly done: Promise<void>;
  private readonly permissions = new Map<string, Settle>();
  private readonly queue: ProviderEvent[] = [];
  private failure: { error: unknown } | undefined;
  private wake: (() => void) | undefined;
  private resolveDone!: () => void;

  constructor(private readonly now: () => number = Date.now) {
    this.done = new Promise<void>((resolve) => {
      this.resolveDone = resolve;
    });
  }

  /** An event from the agent: it counts as activity (silence resets) and maybe as content. */
  push(event: ProviderEvent): void {
    if (this.finished) return;
    this.lastActivityAt = this.now();
    if (CONTENT_EVENTS.has(event.type)) this.contentSeen = true;
    this.queue.push(event);
    this.notify();
  }

  /** An event parley adds itself (a wait, a resume, a silence notice): not the agent's activity. */
  notice(event: ProviderEvent): void {
    if (this.finished) return;
    this.queue.push(event);
    this.notify();
  }

  get permissionsOpen(): boolean {
    return this.permissions.size > 0;
  }

  /** Ends the turn with its `complete` event. Idempotent: the first ending wins. */
  complete(stopReason: string): void {
    if (this.finished) return;
    this.queue.push({ type: "complete", stopReason });
    this.end();
  }

  /** Ends the turn with an error thrown from the iterable, after the events already queued. */
  fail(error: unknown): void {
    if (this.finished) return;
    this.failure = { error };
    this.end();
  }

  addPermission(requestId: string, settle: Settle): void {
    this.permissions.set(requestId, settle);
  }

  removePermission(requestId: string): void {
    this.permissions.delete(requestId);
  }

  answerPermission(requestId: string, verdict: PermissionVerdict): boolean {
    const settle = this.permissions.get(requestId);
    if (!settle) return false;
    settle(verdict);
    return true;
  }

  /** A cancelled turn answers every open permission request with "cancelled" (ACP requires it). */
  cancelPermissions(): void {
    for (const settle of [...this.permissions.values()]) settle("cancelled");
  }

  async *drain(): AsyncGenerator<ProviderEvent> {
    while (true) {
      const next = this.queue.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.finished) {
        if (this.failure) throw this.failure.error;
        return;
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  private end(): void {
    this.finished = true;
    this.cancelPermissions();
    this.resolveDone();
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

/**
 * Emits `silence` (a notice, not activity) at each multiple of `every` ms without agent output
 * while the turn's prompt is in flight. A permission request waiting on the user is not the
 * agent's silence: the clock restarts while one is open. `every` 0 = never.
 */
export function watchSilence(turn: Turn, every: number, timers: Timers, now: () => number): void {
  if (every <= 0) return;
  let reported = 0;
  const check = (): void => {
    if (turn.finished || turn.requestSettled) return;
    if (turn.permissionsOpen) {
      turn.lastActivityAt = now();
      reported = 0;
    }
    const quiet = now() - turn.lastActivityAt;
    const multiple = Math.floor(quiet / every);
    if (multiple > reported) {
      reported = multiple;
      turn.notice({ type: "silence", seconds: Math.floor(quiet / 1000) });
    } else if (multiple === 0) {
      reported = 0;
    }
    timers.setTimeout(check, Math.max(50, every * (multiple + 1) - quiet));
  };
  timers.setTimeout(check, every);
}

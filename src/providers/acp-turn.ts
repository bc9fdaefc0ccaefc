/**
 * One prompt turn of AcpProvider: the ordered event queue the prompt iterable drains, the pending
 * permission requests, and the flags that decide how the turn ends. Layer: providers (no I/O).
 */
import type { PermissionVerdict, ProviderEvent } from "../messaging/turn/provider-events.js";

type Settle = (verdict: PermissionVerdict) => void;

export class Turn {
  /** session/prompt has resolved or rejected: hasActiveTurn() is false from here on. */
  requestSettled = false;
  /** The iterable got its `complete` (or its error): nothing more is pushed. */
  finished = false;
  cancelRequested = false;
  /** parley ended the turn itself (cancel budget spent, or close()); the agent is being killed. */
  hardStopped = false;
  cancelPromise: Promise<boolean> | undefined;
  /** Resolves when the turn finishes, however it finishes. */
  readonly done: Promise<void>;
  private readonly permissions = new Map<string, Settle>();
  private readonly queue: ProviderEvent[] = [];
  private failure: { error: unknown } | undefined;
  private wake: (() => void) | undefined;
  private resolveDone!: () => void;

  constructor() {
    this.done = new Promise<void>((resolve) => {
      this.resolveDone = resolve;
    });
  }

  push(event: ProviderEvent): void {
    if (this.finished) return;
    this.queue.push(event);
    this.notify();
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

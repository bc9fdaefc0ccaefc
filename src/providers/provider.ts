import type { PermissionVerdict, PromptContent, ProviderEvent } from "../messaging/turn/provider-events.js";

export type { PromptContent };

/**
 * One agent process bound to one session: what SessionManager and TurnDriver need, nothing more.
 * Implementations: AcpProvider (a real subprocess), ScriptedProvider (tests, golden transcripts).
 */
export interface Provider {
  /** Spawn / handshake. Idempotent. */
  start(): Promise<void>;
  /** Run one turn. The iterable ends after a `complete` event (or throws a ProviderError). */
  prompt(content: PromptContent[] | string): AsyncIterable<ProviderEvent>;
  /** Answer a permission request the provider yielded. Unknown ids are ignored (already settled). */
  answerPermission(requestId: string, verdict: PermissionVerdict): void;
  /** Cooperative cancel; resolves true when the agent acknowledged within waitAckTimeout ms. */
  cancel(opts?: { waitAckTimeout?: number }): Promise<boolean>;
  /** True only while a prompt is genuinely in flight (not during post-turn bookkeeping). */
  hasActiveTurn(): boolean;
  readonly supportsSteer: boolean;
  /** Fold text into the running turn; resolves false when it could not be injected. */
  steer(text: string): Promise<boolean>;
  readonly cwd: string;
  /** Last reported context usage 0..100, undefined when unknown. */
  readonly contextUsagePct: number | undefined;
  /** Hard stop: close stdin, SIGTERM, SIGKILL after a grace window. Idempotent. */
  close(): Promise<void>;
}

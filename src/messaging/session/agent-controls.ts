/**
 * Agent controls a channel can expose as commands: the agent's model selector and context
 * compaction. Optional provider members (an agent may offer neither), plus the shared handlers
 * every channel calls. Shared handlers: take a session key (never a platform address) and RETURN
 * the reply text; the channel only posts it. Layer: messaging (imports only messaging modules).
 */
import { ParleyError } from "../base/errors.js";
import { oneLine } from "../text/clip.js";
import { COMPACTION_RECEIPT } from "../turn/frames.js";
import type { ManagedProvider, SessionManager } from "./session-manager.js";

/** One choice of the agent's model selector. `id` is the agent's own value id. */
export interface ModelOption {
  id: string;
  name: string;
  description?: string;
}

/** The agent's model selector as last reported by the agent. */
export interface ModelMenu {
  /** The agent's id of the selector (ACP: the config option id). */
  configId: string;
  /** The option id the agent reports as current; undefined when it did not say. */
  current: string | undefined;
  options: ModelOption[];
}

export interface CompactOutcome {
  /** True only when the agent finished the compaction normally. */
  ok: boolean;
  /** Context usage 0..100 the agent reported during the compaction, when it did. */
  contextUsagePct?: number;
  /** Why it did not succeed (ok false). */
  error?: string;
}

/** Optional provider members; a provider without them simply offers neither control. */
export interface AgentControls {
  /** The model selector the agent advertises; undefined when it offers none. */
  modelMenu?(): ModelMenu | undefined;
  /** Asks the agent to switch; resolves with the menu as the agent answered it. */
  setModel?(optionId: string): Promise<ModelMenu>;
  /** Whether the agent advertised a compaction command. */
  supportsCompaction?(): boolean;
  /** Runs the agent's compaction (rejects when it cannot start, e.g. a turn is running). */
  compact?(): Promise<CompactOutcome>;
}

type ControlledProvider = ManagedProvider & AgentControls;

/** Error text from an agent or provider is untrusted and may be long: one line, bounded. */
const MAX_ERROR_CHARS = 200;
/** Names come from the agent: one line, bounded, so a menu entry cannot flood a chat. */
const MAX_NAME_CHARS = 80;

export const COMPACT_BUSY = "⏳ A turn is running; ask for compaction again when it ends.";
export const COMPACT_NOTHING = "Nothing to compact yet: this conversation has no agent session.";
export const MODEL_NOT_OFFERED = "This agent does not offer a choice of model.";
export const MODEL_BUSY = "⏳ A turn is running; choose the model again when it ends.";
export const MODEL_UNKNOWN = "That model is not one the agent offers: ask for the list again.";
export const MODEL_CURRENT_UNKNOWN = "⚠️ The agent did not say which model is now current.";

export function compactUnsupportedReply(newCommand: string): string {
  return `This agent does not offer compaction. To free its context, start a fresh session with ${newCommand} (the agent forgets this conversation).`;
}

export function compactedReply(contextUsagePct: number | undefined): string {
  if (contextUsagePct === undefined) return COMPACTION_RECEIPT;
  return `${COMPACTION_RECEIPT} Context usage is now ${formatPct(contextUsagePct)}.`;
}

export function compactFailedReply(error: unknown): string {
  return `⚠️ Compaction failed: ${oneLine(errorMessage(error), MAX_ERROR_CHARS)}`;
}

export function agentStartFailedReply(error: unknown): string {
  return `⚠️ The agent could not be started: ${oneLine(errorMessage(error), MAX_ERROR_CHARS)}`;
}

export function setModelFailedReply(error: unknown): string {
  return `⚠️ Could not switch the model: ${oneLine(errorMessage(error), MAX_ERROR_CHARS)}`;
}

export function modelSetReply(name: string): string {
  return `✅ Model: ${name}`;
}

export function modelNotSwitchedReply(name: string): string {
  return `⚠️ The agent reports ${name} as the current model, not the one chosen.`;
}

/** Compacts the session's agent context (the agent's own command, run to completion). Returns the reply text. */
export async function compactSession<P extends ControlledProvider>(
  sessions: SessionManager<P>,
  key: string,
  copy: { newCommand: string },
): Promise<string> {
  // Under the session lock: compacting beside a turn interleaves JSON-RPC and races the transcript.
  const release = sessions.tryAcquire(key);
  if (!release) {
    // activeKeys, not existingProvider: awaiting a provider mid-spawn would stall this reply.
    return sessions.activeKeys().includes(key) ? COMPACT_BUSY : COMPACT_NOTHING;
  }
  try {
    return await compactHeldSession(sessions, key, copy);
  } finally {
    release();
  }
}

/**
 * The compaction itself, for a caller that already holds the session's lock (the post-turn context
 * step runs inside the turn's own hold). Returns the reply text.
 */
export async function compactHeldSession<P extends ControlledProvider>(
  sessions: SessionManager<P>,
  key: string,
  copy: { newCommand: string },
): Promise<string> {
  // existingProvider, never provider(): spawning an agent only to compact its empty context is waste.
  const provider = await sessions.existingProvider(key);
  if (!provider) return COMPACT_NOTHING;
  // A turn started outside the lock still owns the agent: never send a prompt beside it.
  if (provider.hasActiveTurn()) return COMPACT_BUSY;
  // Compaction exists only when the agent advertised it; the fresh session is the honest fallback.
  if (!provider.compact || !provider.supportsCompaction?.()) return compactUnsupportedReply(copy.newCommand);
  let outcome: CompactOutcome;
  try {
    outcome = await provider.compact();
  } catch (error) {
    // A dead agent stays dead: replace it now (the model choice carries over) so the next message
    // starts cleanly instead of meeting the same error, as a failed turn does.
    if (agentIsGone(error)) await sessions.hardStop(key);
    return compactFailedReply(error);
  }
  // The receipt states what already happened: success only when the agent finished normally.
  if (!outcome.ok) return compactFailedReply(outcome.error ?? "the agent did not finish the compaction");
  return compactedReply(outcome.contextUsagePct);
}

export type ModelMenuResult = { menu: ModelMenu } | { reply: string };

/** The session's model menu, starting its agent if needed (the menu comes from the agent). */
export async function loadModelMenu<P extends ControlledProvider>(
  sessions: SessionManager<P>,
  key: string,
): Promise<ModelMenuResult> {
  let provider: P;
  try {
    // provider(), not existingProvider(): the selector is only known once the agent has started.
    provider = await sessions.provider(key);
  } catch (error) {
    return { reply: agentStartFailedReply(error) };
  }
  const menu = provider.modelMenu?.();
  // A selector with nothing to choose from, or no way to choose, is no selector.
  if (!menu || menu.options.length === 0 || !provider.setModel) return { reply: MODEL_NOT_OFFERED };
  return { menu };
}

/** Switches the session's model to `optionId` (an id from the menu). Returns the reply text. */
export async function applyModelChoice<P extends ControlledProvider>(
  sessions: SessionManager<P>,
  key: string,
  optionId: string,
): Promise<string> {
  // Under the session lock: a switch mid-turn would change the model under a running answer.
  const release = sessions.tryAcquire(key);
  if (!release) return MODEL_BUSY;
  try {
    let provider: P;
    try {
      provider = await sessions.provider(key);
    } catch (error) {
      return agentStartFailedReply(error);
    }
    // A turn started outside the lock still owns the agent: never switch under it.
    if (provider.hasActiveTurn()) return MODEL_BUSY;
    const menu = provider.modelMenu?.();
    if (!menu || !provider.setModel) return MODEL_NOT_OFFERED;
    // Only ids from the menu the agent currently advertises: a stale or forged id never reaches it.
    if (!menu.options.some((o) => o.id === optionId)) return MODEL_UNKNOWN;
    let after: ModelMenu;
    try {
      after = await provider.setModel(optionId);
    } catch (error) {
      return setModelFailedReply(error);
    }
    // The receipt names what the agent says is current, not what was asked for.
    const current = after.options.find((o) => o.id === after.current);
    if (after.current === undefined) return MODEL_CURRENT_UNKNOWN;
    const name = displayName(current?.name ?? "") || displayName(after.current);
    if (after.current !== optionId) return modelNotSwitchedReply(name);
    // A replacement agent (crash, hard stop) starts on its default: hand it the user's choice again.
    sessions.carryOver(key, "model", async (p) => {
      if (p.modelMenu?.()?.options.some((o) => o.id === optionId)) await p.setModel?.(optionId);
    });
    return modelSetReply(name);
  } finally {
    release();
  }
}

/** The agent process exited or broke the protocol: nothing more can be asked of it. */
function agentIsGone(error: unknown): boolean {
  return (
    error instanceof ParleyError && (error.code === "PROVIDER_EXITED" || error.code === "PROVIDER_PROTOCOL")
  );
}

/** "6%", "<1%" for a small non-zero figure (never "0%" for a context that is not empty). */
export function formatPct(pct: number): string {
  if (pct > 0 && pct < 1) return "<1%";
  return `${Math.round(pct)}%`;
}

function displayName(name: string): string {
  return oneLine(name, MAX_NAME_CHARS);
}

function errorMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.trim() === "" ? "unknown error" : text;
}

/**
 * driveTurn: the ONE shared turn pipeline every channel dispatcher calls, so a channel adds only its
 * address and its widgets. Mute check -> origin + mirror bind -> identity -> TurnDriver -> post-turn
 * bookkeeping (each step isolated) -> release. Ordering and isolation are the contract.
 */
import type { AuditSink } from "./audit.js";
import type { Clock } from "./clock.js";
import { realClock } from "./clock.js";
import type { DirectiveConsumer, TurnPolicy, TurnSource } from "./driver.js";
import { TurnDriver } from "./driver.js";
import type { PromptContent } from "./events.js";
import type { ChannelLink, LinkStore } from "./link.js";
import { bindOriginMirror, channelNamespaceOf } from "./link.js";
import type { Logger } from "./logger.js";
import { silentLogger } from "./logger.js";
import type { Renderer } from "./renderer.js";
import { SilentRenderer } from "./renderer.js";
import type { Release } from "./semaphore.js";
import type { ManagedProvider, SessionManager } from "./session-manager.js";

/** The store slice the pipeline needs; the SessionStore satisfies it. */
export interface TurnStore extends LinkStore {
  /** Whether deliveries to this session's origin (or its mirror) are paused. */
  isMuted(sessionKey: string, leg: "origin" | "mirror"): boolean;
  setOriginLink(sessionKey: string, link: ChannelLink): void;
}

/**
 * The single mute predicate. A channel-born session's key IS its conversation, so a turn arriving
 * in that namespace is the origin; anything else came over a mirror binding. Fails OPEN: a muted
 * chat that stays noisy is a visible bug, a live chat silently dead is worse.
 */
export function deliveryIsMuted(
  store: Pick<TurnStore, "isMuted"> | undefined,
  sessionKey: string,
  channelType: string,
  logger: Logger = silentLogger,
): boolean {
  if (!store) return false;
  try {
    const leg = channelNamespaceOf(sessionKey) === channelType ? "origin" : "mirror";
    return store.isMuted(sessionKey, leg);
  } catch (error) {
    logger.warn("mute check failed; delivering", { session: sessionKey, error: String(error) });
    return false;
  }
}

export interface TurnResult {
  sessionKey: string;
  channelType: string;
  prompt: string;
  text: string;
  stopReason: string;
  ok: boolean;
  error?: unknown;
  elapsedMs: number;
  contextUsagePct: number | undefined;
}

/** One isolated post-turn step (usage, transcript, auto-title, audit): its failure is logged only. */
export type PostTurnStep = { name: string; run: (result: TurnResult) => Promise<void> | void };

export type ContextBuilder = (
  text: string,
  opts: { sessionKey: string; minimalContext: boolean },
) => string | PromptContent[] | Promise<string | PromptContent[]>;

export interface PipelineProvider extends ManagedProvider, TurnSource {
  readonly contextUsagePct: number | undefined;
}

export interface PipelineDeps {
  sessions: SessionManager<PipelineProvider>;
  store?: TurnStore;
  audit: AuditSink;
  logger?: Logger;
  clock?: Clock;
  contextBuilder?: ContextBuilder;
  /** Publishes the turn's identity (session key) for tools that need it; failures are logged. */
  identityHook?: (sessionKey: string, provider: PipelineProvider) => Promise<void> | void;
  postTurn?: PostTurnStep[];
  directiveConsumerFor?: (sessionKey: string) => DirectiveConsumer | undefined;
  isDirectiveTool?: (meta: Record<string, unknown> | undefined) => boolean;
}

export interface ChannelTurn {
  sessionKey: string;
  channelType: string;
  text: string;
  renderer: Renderer;
  /** The held session semaphore; released in the pipeline's finally. */
  release: Release;
  /** This conversation, bound as origin AND mirror every turn (bindings can vanish; re-assert). */
  origin?: ChannelLink;
  policy?: TurnPolicy;
  minimalContext?: boolean;
  signal?: AbortSignal;
}

export async function driveTurn(deps: PipelineDeps, turn: ChannelTurn): Promise<TurnResult> {
  const log = deps.logger ?? silentLogger;
  const clock = deps.clock ?? realClock;
  const started = clock.now();
  const muted = deliveryIsMuted(deps.store, turn.sessionKey, turn.channelType, log);
  // The turn still runs when muted: only the writes back are dropped, typing indicator included.
  const renderer = muted ? new SilentRenderer(turn.renderer.capabilities) : turn.renderer;
  const result: TurnResult = {
    sessionKey: turn.sessionKey,
    channelType: turn.channelType,
    prompt: turn.text,
    text: "",
    stopReason: "",
    ok: false,
    elapsedMs: 0,
    contextUsagePct: undefined,
  };
  try {
    if (deps.store && turn.origin) {
      // Guarded as a pair: losing the mirror costs a convenience, raising costs the user the answer.
      try {
        deps.store.setOriginLink(turn.sessionKey, turn.origin);
        await bindOriginMirror(deps.store, {
          key: turn.sessionKey,
          location: turn.origin,
          logger: { info: (m, d) => log.info(m, d), debug: (m, d) => log.debug(m, d) },
        });
      } catch (error) {
        log.warn("origin bind failed", { session: turn.sessionKey, error: String(error) });
      }
    }
    const provider = await deps.sessions.provider(turn.sessionKey);
    if (deps.identityHook) {
      try {
        await deps.identityHook(turn.sessionKey, provider);
      } catch (error) {
        log.warn("identity hook failed", { session: turn.sessionKey, error: String(error) });
      }
    }
    const prompt = deps.contextBuilder
      ? await deps.contextBuilder(turn.text, {
          sessionKey: turn.sessionKey,
          minimalContext: turn.minimalContext ?? false,
        })
      : turn.text;
    const directiveConsumer = deps.directiveConsumerFor?.(turn.sessionKey);
    const driver = new TurnDriver({
      provider,
      renderer,
      sessionKey: turn.sessionKey,
      policy: turn.policy ?? {},
      audit: deps.audit,
      logger: log,
      timers: clock,
      ...(turn.signal ? { signal: turn.signal } : {}),
      ...(directiveConsumer ? { directiveConsumer } : {}),
      ...(deps.isDirectiveTool ? { isDirectiveTool: deps.isDirectiveTool } : {}),
    });
    result.text = await driver.run(prompt);
    result.stopReason = driver.stopReason;
    result.contextUsagePct = provider.contextUsagePct;
    // A turn whose renderer reports that part of the answer did not land is a failure.
    result.ok = !renderer.deliveryFailed;
  } catch (error) {
    result.error = error;
    result.stopReason ||= "error";
    log.error("turn failed", { session: turn.sessionKey, error: String(error) });
    // A provider that failed mid-turn (exit, protocol garbage) stays failed: replace it so the next
    // message starts cleanly instead of meeting the same error.
    deps.sessions.hardStop(turn.sessionKey).catch((e) => log.warn("respawn failed", { error: String(e) }));
  } finally {
    try {
      await renderer.close(result.ok ? undefined : "turn_failed");
    } catch (error) {
      log.error("renderer close failed", { session: turn.sessionKey, error: String(error) });
    }
    result.elapsedMs = clock.now() - started;
    for (const step of deps.postTurn ?? []) {
      try {
        await step.run(result);
      } catch (error) {
        log.warn("post-turn step failed", {
          session: turn.sessionKey,
          step: step.name,
          error: String(error),
        });
      }
    }
    log.info("turn", {
      session: turn.sessionKey,
      channel: turn.channelType,
      stopReason: result.stopReason,
      ok: result.ok,
      ms: result.elapsedMs,
      chars: result.text.length,
      muted,
    });
    turn.release();
  }
  return result;
}

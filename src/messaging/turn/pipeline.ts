/**
 * runTurnPipeline: the ONE shared turn pipeline every channel dispatcher calls, so a channel adds only its
 * address and its widgets. Mute check -> origin + mirror bind -> identity -> TurnDriver -> post-turn
 * bookkeeping (each step isolated) -> release. Ordering and isolation are the contract.
 * Attachments are ingested around the TurnDriver step, in the frame that awaits the turn, and their
 * temp files are deleted when it ends (attachments.ts says why never at arrival).
 */

import type { Clock } from "../base/clock.js";
import { realClock } from "../base/clock.js";
import type { Logger } from "../base/logger.js";
import { silentLogger } from "../base/logger.js";
import type { Release } from "../base/mutex.js";
import type { Attachment, IngestLimits, IngestRefusal } from "../files/ingest.js";
import { withIngestedAttachments } from "../files/ingest.js";
import type { AgentPromptCapabilities } from "../files/prompt-blocks.js";
import { appendBlocks, attachmentBlocks, refusalLines } from "../files/prompt-blocks.js";
import type { AuditSink } from "../security/audit.js";
import type { AgentControls } from "../session/agent-controls.js";
import type { ConversationHistory, TurnRecord, UserLine } from "../session/history.js";
import { ephemeralTurnId } from "../session/history.js";
import type { ChannelLink, LinkStore } from "../session/keys.js";
import { bindOriginMirror, channelNamespaceOf } from "../session/keys.js";
import type { ManagedProvider, SessionManager } from "../session/session-manager.js";
import type { TranscriptAppend } from "../store/port.js";
import type { TurnPolicy, TurnSource } from "./driver.js";
import { TurnDriver } from "./driver.js";
import { failureReason, startFailureReason } from "./failure.js";
import type { PromptContent } from "./provider-events.js";
import type { Renderer } from "./renderer.js";
import { DONE, SilentRenderer } from "./renderer.js";

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
  /** Part of what the renderer had to show did not land (a failed post or edit). */
  deliveryFailed?: boolean;
  /** The conversation the turn was shown in (a mirror elsewhere is delivered after it). */
  renderedAt?: ChannelLink;
}

/** One isolated post-turn step (usage, transcript, auto-title, audit): its failure is logged only. */
export type PostTurnStep = { name: string; run: (result: TurnResult) => Promise<void> | void };

export interface PipelineProvider extends ManagedProvider, TurnSource, AgentControls {
  readonly contextUsagePct: number | undefined;
  /** What the agent said it accepts in a prompt (ACP initialize); absent = text and links only. */
  readonly promptCapabilities?: AgentPromptCapabilities;
}

/** stopReason of a turn whose message was only attachments and none could be read: no agent call. */
export const NOTHING_READABLE = "nothing_readable";

export interface TurnPipelineDeps {
  sessions: SessionManager<PipelineProvider>;
  store?: TurnStore;
  audit: AuditSink;
  logger?: Logger;
  clock?: Clock;
  postTurn?: PostTurnStep[];
  /** Where each turn's lines are recorded (user messages, tools, approvals, the final answer). */
  history?: ConversationHistory;
  /** Parent of each turn's private attachment temp dir (default: os.tmpdir()). */
  ingestTmpRoot?: string;
  /**
   * Told when a turn's first answer text reaches the renderer, with the time since the turn began
   * (the gateway's time-to-first-token metric). Its failure never reaches the turn.
   */
  onFirstText?: (channelType: string, elapsedMs: number) => void;
}

export interface TurnRequest {
  sessionKey: string;
  channelType: string;
  text: string;
  renderer: Renderer;
  /** The held session semaphore; released in the pipeline's finally. */
  release: Release;
  /**
   * Names the turn in the history (and the delivery ledger): stable across a restart for a turn
   * that answers a journaled message (`intake:<id>@<received>`), so its resumed run writes the same lines.
   */
  turnId?: string;
  /** The user messages this turn answers, as the history keeps them (default: `text`, no files). */
  userLines?: readonly UserLine[];
  /**
   * Whether the turn's final text goes into the history (default: always). A turn a shutdown cut
   * short is answered again after the restart, under the same turn id: that answer is the one kept.
   */
  recordAnswer?: (result: TurnResult) => boolean;
  /**
   * A turn that ended well and whose answer is kept: called once the renderer closed (the answer
   * is delivered) with the answer's history line (undefined: none to record), to write it in one
   * step with the end of the messages the turn answered. False: nothing written (the line is then
   * appended on its own).
   */
  commitAnswer?: (result: TurnResult, line: TranscriptAppend | undefined) => Promise<boolean>;
  /** This conversation, bound as origin AND mirror every turn (bindings can vanish; re-assert). */
  origin?: ChannelLink;
  /** Where the turn is shown (the conversation, also for a resumed session): a mirror elsewhere gets it too. */
  renderedAt?: ChannelLink;
  policy?: TurnPolicy;
  signal?: AbortSignal;
  /**
   * Files that came with the message(s), as RAW byte sources: fetched only now, inside this turn's
   * frame, and deleted when it ends (a queued message's files must outlive the wait, so they travel
   * as descriptors and are read by the turn that answers them).
   */
  attachments?: readonly Attachment[];
  /** Overrides of the shared per-turn ingest caps (DEFAULT_INGEST_LIMITS otherwise). */
  ingestLimits?: Partial<IngestLimits>;
  /**
   * A short out-of-band line to this conversation: the refusal lines for files that could not be
   * read, the notice for an approval prompt denied because it could not be shown. Without it those
   * reach only the agent's prompt (and the log).
   */
  notify?: (text: string) => Promise<void>;
}

export async function runTurnPipeline(deps: TurnPipelineDeps, turn: TurnRequest): Promise<TurnResult> {
  const log = deps.logger ?? silentLogger;
  const clock = deps.clock ?? realClock;
  const started = clock.now();
  const muted = deliveryIsMuted(deps.store, turn.sessionKey, turn.channelType, log);
  // The turn still runs when muted: only the writes back are dropped, typing indicator included.
  const renderer = muted ? new SilentRenderer(turn.renderer.capabilities) : turn.renderer;
  // "ingest" from the first byte fetched until the agent is prompted: a failure in that window is
  // not the provider's, and must not cost the session its agent.
  let stage: "setup" | "ingest" | "prompted" = "setup";
  let record: TurnRecord | undefined;
  const result: TurnResult = {
    sessionKey: turn.sessionKey,
    channelType: turn.channelType,
    prompt: turn.text,
    text: "",
    stopReason: "",
    ok: false,
    elapsedMs: 0,
    contextUsagePct: undefined,
    ...(turn.renderedAt ? { renderedAt: turn.renderedAt } : {}),
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
    // Begun before the agent starts: what the user said is history even if the agent then fails.
    record = deps.history?.begin({
      sessionKey: turn.sessionKey,
      turnId: turn.turnId ?? ephemeralTurnId(),
      users: turn.userLines ?? [{ text: turn.text, attachments: [] }],
    });
    const provider = await deps.sessions.provider(turn.sessionKey);
    const driver = new TurnDriver({
      provider,
      renderer,
      sessionKey: turn.sessionKey,
      policy: turn.policy ?? {},
      audit: deps.audit,
      logger: log,
      timers: clock,
      ...(turn.signal ? { signal: turn.signal } : {}),
      ...(record ? { observer: record } : {}),
      // Muted: nothing is written back, the line about an unshown prompt included.
      ...(turn.notify && !muted ? { notify: turn.notify } : {}),
      ...(deps.onFirstText
        ? { onFirstText: () => deps.onFirstText?.(turn.channelType, clock.now() - started) }
        : {}),
    });
    const run = async (prompt: string | PromptContent[]): Promise<void> => {
      stage = "prompted";
      result.text = await driver.run(prompt);
      result.stopReason = driver.stopReason;
      result.contextUsagePct = provider.contextUsagePct;
      // A turn whose renderer reports that part of the answer did not land is a failure.
      result.ok = !renderer.deliveryFailed;
    };
    const attachments = turn.attachments ?? [];
    if (attachments.length === 0) await run(turn.text);
    else {
      stage = "ingest";
      // The prompt is built and the agent runs INSIDE the ingest callback: the temp files it names
      // live exactly as long as this turn and are deleted in the ingest's finally, even on a throw.
      await withIngestedAttachments(
        attachments,
        turn.ingestLimits,
        async (ingested) => {
          await reportRefusals(ingested.refusals, turn, muted, log);
          // Only attachments, none readable: the user was told; an empty turn would only confuse.
          if (ingested.files.length === 0 && turn.text.trim() === "") {
            result.stopReason = NOTHING_READABLE;
            result.ok = true;
            return;
          }
          const extra = await attachmentBlocks(ingested, provider.promptCapabilities ?? {});
          await run(appendBlocks(turn.text, extra));
        },
        {
          logger: log,
          signal: downloadSignal(turn.signal, () => stage === "ingest"),
          ...(deps.ingestTmpRoot ? { tmpRoot: deps.ingestTmpRoot } : {}),
        },
      );
    }
  } catch (error) {
    result.error = error;
    // A stop that landed while the files were still downloading ended the turn, not a failure.
    result.stopReason ||= stage === "ingest" && turn.signal?.aborted ? "cancelled" : "error";
    log.error("turn failed", { session: turn.sessionKey, error: String(error) });
    if (!driverEnded(stage)) {
      // The driver never ran (the agent could not be started, a file could not be fetched), so it
      // could not end the turn on screen: the renderer hears how it ended here, with the reason.
      const ending =
        result.stopReason === "error"
          ? {
              stopReason: "error",
              error: stage === "setup" ? startFailureReason(error) : failureReason(error),
            }
          : { stopReason: result.stopReason };
      try {
        await renderer.dispatch({ kind: DONE, ...ending });
      } catch (e) {
        log.error("renderer failed to show the failure", { session: turn.sessionKey, error: String(e) });
      }
    }
    // A provider that failed mid-turn (exit, protocol garbage) stays failed: replace it so the next
    // message starts cleanly instead of meeting the same error. An ingest that failed before the
    // agent was prompted is not the agent's failure: the agent is kept.
    if (stage !== "ingest")
      deps.sessions.hardStop(turn.sessionKey).catch((e) => log.warn("respawn failed", { error: String(e) }));
  } finally {
    try {
      await renderer.close(result.ok ? undefined : "turn_failed");
    } catch (error) {
      log.error("renderer close failed", { session: turn.sessionKey, error: String(error) });
    }
    // After the close: its last edits can fail too.
    if (renderer.deliveryFailed) result.deliveryFailed = true;
    result.elapsedMs = clock.now() - started;
    try {
      const kept = turn.recordAnswer?.(result) !== false;
      const commitAnswer = turn.commitAnswer;
      const commit =
        kept && result.ok && commitAnswer
          ? (line: TranscriptAppend | undefined) => commitAnswer(result, line)
          : undefined;
      if (record) await record.end(kept ? result.text : "", commit);
      else await commit?.(undefined);
    } catch (error) {
      log.warn("recording the turn failed", { session: turn.sessionKey, error: String(error) });
    }
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

/** The driver was handed the prompt: it ended the turn on screen itself (with the reason). */
function driverEnded(stage: "setup" | "ingest" | "prompted"): boolean {
  return stage === "prompted";
}

/**
 * The turn's stop signal, narrowed to the download: it stops the fetches, but once the agent is
 * prompted the driver owns the stop (a cancelled agent still ends its turn and is rendered), so the
 * ingest must not abandon the turn and delete its files under the running agent.
 */
function downloadSignal(signal: AbortSignal | undefined, downloading: () => boolean): AbortSignal {
  const narrowed = new AbortController();
  if (!signal) return narrowed.signal;
  const onAbort = () => {
    if (downloading()) narrowed.abort(signal.reason);
  };
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  return narrowed.signal;
}

/** Refusals are visible: one line per file to the user (unless muted like the answer), and logged. */
async function reportRefusals(
  refusals: readonly IngestRefusal[],
  turn: TurnRequest,
  muted: boolean,
  log: Logger,
): Promise<void> {
  if (refusals.length === 0) return;
  log.info("attachments refused", { session: turn.sessionKey, reasons: refusals.map((r) => r.reason) });
  if (muted || !turn.notify) return;
  try {
    await turn.notify(refusalLines(refusals));
  } catch (error) {
    // The agent's prompt still names the refused files; a lost notice must not cost the answer.
    log.warn("refusal notice failed", { session: turn.sessionKey, error: String(error) });
  }
}

/**
 * Conversation auto-titling: after the first good exchange, one short tool-free background turn names
 * the conversation. ONE claim tracker for every channel, so two turns that resolve to the same key
 * spend one naming turn between them; a person's name always wins, in-process (the manual mark) and
 * across restarts (the store's "no title on the record" guard). Renaming the platform conversation
 * is a caller-supplied callback. Layer: messaging.
 */

import type { Timers } from "../base/clock.js";
import { realClock } from "../base/clock.js";
import type { Logger } from "../base/logger.js";
import { silentLogger } from "../base/logger.js";
import type { AuditSink } from "../security/audit.js";
import { redactAll } from "../security/index.js";
import { clip } from "../text/clip.js";
import { TurnDriver } from "../turn/driver.js";
import type { PipelineProvider, PostTurnStep } from "../turn/pipeline.js";
import { SilentRenderer } from "../turn/renderer.js";
import type { SessionManager } from "./session-manager.js";
import type { SessionStore } from "./session-store.js";

export const TITLE_LRU_MAX = 10_000;
export const TITLE_TURN_TIMEOUT_MS = 30_000;
export const TITLE_INPUT_CHARS = 200;
export const TITLE_MAX_CHARS = 80;
export const TITLE_KIND_AUTO = "auto";
export const TITLE_KIND_MANUAL = "manual";
/** The model's "no good title yet" verdict; the claim is released so a later exchange retries. */
export const TITLE_SKIP = "SKIP";

type ClaimKind = typeof TITLE_KIND_AUTO | typeof TITLE_KIND_MANUAL;

/** The shared claim tracker, bounded by recency. Every method is synchronous on purpose. */
export class TitleClaims {
  private readonly claims = new Map<string, ClaimKind>();
  constructor(private readonly max = TITLE_LRU_MAX) {}

  private put(key: string, kind: ClaimKind): void {
    this.claims.delete(key);
    this.claims.set(key, kind);
    while (this.claims.size > this.max) {
      const oldest = this.claims.keys().next().value;
      if (oldest === undefined) break;
      this.claims.delete(oldest);
    }
  }

  /** Check-and-mark in one step: true for exactly one caller per key until released. */
  tryClaim(key: string): boolean {
    if (this.claims.has(key)) return false;
    this.put(key, TITLE_KIND_AUTO);
    return true;
  }

  releaseClaim(key: string): void {
    // A manual mark is a person's decision, not a claim to hand back.
    if (this.claims.get(key) === TITLE_KIND_AUTO) this.claims.delete(key);
  }

  /** A person named the conversation: a naming turn still streaming must not overwrite it. */
  markManual(key: string): void {
    this.put(key, TITLE_KIND_MANUAL);
  }

  isManual(key: string): boolean {
    return this.claims.get(key) === TITLE_KIND_MANUAL;
  }
}

/** The one tracker every channel shares. */
export const sharedTitleClaims = new TitleClaims();

export function buildTitlePrompt(userText: string, assistantText: string): string {
  return [
    "Name this conversation in at most six words. Reply with the title only: no quotes, no",
    `punctuation at the end, no tools. If there is nothing to name yet, reply ${TITLE_SKIP}.`,
    "",
    `User: ${clip(userText.trim(), TITLE_INPUT_CHARS)}`,
    `Assistant: ${clip(assistantText.trim(), TITLE_INPUT_CHARS)}`,
  ].join("\n");
}

const QUOTES = `"'\`“”‘’«»`;

/**
 * First non-empty line, quoting and a "Title:" label trimmed, `<`/`>` dropped (a link in Slack's
 * mrkdwn, a tag in Telegram's HTML, and a title is rendered as-is on both), redacted, then capped.
 * "" means no usable title (including the SKIP verdict).
 */
export function cleanTitle(raw: string): string {
  const line = raw.split(/\r?\n/).find((l) => l.trim() !== "") ?? "";
  let title = line
    .trim()
    .replace(/^#+\s*/, "")
    .replace(/^\*\*(.*)\*\*$/, "$1");
  title = title.replace(/^title\s*:\s*/i, "");
  let start = 0;
  let end = title.length;
  while (start < end && QUOTES.includes(title.charAt(start))) start++;
  while (end > start && QUOTES.includes(title.charAt(end - 1))) end--;
  title = title.slice(start, end).replace(/[<>]/g, "").replace(/\s+/g, " ").trim();
  title = title.replace(/[.。]+$/, "").trim();
  if (title === "" || title.toUpperCase() === TITLE_SKIP) return "";
  title = redactAll(title);
  const points = Array.from(title);
  return points.length <= TITLE_MAX_CHARS ? title : points.slice(0, TITLE_MAX_CHARS).join("").trimEnd();
}

/** A tool-free, single-turn generator (the caller's background session must reject every tool). */
export type TitleGenerator = (prompt: string, opts: { signal: AbortSignal }) => Promise<string>;

export interface AutoTitleArgs {
  sessionKey: string;
  userText: string;
  assistantText: string;
  /** The channel; audit label and spend attribution. */
  source: string;
  generate: TitleGenerator;
  store: Pick<SessionStore, "setTitle" | "titleOf">;
  audit: AuditSink;
  claims?: TitleClaims;
  /** Renames the platform conversation; omitted by a channel with nothing renameable. */
  setChannelTitle?: (title: string) => Promise<void> | void;
  timers?: Timers;
  timeoutMs?: number;
  logger?: Logger;
}

async function withTimeout(
  generate: TitleGenerator,
  prompt: string,
  timers: Timers,
  ms: number,
): Promise<string> {
  const controller = new AbortController();
  let handle: unknown;
  const timeout = new Promise<never>((_, reject) => {
    handle = timers.setTimeout(() => {
      const error = new Error(`title turn timed out after ${ms} ms`);
      // The generator is told too, so an unanswered turn does not keep the background session busy.
      controller.abort(error);
      reject(error);
    }, ms);
  });
  try {
    return await Promise.race([generate(prompt, { signal: controller.signal }), timeout]);
  } finally {
    timers.clearTimeout(handle);
  }
}

/**
 * Run the naming turn for a conversation whose claim the CALLER already took (tryClaim). Returns the
 * applied title, or "". SKIP and failures release the claim so the next exchange retries; a manual
 * title (in-process or on the record) leaves both the record and the platform name alone.
 */
export async function maybeAutoTitle(args: AutoTitleArgs): Promise<string> {
  const claims = args.claims ?? sharedTitleClaims;
  const log = args.logger ?? silentLogger;
  const key = args.sessionKey;
  const operation = `${args.source}.auto_title`;
  let title: string;
  try {
    const raw = await withTimeout(
      args.generate,
      buildTitlePrompt(args.userText, args.assistantText),
      args.timers ?? realClock,
      args.timeoutMs ?? TITLE_TURN_TIMEOUT_MS,
    );
    title = cleanTitle(raw);
  } catch (error) {
    claims.releaseClaim(key);
    log.warn("auto-title turn failed; will retry on the next exchange", {
      session: key,
      error: String(error),
    });
    args.audit.log(operation, "failed", { session: key, reason: "turn_failed" });
    return "";
  }
  if (title === "") {
    claims.releaseClaim(key);
    args.audit.log(operation, "dropped", { session: key, reason: "skip" });
    return "";
  }
  // A rename that landed while the turn streamed wins over what the turn produced.
  if (claims.isManual(key) || !args.store.setTitle(key, title, TITLE_KIND_AUTO)) {
    // Only a person's name is a refusal; an auto title already on the record (another process
    // named it first) simply stands.
    if (claims.isManual(key) || args.store.titleOf(key)?.kind !== TITLE_KIND_AUTO)
      args.audit.log(operation, "refused", { session: key, reason: "manual_title" });
    else args.audit.log(operation, "dropped", { session: key, reason: "already_titled" });
    return "";
  }
  args.audit.log(operation, "allowed", { session: key });
  if (args.setChannelTitle) {
    try {
      await args.setChannelTitle(title);
    } catch (error) {
      log.warn("platform rename failed; the stored title stands", { session: key, error: String(error) });
    }
  }
  return title;
}

/** A person named the conversation: record it as manual in the store AND the tracker. */
export function recordManualTitle(
  store: Pick<SessionStore, "setTitle">,
  sessionKey: string,
  title: string,
  claims: TitleClaims = sharedTitleClaims,
): void {
  claims.markManual(sessionKey);
  store.setTitle(sessionKey, title, TITLE_KIND_MANUAL);
}

export interface AutoTitleStepOptions
  extends Omit<AutoTitleArgs, "sessionKey" | "userText" | "assistantText"> {
  /** The privacy write gate: a restricted session persists nothing, a title included. */
  isRestricted: (sessionKey: string) => boolean;
}

/**
 * The post-turn step: a good, non-empty, unrestricted turn claims and fires the naming turn WITHOUT
 * awaiting it, because runTurnPipeline holds the session lock until its steps return.
 */
export function autoTitleStep(options: AutoTitleStepOptions): PostTurnStep {
  const claims = options.claims ?? sharedTitleClaims;
  const log = options.logger ?? silentLogger;
  return {
    name: "auto-title",
    run: (result) => {
      if (!result.ok || result.text.trim() === "" || options.isRestricted(result.sessionKey)) return;
      // The tracker starts empty after a restart; the record says whether the conversation is named.
      if (options.store.titleOf(result.sessionKey) !== null) return;
      if (!claims.tryClaim(result.sessionKey)) return;
      maybeAutoTitle({
        ...options,
        claims,
        sessionKey: result.sessionKey,
        userText: result.prompt,
        assistantText: result.text,
      }).catch((error: unknown) => {
        claims.releaseClaim(result.sessionKey);
        log.error("auto-title failed", { session: result.sessionKey, error: String(error) });
      });
    },
  };
}

/**
 * The naming turn on the conversation's own agent, as a SEPARATE, fresh, tool-free session: a fresh
 * one each time, because one titling session shared across conversations would carry one user's
 * words into another's title. Serialized on its key; the session is dropped when the title is back.
 */
export function agentTitleGenerator(
  sessions: SessionManager<PipelineProvider>,
  o: { audit: AuditSink; logger?: Logger; key?: string },
): TitleGenerator {
  const key = o.key ?? "titles:default";
  return async (prompt, { signal }) => {
    const release = await sessions.acquire(key);
    try {
      const provider = await sessions.provider(key);
      const driver = new TurnDriver({
        provider,
        renderer: new SilentRenderer(),
        sessionKey: key,
        // A title needs no tool: every request is refused without asking anyone.
        policy: { denyAllTools: true },
        audit: o.audit,
        logger: o.logger ?? silentLogger,
        signal,
      });
      return await driver.run(prompt);
    } finally {
      release();
      await sessions.evict(key).catch((error: unknown) =>
        (o.logger ?? silentLogger).warn("auto-title: dropping the naming session failed", {
          error: String(error),
        }),
      );
    }
  };
}

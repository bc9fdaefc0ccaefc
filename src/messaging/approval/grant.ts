/**
 * The channel-neutral half of the shared chat commands: the ONE process-wide auto-approve grant
 * (SafetyOverride) and /yolo's ladder over it, the dashboard-link TTL vocabulary, the host-listing
 * predicate and shared keyword reply text. Every handler returns reply TEXT and takes no platform
 * address: the send is the only per-channel half. Layer: messaging.
 */

import type { Clock, TimerHandle } from "../base/clock.js";
import { realClock } from "../base/clock.js";
import type { Logger } from "../base/logger.js";
import { silentLogger } from "../base/logger.js";
import type { AuditSink } from "../security/audit.js";

export const DEFAULT_YOLO_TTL_MS = 60 * 60_000;
export const MAX_YOLO_TTL_MS = 24 * 60 * 60_000;

export interface OverrideGrant {
  expiresAtMs: number;
  source: string;
  caller: string;
}

/** Optional durable expiry, so a restart inside the window keeps the grant the operator armed. */
export interface OverridePersistence {
  load(): OverrideGrant | null;
  save(grant: OverrideGrant | null): void | Promise<void>;
}

export interface SafetyOverrideOptions {
  audit: AuditSink;
  clock?: Clock;
  defaultTtlMs?: number;
  maxTtlMs?: number;
  persistence?: OverridePersistence;
  logger?: Logger;
  /** Told when a grant lapses (e.g. to notify the owner: silence about a lapsing grant is the bug). */
  onExpire?: (grant: OverrideGrant) => void;
}

export interface ArmResult {
  expiresAtMs: number;
  ttlMs: number;
  renewed: boolean;
}

/**
 * The ONE auto-approve grant. Every surface that arms it (dashboard toggle, /yolo, an approval card)
 * goes through this object, so "is YOLO on?" has one answer, one expiry and one audit trail.
 * `isActive()` reads the clock per call, so expiry needs no timer to be correct; the timer only makes
 * the lapse audited (and announced) when nobody happens to ask.
 */
export class SafetyOverride {
  private grant: OverrideGrant | null = null;
  private timer: TimerHandle | undefined;
  private readonly clock: Clock;
  private readonly log: Logger;
  readonly defaultTtlMs: number;
  readonly maxTtlMs: number;

  constructor(private readonly o: SafetyOverrideOptions) {
    this.clock = o.clock ?? realClock;
    this.log = o.logger ?? silentLogger;
    this.maxTtlMs = o.maxTtlMs ?? MAX_YOLO_TTL_MS;
    this.defaultTtlMs = Math.min(o.defaultTtlMs ?? DEFAULT_YOLO_TTL_MS, this.maxTtlMs);
    this.restore();
  }

  private restore(): void {
    if (!this.o.persistence) return;
    let saved: OverrideGrant | null;
    try {
      saved = this.o.persistence.load();
    } catch (error) {
      // Starting disarmed is the safe direction; the failure is still recorded.
      this.log.error("safety override: persisted grant unreadable; starting disarmed", {
        error: String(error),
      });
      this.o.audit.log("safety_override", "failed", { reason: "load_failed" });
      return;
    }
    if (!saved) return;
    // A restored expiry is clamped so a hand-edited file cannot grant beyond the ceiling.
    const expiresAtMs = Math.min(saved.expiresAtMs, this.clock.now() + this.maxTtlMs);
    if (!(expiresAtMs > this.clock.now())) {
      this.o.audit.log("safety_override", "expired", { source: saved.source, reason: "while_stopped" });
      this.persist(null);
      return;
    }
    this.grant = { ...saved, expiresAtMs };
    this.o.audit.log("safety_override", "granted", {
      source: saved.source,
      caller: saved.caller,
      reason: "restored",
    });
    this.scheduleExpiry();
  }

  private persist(grant: OverrideGrant | null): void {
    if (!this.o.persistence) return;
    const report = (error: unknown) => {
      this.log.error("safety override: persisting the grant failed", {
        armed: grant !== null,
        error: String(error),
      });
      this.o.audit.log("safety_override", "failed", { reason: "persist_failed", armed: grant !== null });
    };
    try {
      const pending = this.o.persistence.save(grant ? { ...grant } : null);
      if (pending) pending.catch(report);
    } catch (error) {
      report(error);
    }
  }

  private scheduleExpiry(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.grant) return;
    const delay = Math.max(0, this.grant.expiresAtMs - this.clock.now());
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.expireIfDue();
    }, delay);
  }

  private expireIfDue(): void {
    const grant = this.grant;
    if (!grant || this.clock.now() < grant.expiresAtMs) return;
    this.grant = null;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.o.audit.log("safety_override", "expired", { source: grant.source, caller: grant.caller });
    this.persist(null);
    try {
      this.o.onExpire?.({ ...grant });
    } catch (error) {
      this.log.warn("safety override: onExpire hook failed", { error: String(error) });
    }
  }

  /** Read per request (never captured at turn start), so a revoke lands on the very next tool. */
  isActive(): boolean {
    this.expireIfDue();
    return this.grant !== null;
  }

  remainingMs(): number {
    return this.isActive() && this.grant ? this.grant.expiresAtMs - this.clock.now() : 0;
  }

  current(): OverrideGrant | null {
    return this.isActive() && this.grant ? { ...this.grant } : null;
  }

  /** Arm, or renew from now when already armed. A TTL above the ceiling is clamped to it. */
  arm(opts: { ttlMs?: number; source: string; caller: string }): ArmResult {
    const requested = opts.ttlMs ?? this.defaultTtlMs;
    if (!Number.isFinite(requested) || requested <= 0)
      throw new RangeError(`TTL must be positive: ${requested}`);
    const ttlMs = Math.min(requested, this.maxTtlMs);
    const renewed = this.isActive();
    const expiresAtMs = this.clock.now() + ttlMs;
    this.grant = { expiresAtMs, source: opts.source, caller: opts.caller };
    this.o.audit.log("safety_override", "granted", {
      source: opts.source,
      caller: opts.caller,
      ttl_s: Math.round(ttlMs / 1000),
      renewed,
    });
    this.persist(this.grant);
    this.scheduleExpiry();
    return { expiresAtMs, ttlMs, renewed };
  }

  /** Disarm; true when a grant was active. */
  disarm(opts: { source: string; caller: string }): boolean {
    const wasActive = this.isActive();
    this.grant = null;
    this.scheduleExpiry();
    if (wasActive) {
      this.o.audit.log("safety_override", "revoked", { source: opts.source, caller: opts.caller });
      this.persist(null);
    }
    return wasActive;
  }
}

// ── /yolo ───────────────────────────────────────────────────────────────────────────────────────

/** The one sentence naming what the grant covers, shared by the confirmation and any arming button. */
export const YOLO_SCOPE_NOTE =
  "Auto-approve skips tool approval prompts in every conversation, on every channel and the dashboard, " +
  "until it expires (not just this chat); hard denies still apply.";

/** Command spellings are data: a channel picks one instead of restating the sentences. */
export interface YoloPhrasing {
  on: string;
  off: string;
  usage: string;
}
export const YOLO_PHRASING_PLAIN: YoloPhrasing = {
  on: "/yolo on",
  off: "/yolo off",
  usage: "/yolo on [30m|2h] | /yolo off | /yolo status",
};
export const YOLO_PHRASING_MARKDOWN: YoloPhrasing = {
  on: "`/yolo on`",
  off: "`/yolo off`",
  usage: "`/yolo on [30m|2h]` | `/yolo off` | `/yolo status`",
};

const UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** "30m", "2h", "1h30m", "90s", "1d"; bare digits are minutes. Seconds, or null when unparseable. */
export function parseSimpleDuration(text: string): number | null {
  const t = text.trim().toLowerCase();
  if (/^[0-9]{1,6}$/.test(t)) return Number(t) * 60;
  if (!/^(?:[0-9]{1,6}[smhd])+$/.test(t)) return null;
  let total = 0;
  for (const m of t.matchAll(/([0-9]+)([smhd])/g)) total += Number(m[1]) * (UNIT_SECONDS[m[2] ?? "s"] ?? 1);
  return total;
}

export interface YoloCommandOptions {
  override: SafetyOverride;
  /** The surface (also the grant's audit source). */
  source: string;
  /** The trusted sender id. */
  caller: string;
  phrasing: YoloPhrasing;
}

/** /yolo [on [ttl] | <ttl> | off | status]. Returns reply text; arming and auditing live in the grant. */
export function runYoloCommand(arg: string, opts: YoloCommandOptions): string {
  const { override, phrasing } = opts;
  const words = arg.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const [verb = "status", ttlWord, extra] = words;
  if (extra !== undefined) return `Usage: ${phrasing.usage}`;
  if (verb === "status" && ttlWord === undefined) {
    if (!override.isActive()) {
      return `Auto-approve is off. Send ${phrasing.on} to enable it for ${formatTtl(override.defaultTtlMs / 1000)}.`;
    }
    const left = formatTtl(override.remainingMs() / 1000);
    return `⚠️ Auto-approve is ON (${left} left). ${YOLO_SCOPE_NOTE} Send ${phrasing.off} to turn it off.`;
  }
  if (verb === "off" && ttlWord === undefined) {
    return override.disarm({ source: opts.source, caller: opts.caller })
      ? "✅ Auto-approve is off. Tools will ask for approval again."
      : "Auto-approve was already off.";
  }
  let ttlText: string | undefined;
  if (verb === "on") ttlText = ttlWord;
  else if (ttlWord === undefined) ttlText = verb;
  else return `Usage: ${phrasing.usage}`;
  let ttlMs: number | undefined;
  if (ttlText !== undefined) {
    const seconds = parseSimpleDuration(ttlText);
    if (seconds === null || seconds <= 0) return `Usage: ${phrasing.usage}`;
    ttlMs = seconds * 1000;
  }
  const armed = override.arm({
    ...(ttlMs === undefined ? {} : { ttlMs }),
    source: opts.source,
    caller: opts.caller,
  });
  const span = formatTtl(armed.ttlMs / 1000);
  const head = armed.renewed
    ? `⚠️ Auto-approve renewed for ${span} from now.`
    : `⚠️ Auto-approve is ON for ${span}.`;
  const clamped = ttlMs !== undefined && armed.ttlMs < ttlMs ? ` (capped at ${span})` : "";
  return `${head}${clamped} ${YOLO_SCOPE_NOTE} Send ${phrasing.off} to turn it off.`;
}

// ── dashboard-link TTL ──────────────────────────────────────────────────────────────────────────

export const DEFAULT_DASHBOARD_TTL_SECONDS = 3600;
export const MAX_DASHBOARD_TTL_SECONDS = 24 * 3600;

/** A TTL argument that cannot be used; the message is user-facing reply text. */
export class DashboardTtlError extends RangeError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "DashboardTtlError";
  }
}

/**
 * The login-link lifetime from the already-extracted ARGUMENT (never the message: which word is the
 * TTL is each channel's grammar). `parseDuration` is injected because it belongs to the dashboard,
 * which this layer never imports; it returns seconds or throws. Empty = the default; capped.
 */
export function parseDashboardTtl(
  arg: string | undefined,
  opts: { parseDuration: (text: string) => number; defaultSeconds?: number; maxSeconds?: number },
): number {
  const max = opts.maxSeconds ?? MAX_DASHBOARD_TTL_SECONDS;
  const fallback = Math.min(opts.defaultSeconds ?? DEFAULT_DASHBOARD_TTL_SECONDS, max);
  const text = (arg ?? "").trim();
  if (text === "") return fallback;
  const hint = `Use a duration like 30m or 2h (at most ${formatTtl(max)}).`;
  let seconds: number;
  try {
    seconds = opts.parseDuration(text);
  } catch (error) {
    throw new DashboardTtlError(`I couldn't read "${text.slice(0, 40)}" as a duration. ${hint}`, {
      cause: error,
    });
  }
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new DashboardTtlError(`A link lifetime must be positive. ${hint}`);
  }
  return Math.min(Math.floor(seconds), max);
}

/** 5400 -> "1h 30m"; every non-zero unit, largest first; fractional seconds are dropped. */
export function formatTtl(seconds: number): string {
  let rest = Number.isFinite(seconds) && seconds > 0 ? Math.floor(seconds) : 0;
  if (rest === 0) return "0s";
  const parts: string[] = [];
  for (const [unit, size] of [
    ["d", 86_400],
    ["h", 3600],
    ["m", 60],
    ["s", 1],
  ] as const) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0) parts.push(`${n}${unit}`);
  }
  return parts.join(" ");
}

// ── host-listing predicate ──────────────────────────────────────────────────────────────────────

/** `/task run status` IS `status`: the string classified and the string dispatched must not differ. */
export function normalizeTaskArg(arg: string): string {
  const t = arg.trim().replace(/\s+/g, " ");
  return /^run\s/i.test(t) ? t.slice(4).trim() : t;
}

const LISTING_COMMANDS = new Set(["sessions", "cron"]);
const LISTING_ARGS = new Set(["list", "status"]);

/**
 * Whether a command's REPLY lists host-wide state (every subagent, every session, every job) rather
 * than this conversation's. Scope follows the argument: `/spawn <task>` is conversation-scoped while
 * `/spawn list` renders everything running on the box. A channel refuses these where the audience is
 * wider than the operator (a group Topic).
 */
export function listsHostState(command: string, arg = ""): boolean {
  const cmd = command.trim().replace(/^[/!]/, "").toLowerCase();
  if (LISTING_COMMANDS.has(cmd)) return true;
  if (cmd !== "spawn" && cmd !== "bg" && cmd !== "task") return false;
  const normalized = cmd === "task" ? normalizeTaskArg(arg) : arg.trim();
  const first = normalized.split(" ")[0]?.toLowerCase() ?? "";
  return LISTING_ARGS.has(first);
}

// ── shared keyword reply text ───────────────────────────────────────────────────────────────────

/** One copy of the help lines for commands every channel shares; `prefix` is the channel's sigil. */
export function sharedHelpLines(prefix = "/"): string[] {
  return [
    `${prefix}new — start a fresh conversation`,
    `${prefix}stop — stop the running turn and drop queued messages`,
    `${prefix}link — mirror dashboard replies for this conversation here`,
    `${prefix}unlink — stop mirroring into this conversation`,
    `${prefix}temporary — this conversation reads no memory and saves nothing`,
    `${prefix}incognito — this conversation may read memory but saves nothing`,
    `${prefix}yolo on|off|status — auto-approve tools everywhere for a while`,
  ];
}

export const UNKNOWN_COMMAND_REPLY = "I don't know that command. Here is what I understand:";

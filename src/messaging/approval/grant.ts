/**
 * The auto-approve grant: ONE process-wide switch that skips tool approval prompts everywhere until
 * it expires, and /yolo, the one command that speaks to it. Every surface that arms it goes through
 * this object, so "is auto-approve on?" has one answer, one expiry and one audit trail. Only a
 * channel's owner, in a direct conversation, may arm it: the grant reaches every channel, the
 * operator's own web chat included, so an allow-listed guest must not be able to switch prompts off.
 */

import type { Clock, TimerHandle } from "../base/clock.js";
import { realClock } from "../base/clock.js";
import type { Logger } from "../base/logger.js";
import { silentLogger } from "../base/logger.js";
import type { AuditSink } from "../security/audit.js";

export const DEFAULT_GRANT_TTL_MS = 60 * 60_000;
export const MAX_GRANT_TTL_MS = 24 * 60 * 60_000;

/** Who armed the grant, from where, and how to tell them it lapsed. */
export interface GrantHolder {
  /** The channel that armed it. */
  source: string;
  /** The trusted sender id. */
  caller: string;
  /** Tells the holder, on their channel, that the grant lapsed (silence about a lapse is the bug). */
  notify?: (text: string) => Promise<void> | void;
}

export interface ActiveGrant {
  expiresAtMs: number;
  source: string;
  caller: string;
}

/** An arm (the grant now) or a disarm (null), and when it was made. */
export interface GrantChange {
  state: ActiveGrant | null;
  atMs: number;
}

export interface AutoApproveGrantOptions {
  audit: AuditSink;
  clock?: Clock;
  defaultTtlMs?: number;
  maxTtlMs?: number;
  logger?: Logger;
}

/** Who asks /yolo, and from where: the kit fills it from the message, never from its text. */
export interface GrantCaller extends GrantHolder {
  /** The channel's configured owner. */
  owner: boolean;
  /** A one-to-one conversation (a shared room would show the grant to everyone in it). */
  direct: boolean;
  /** How this channel spells `/yolo` (`/yolo`, `!yolo`), for the replies. */
  command: string;
}

export const GRANT_LAPSED = "⌛ Auto-approve has lapsed: tools ask for approval again.";

/** The one sentence naming what the grant covers. */
export const GRANT_SCOPE_NOTE =
  "Auto-approve skips tool approval prompts in every conversation, on every channel and the web chat, " +
  "until it expires (not just this chat); hard denies still apply.";

export class AutoApproveGrant {
  /** `armedHere`: by a command on this gateway, which audits its lapse and tells its holder. */
  private grant: (ActiveGrant & { notify?: GrantHolder["notify"]; armedHere: boolean }) | null = null;
  private readonly watchers = new Set<(change: GrantChange) => void>();
  /** When the grant was last armed or disarmed (here, or adopted from another gateway). */
  private changedAtMs = 0;
  private timer: TimerHandle | undefined;
  private readonly clock: Clock;
  private readonly log: Logger;
  readonly defaultTtlMs: number;
  readonly maxTtlMs: number;

  constructor(private readonly o: AutoApproveGrantOptions) {
    this.clock = o.clock ?? realClock;
    this.log = o.logger ?? silentLogger;
    this.maxTtlMs = o.maxTtlMs ?? MAX_GRANT_TTL_MS;
    this.defaultTtlMs = Math.min(o.defaultTtlMs ?? DEFAULT_GRANT_TTL_MS, this.maxTtlMs);
  }

  /** Read per request (never captured at turn start), so a revoke lands on the very next tool. */
  isActive(): boolean {
    this.expireIfDue();
    return this.grant !== null;
  }

  remainingMs(): number {
    return this.isActive() && this.grant ? this.grant.expiresAtMs - this.clock.now() : 0;
  }

  current(): ActiveGrant | null {
    if (!this.isActive() || !this.grant) return null;
    const { expiresAtMs, source, caller } = this.grant;
    return { expiresAtMs, source, caller };
  }

  /** Arm, or renew from now when already armed. A TTL above the ceiling is clamped to it. */
  arm(holder: GrantHolder & { ttlMs?: number }): { expiresAtMs: number; ttlMs: number; renewed: boolean } {
    const requested = holder.ttlMs ?? this.defaultTtlMs;
    if (!Number.isFinite(requested) || requested <= 0)
      throw new RangeError(`TTL must be positive: ${requested}`);
    const ttlMs = Math.min(requested, this.maxTtlMs);
    const renewed = this.isActive();
    const expiresAtMs = this.clock.now() + ttlMs;
    this.grant = {
      expiresAtMs,
      source: holder.source,
      caller: holder.caller,
      armedHere: true,
      ...(holder.notify ? { notify: holder.notify } : {}),
    };
    this.o.audit.log("auto_approve", "granted", {
      source: holder.source,
      caller: holder.caller,
      ttl_s: Math.round(ttlMs / 1000),
      renewed,
    });
    this.scheduleExpiry();
    this.changed();
    return { expiresAtMs, ttlMs, renewed };
  }

  /** Disarm; true when a grant was active. */
  disarm(by: { source: string; caller: string }): boolean {
    const wasActive = this.isActive();
    this.grant = null;
    this.scheduleExpiry();
    if (wasActive) this.o.audit.log("auto_approve", "revoked", { source: by.source, caller: by.caller });
    this.changed();
    return wasActive;
  }

  /**
   * Hear of every arm and disarm made here (several gateways share one grant: docs/scale-out.md);
   * not of lapses, which every gateway sees at the same expiry, nor of `adopt`.
   */
  onChange(watch: (change: GrantChange) => void): () => void {
    this.watchers.add(watch);
    return () => this.watchers.delete(watch);
  }

  /**
   * Take an arm or disarm made on another gateway, unless a later change is already known here (the
   * latest change wins, by the clocks the gateways keep in sync). No audit row and no lapse notice
   * here: the gateway where it was made writes and tells them.
   */
  adopt(change: GrantChange): void {
    if (change.atMs <= this.changedAtMs) return;
    this.changedAtMs = change.atMs;
    const state = change.state;
    this.grant =
      state && state.expiresAtMs > this.clock.now()
        ? { expiresAtMs: state.expiresAtMs, source: state.source, caller: state.caller, armedHere: false }
        : null;
    this.scheduleExpiry();
  }

  private changed(): void {
    // Strictly increasing: two changes within one millisecond still order.
    this.changedAtMs = Math.max(this.clock.now(), this.changedAtMs + 1);
    const change: GrantChange = { state: this.current(), atMs: this.changedAtMs };
    for (const watch of [...this.watchers]) {
      try {
        watch(change);
      } catch (error) {
        this.log.warn("auto-approve: a change watcher failed", { error: String(error) });
      }
    }
  }

  /** One line for /status. */
  describe(): string {
    const g = this.current();
    if (!g) return "off";
    return `ON until ${new Date(g.expiresAtMs).toISOString().slice(11, 16)} UTC (${formatTtl(this.remainingMs() / 1000)} left, armed on ${g.source})`;
  }

  /** /yolo [on [ttl] | <ttl> | off | status]: returns reply text; arming and auditing live here. */
  command(arg: string, who: GrantCaller): string {
    const usage = `Usage: \`${who.command} on [30m|2h]\` | \`${who.command} off\` | \`${who.command} status\``;
    const words = arg.trim().toLowerCase().split(/\s+/).filter(Boolean);
    const [verb = "status", ttlWord, extra] = words;
    if (extra !== undefined) return usage;
    if (verb === "status" && ttlWord === undefined) {
      if (!this.isActive())
        return `Auto-approve is off.${who.owner ? ` Send \`${who.command} on\` to enable it for ${formatTtl(this.defaultTtlMs / 1000)}.` : ""}`;
      return `⚠️ Auto-approve is ${this.describe()}. ${GRANT_SCOPE_NOTE}`;
    }
    if (verb === "off" && ttlWord === undefined) {
      // Switching prompts back ON is the safe direction: any admitted user may.
      return this.disarm(who)
        ? "✅ Auto-approve is off. Tools will ask for approval again."
        : "Auto-approve was already off.";
    }
    let ttlText: string | undefined;
    if (verb === "on") ttlText = ttlWord;
    else if (ttlWord === undefined) ttlText = verb;
    else return usage;
    let ttlMs: number | undefined;
    if (ttlText !== undefined) {
      const seconds = parseSimpleDuration(ttlText);
      if (seconds === null || seconds <= 0) return usage;
      ttlMs = seconds * 1000;
    }
    if (!who.owner || !who.direct) {
      const reason = who.owner ? "not_direct" : "not_owner";
      this.o.audit.log("auto_approve", "refused", { source: who.source, caller: who.caller, reason });
      return who.owner
        ? `Auto-approve can only be switched on in a direct conversation with the bot.`
        : "Only the owner of this bot can switch auto-approve on.";
    }
    const armed = this.arm({ ...who, ...(ttlMs === undefined ? {} : { ttlMs }) });
    const span = formatTtl(armed.ttlMs / 1000);
    const head = armed.renewed
      ? `⚠️ Auto-approve renewed for ${span} from now.`
      : `⚠️ Auto-approve is ON for ${span}.`;
    const clamped = ttlMs !== undefined && armed.ttlMs < ttlMs ? ` (capped at ${span})` : "";
    return `${head}${clamped} ${GRANT_SCOPE_NOTE} Send \`${who.command} off\` to turn it off.`;
  }

  private scheduleExpiry(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.grant) return;
    const delay = Math.max(0, this.grant.expiresAtMs - this.clock.now());
    // The timer only makes the lapse audited and announced when nobody asks; isActive() is correct alone.
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
    // One lapse, one audit row and one notice: on the gateway where it was armed.
    if (!grant.armedHere) return;
    this.o.audit.log("auto_approve", "expired", { source: grant.source, caller: grant.caller });
    if (!grant.notify) return;
    try {
      const pending = grant.notify(GRANT_LAPSED);
      if (pending)
        pending.catch((error) =>
          this.log.warn("auto-approve: lapse notice failed", { error: String(error) }),
        );
    } catch (error) {
      this.log.warn("auto-approve: lapse notice failed", { error: String(error) });
    }
  }
}

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

/**
 * Session privacy modes, keyed by SESSION KEY (never a platform thread id, so one copy serves every
 * channel): /temporary (no memory reads, no writes, no persistence) and /incognito (reads allowed,
 * writes blocked). Two bounded in-memory trackers, hydrated from the durable store flag so a mode
 * survives a restart; one `isRestricted` predicate; the inline-token strippers; the audit, with the
 * channel as a parameter. Layer: messaging.
 */

import type { Logger } from "../base/logger.js";
import { silentLogger } from "../base/logger.js";
import type { AuditSink } from "../security/audit.js";
import type { SessionStore } from "./session-store.js";

export const MODE_TEMPORARY = "temporary";
export const MODE_INCOGNITO = "incognito";
export type PrivacyMode = typeof MODE_TEMPORARY | typeof MODE_INCOGNITO;

/** Parse order: which token is stripped first. Strength is ranked separately (STRICTNESS). */
export const PRIVACY_MODES: readonly PrivacyMode[] = [MODE_TEMPORARY, MODE_INCOGNITO];
/** Temporary forbids a superset of what incognito forbids, so it ranks higher. */
export const STRICTNESS: Readonly<Record<PrivacyMode, number>> = { [MODE_INCOGNITO]: 1, [MODE_TEMPORARY]: 2 };

export const PRIVACY_LRU_MAX = 10_000;

/** Held here so two channels cannot describe the same mode differently. */
export const NOTICE_TEMPORARY =
  "🕶️ Temporary mode: this conversation reads no memory and nothing from it is saved.";
export const NOTICE_INCOGNITO =
  "🥷 Incognito mode: memory can be read, but nothing from this conversation is saved.";
export const NOTICES: Readonly<Record<PrivacyMode, string>> = {
  [MODE_TEMPORARY]: NOTICE_TEMPORARY,
  [MODE_INCOGNITO]: NOTICE_INCOGNITO,
};

export function isPrivacyMode(value: string): value is PrivacyMode {
  return (PRIVACY_MODES as readonly string[]).includes(value);
}

/**
 * The one mode a shared turn can carry for several requests (a drained burst answered as one turn).
 * An unknown name is ignored rather than raised: this runs on the delivery path, where refusing a
 * message over a mode that does not exist costs the user their message.
 */
export function strictest(...modes: ReadonlyArray<string | null | undefined>): PrivacyMode | null {
  let best: PrivacyMode | null = null;
  for (const mode of modes) {
    if (!mode || !isPrivacyMode(mode)) continue;
    if (best === null || STRICTNESS[mode] > STRICTNESS[best]) best = mode;
  }
  return best;
}

// A standalone `/mode` or `!mode` word; the lookbehind keeps `path/temporary` and `a!temporary` prose.
function tokenRe(mode: PrivacyMode): RegExp {
  return new RegExp(`(?<!\\S)[!/]${mode}(?!\\S)`, "gi");
}

/** Remove every inline `/mode` / `!mode` token; `found` says whether there was one. */
export function stripToken(text: string, mode: PrivacyMode): { text: string; found: boolean } {
  const re = tokenRe(mode);
  if (!re.test(text)) return { text, found: false };
  const stripped = text
    .replace(tokenRe(mode), " ")
    .replace(/[ \t]{2,}/g, " ")
    .replace(/[ \t]*\n[ \t]*/g, "\n")
    .trim();
  return { text: stripped, found: true };
}

/** Strip every mode token, in parse order; returns what remains and which modes were asked for. */
export function stripModifiers(text: string): { text: string; modes: PrivacyMode[] } {
  const modes: PrivacyMode[] = [];
  let rest = text;
  for (const mode of PRIVACY_MODES) {
    const r = stripToken(rest, mode);
    if (r.found) modes.push(mode);
    rest = r.text;
  }
  return { text: rest, modes };
}

/** A Set bounded by insertion recency: re-marking moves a key to the young end. */
class BoundedLru {
  private readonly keys = new Set<string>();
  constructor(private readonly max: number) {}
  has(key: string): boolean {
    return this.keys.has(key);
  }
  mark(key: string): void {
    this.keys.delete(key);
    this.keys.add(key);
    while (this.keys.size > this.max) {
      const oldest = this.keys.values().next().value;
      if (oldest === undefined) break;
      this.keys.delete(oldest);
    }
  }
  get size(): number {
    return this.keys.size;
  }
}

export interface ApplyModeOptions {
  /** The channel (audit label): the record is `${source}.${mode}_mode`. */
  source: string;
  /** Who asked (a platform user id); attribution for the audit. */
  caller?: string;
  /** Delivers the mode's NOTICE; its failure is logged, the mode still holds. */
  notify?: (notice: string) => Promise<void> | void;
  /** A channel's own follow-up (e.g. recording the thread as active). */
  onApplied?: (mode: PrivacyMode) => Promise<void> | void;
}

export interface PrivacyModesOptions {
  audit: AuditSink;
  /** The durable half; without it a mode lasts only as long as the process. */
  store?: Pick<SessionStore, "flag" | "setFlag">;
  logger?: Logger;
  maxEntries?: number;
}

export class PrivacyModes {
  private readonly trackers: Record<PrivacyMode, BoundedLru>;
  private readonly o: PrivacyModesOptions;
  private readonly log: Logger;

  constructor(options: PrivacyModesOptions) {
    this.o = options;
    this.log = options.logger ?? silentLogger;
    const max = options.maxEntries ?? PRIVACY_LRU_MAX;
    this.trackers = { [MODE_TEMPORARY]: new BoundedLru(max), [MODE_INCOGNITO]: new BoundedLru(max) };
  }

  /**
   * Whether `key` is in `mode`. A tracker miss falls through to the durable flag (and re-marks), so
   * eviction from the bounded tracker can never turn a private session back into a normal one.
   */
  has(key: string, mode: PrivacyMode): boolean {
    if (this.trackers[mode].has(key)) return true;
    if (!this.o.store) return false;
    let durable: boolean;
    try {
      durable = this.o.store.flag(key, mode);
    } catch (error) {
      // An unreadable flag must not read as "not private": fail toward restricted.
      this.log.warn("privacy flag unreadable; treating session as restricted", {
        session: key,
        mode,
        error: String(error),
      });
      return true;
    }
    if (durable) this.trackers[mode].mark(key);
    return durable;
  }

  isTemporary(key: string): boolean {
    return this.has(key, MODE_TEMPORARY);
  }

  isIncognito(key: string): boolean {
    return this.has(key, MODE_INCOGNITO);
  }

  /** The write gate. A lookup by key: it never tests a namespace, so every channel answers alike. */
  isRestricted(key: string): boolean {
    return this.isTemporary(key) || this.isIncognito(key);
  }

  /** The strictest mode `key` carries, or null. */
  modeOf(key: string): PrivacyMode | null {
    return strictest(...PRIVACY_MODES.filter((mode) => this.has(key, mode)));
  }

  /** Rebuild the in-memory marks from the durable flags (the mode name IS the flag name). */
  hydrate(key: string): PrivacyMode | null {
    return this.modeOf(key);
  }

  /**
   * Put `key` in `mode`. Idempotent; true iff NEWLY applied. The in-memory mark lands first, before
   * any await, so a concurrent message cannot see the session unrestricted after privacy was asked
   * for. A persist failure is logged, not raised: the mark holds for this process, and refusing
   * would tell the user privacy is off while it is on.
   */
  async applyMode(mode: PrivacyMode, key: string, opts: ApplyModeOptions): Promise<boolean> {
    if (this.has(key, mode)) return false;
    this.trackers[mode].mark(key);
    try {
      this.o.store?.setFlag(key, mode, true);
    } catch (error) {
      this.log.error("privacy flag persist failed; mode holds in memory only", {
        session: key,
        mode,
        error: String(error),
      });
    }
    this.o.audit.log(`${opts.source}.${mode}_mode`, "granted", {
      session: key,
      caller: opts.caller,
      channel: opts.source,
    });
    if (opts.onApplied) {
      try {
        await opts.onApplied(mode);
      } catch (error) {
        this.log.warn("privacy on_applied hook failed", { session: key, mode, error: String(error) });
      }
    }
    if (opts.notify) {
      try {
        await opts.notify(NOTICES[mode]);
      } catch (error) {
        this.log.warn("privacy notice failed", { session: key, mode, error: String(error) });
      }
    }
    return true;
  }

  /**
   * The single-text entry point: strip every mode token, apply each, and report whether the message
   * was NOTHING but modifiers, in which case the caller must return without starting a turn.
   */
  async stripAndApply(
    text: string,
    key: string,
    opts: ApplyModeOptions,
  ): Promise<{ text: string; onlyModifier: boolean; modes: PrivacyMode[] }> {
    const { text: rest, modes } = stripModifiers(text);
    // Mark every requested mode synchronously before awaiting any of them (see applyMode).
    const applying = modes.map((mode) => this.applyMode(mode, key, opts));
    await Promise.all(applying);
    return { text: rest, onlyModifier: modes.length > 0 && rest === "", modes };
  }
}

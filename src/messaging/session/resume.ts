/**
 * Session resume: ONE channel-neutral routing machine for "continue a dashboard chat here". A
 * resume-capable channel (Discord, later Teams) lists sessions started on another surface, the user
 * picks one, and from then on that chat conversation drives the picked session.
 *
 * The binding itself is the picked session's mirrorLink (session store); the ResumeExpectationStore
 * row is the durable evidence that lets a destroyed binding be REPORTED instead of silently falling
 * back to the chat's own session. The hazard is timing: between the record read and the binding read
 * a binding can appear, vanish or move, so ONE call returns ONE RoutingDecision (where the message
 * runs, or the refusal that stops it plus the settlement owed once that refusal is delivered).
 * Channels supply only their command spellings (ResumeCopy), display redaction and a delivery
 * callback. Layer: messaging.
 */

import type { Logger } from "../base/logger.js";
import { silentLogger } from "../base/logger.js";
import { Mutex } from "../base/mutex.js";
import { PICK_REFUSAL_TEXT, PickerRegistry } from "../channel/picker.js";
import type { AuditSink } from "../security/audit.js";
import { redactForDisplay } from "../security/display-safety.js";
import { oneLine } from "../text/clip.js";
import type { ChannelLink } from "./keys.js";
import { channelNamespaceOf, parseSessionKey, sameLocation } from "./keys.js";
import type { ResumeExpectation, ResumeExpectations } from "./resume-expectations.js";
import type { SessionStore } from "./session-store.js";
import { conversationOf, MirrorOwnershipError } from "./session-store.js";

/** The built-in web chat is the operator's dashboard: the surface sessions are resumed FROM. */
export const DEFAULT_RESUME_NAMESPACES: readonly string[] = ["webchat"];
/** Cap on a title shown in chat (a Discord button label is 80 characters). */
export const RESUME_TITLE_MAX_CHARS = 80;
/** Re-reads allowed when the record and the bindings disagree between two reads. */
export const DEFAULT_MAX_RESOLVE_ATTEMPTS = 3;

const AUDIT_OP = "session_resume";

/** The slice of the session store the machine reads and writes. */
export type ResumeSessionStore = Pick<
  SessionStore,
  | "keys"
  | "get"
  | "getMirrorLink"
  | "setMirrorLink"
  | "clearMirrorLink"
  | "clearMirrorLinksAt"
  | "titleOf"
  | "lastActiveOf"
  | "batch"
>;

/** A channel's command spellings, as they should appear in chat (e.g. "`!sessions`"). */
export interface ResumeCopy {
  sessions: string;
  new: string;
  unlink: string;
}

export interface SessionChoice {
  key: string;
  /** Display-safe (redacted, one line, clipped). */
  title: string;
  lastActiveMs: number;
}

export type Settlement =
  | { kind: "retire"; conversation: string; version: number }
  | { kind: "adopt"; conversation: string; version: number; key: string; title: string };

export type RefusalReason =
  | "store_unreadable"
  | "lost_link"
  | "owner_changed"
  | "owner_beside_retired"
  | "multiple_owners"
  | "unstable";

export type RoutingDecision =
  | { kind: "route"; sessionKey: string; resumed: boolean }
  | { kind: "refuse"; reason: RefusalReason; notice: string; settle?: Settlement };

export interface ResumeReply {
  ok: boolean;
  text: string;
  /** release() only: whether some other session was attached here and is now detached. */
  detached?: boolean;
}

type Redact = (text: string) => string;

const defaultRedact: Redact = (text) => redactForDisplay(text).text;

// ── eligibility ───────────────────────────────────────────────────────────────────────────────

/** A name for a session with no title: the tail of its conversation id tells two apart. */
function untitledName(key: string): string {
  const parsed = parseSessionKey(key);
  const id = parsed ? parsed.scope.join(":") : key;
  const tail = [...id].slice(-6).join("");
  return tail ? `Untitled chat (…${tail})` : "Untitled chat";
}

/**
 * A title as chat may show it: one line, clipped, then redacted. Redaction runs LAST because clipping
 * can end a string exactly where a credential pattern starts to match.
 */
export function displayTitle(raw: string | undefined, key: string, redact: Redact = defaultRedact): string {
  const line = oneLine(raw ?? "", RESUME_TITLE_MAX_CHARS);
  return line === "" ? untitledName(key) : redact(line);
}

export interface OfferableOptions {
  /** Key namespaces that may be offered (default: the web chat). */
  namespaces?: readonly string[];
  limit?: number;
  exclude?: Iterable<string>;
  redact?: Redact;
}

/** Sessions that may be continued elsewhere, most recently active first, titles display-safe. */
export function offerableSessions(
  store: Pick<SessionStore, "keys" | "titleOf" | "lastActiveOf">,
  options: OfferableOptions = {},
): SessionChoice[] {
  const namespaces = new Set(options.namespaces ?? DEFAULT_RESUME_NAMESPACES);
  const excluded = new Set(options.exclude ?? []);
  const limit = Math.max(0, Math.floor(options.limit ?? 10));
  const redact = options.redact ?? defaultRedact;
  const choices: SessionChoice[] = [];
  for (const key of store.keys()) {
    // Only the named surfaces: offering a chat channel's session would route one person's DM into another's.
    if (!namespaces.has(channelNamespaceOf(key)) || excluded.has(key)) continue;
    choices.push({
      key,
      title: displayTitle(store.titleOf(key)?.title, key, redact),
      lastActiveMs: store.lastActiveOf(key),
    });
  }
  // Key as the tie-break so the same store always yields the same list (an index must mean one thing).
  choices.sort((a, b) => b.lastActiveMs - a.lastActiveMs || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return choices.slice(0, limit);
}

// ── the binder ────────────────────────────────────────────────────────────────────────────────

export interface SessionBinderOptions {
  /** The channel's namespace; also its location.channelType and its expectation file's name. */
  channel: string;
  store: ResumeSessionStore;
  expectations: ResumeExpectations;
  copy: ResumeCopy;
  audit: AuditSink;
  logger?: Logger;
  /** The durable key of a chat conversation (default: the thread id, else the conversation id). */
  conversationKeyOf?: (location: ChannelLink) => string;
  /** The channel's own display redaction (default: redactForDisplay). */
  redact?: Redact;
  namespaces?: readonly string[];
  offerLimit?: number;
  picker?: PickerRegistry<SessionChoice>;
  maxResolveAttempts?: number;
  /**
   * Whether text posted at `location` is read by more people than the one who picked (a guild
   * thread). There, routing notices and release replies name no session title: the list was shown
   * to its owner alone, and a title can say more than its owner meant to share.
   */
  sharedAudience?: (location: ChannelLink) => boolean;
}

interface Lane {
  /** Route + refusal send + settlement, one message at a time. */
  readonly delivery: Mutex;
  /** Settlement owed by the last delivered notice, applied once no message waits behind it. */
  owed: Settlement | undefined;
}

function sameSettlement(a: Settlement | undefined, b: Settlement | undefined): boolean {
  if (!a || !b) return a === b;
  if (a.kind !== b.kind || a.conversation !== b.conversation || a.version !== b.version) return false;
  return a.kind === "retire" || (b.kind === "adopt" && a.key === b.key && a.title === b.title);
}

function sameRecord(a: ResumeExpectation | undefined, b: ResumeExpectation | undefined): boolean {
  if (!a || !b) return a === b;
  return a.key === b.key && a.version === b.version && a.retired === b.retired && a.title === b.title;
}

function q(title: string): string {
  return `“${title}”`;
}

export class SessionBinder {
  readonly channel: string;
  private readonly store: ResumeSessionStore;
  private readonly expectations: ResumeExpectations;
  private readonly copy: ResumeCopy;
  private readonly audit: AuditSink;
  private readonly log: Logger;
  private readonly conversationKeyOf: (location: ChannelLink) => string;
  private readonly redact: Redact;
  private readonly namespaces: readonly string[];
  private readonly offerLimit: number;
  private readonly picker: PickerRegistry<SessionChoice>;
  private readonly maxResolveAttempts: number;
  private readonly sharedAudience: (location: ChannelLink) => boolean;
  private readonly lanes = new Map<string, Lane>();
  // pick/release per conversation; never held across chat I/O, only store writes.
  private readonly bindingLocks = new Map<string, Mutex>();

  constructor(options: SessionBinderOptions) {
    this.channel = options.channel;
    this.store = options.store;
    this.expectations = options.expectations;
    this.copy = options.copy;
    this.audit = options.audit;
    this.log = options.logger ?? silentLogger;
    this.conversationKeyOf = options.conversationKeyOf ?? ((l) => l.threadId ?? l.conversationId);
    this.redact = options.redact ?? defaultRedact;
    this.namespaces = options.namespaces ?? DEFAULT_RESUME_NAMESPACES;
    this.offerLimit = options.offerLimit ?? 10;
    this.picker = options.picker ?? new PickerRegistry<SessionChoice>();
    this.maxResolveAttempts = Math.max(1, options.maxResolveAttempts ?? DEFAULT_MAX_RESOLVE_ATTEMPTS);
    this.sharedAudience = options.sharedAudience ?? (() => false);
  }

  // ── routing ─────────────────────────────────────────────────────────────────────────────────

  /**
   * Where a message at `location` runs, decided ONCE. Read-only: a refusal's settlement is applied
   * only by routeAndDeliver, after the notice is confirmed delivered.
   */
  async route(location: ChannelLink, nativeKey: string): Promise<RoutingDecision> {
    const conv = this.conversationKeyOf(location);
    const status = await this.expectations.ready();
    if (status.state !== "ready") {
      // Gateway-wide: an unreadable shared file may hide THIS conversation's record too.
      const problem = status.state === "unreadable" ? status.problem : "not loaded";
      return this.refused(conv, {
        kind: "refuse",
        reason: "store_unreadable",
        notice: this.unreadableText(problem),
      });
    }
    for (let attempt = 0; attempt < this.maxResolveAttempts; attempt += 1) {
      // Read both sides twice: a decision is only made from a record and bindings seen together.
      const record = this.expectations.get(conv);
      const owners = this.ownersAt(location);
      const recordAgain = this.expectations.get(conv);
      const ownersAgain = this.ownersAt(location);
      if (sameRecord(record, recordAgain) && owners.join("\n") === ownersAgain.join("\n")) {
        const decision = this.decide(conv, nativeKey, record, owners, this.sharedAudience(location));
        return decision.kind === "refuse" ? this.refused(conv, decision) : decision;
      }
      // Yield so a writer caught mid-change can land before the next look.
      await Promise.resolve();
    }
    // Falling through to either side would be a guess about whose transcript this message joins.
    return this.refused(conv, {
      kind: "refuse",
      reason: "unstable",
      notice:
        "⚠️ This chat's session link was changing while your message arrived, so it was NOT sent. " +
        "Please send it again.",
    });
  }

  /**
   * route() + refusal delivery + settlement, serialized per conversation. Settlement runs only when
   * `deliver` resolved true (a notice the user never saw must not change where the NEXT message goes),
   * and only once no message waits behind it: each queued message is refused in turn, and only the
   * last delivered notice settles. The returned decision is final; the caller runs the turn on it
   * (outside the lock) and never re-resolves.
   */
  async routeAndDeliver(
    location: ChannelLink,
    nativeKey: string,
    deliver: (notice: string) => Promise<boolean>,
  ): Promise<RoutingDecision> {
    const conv = this.conversationKeyOf(location);
    const lane = this.laneFor(conv);
    const release = await lane.delivery.acquire();
    try {
      const decision = await this.route(location, nativeKey);
      if (decision.kind === "route") {
        // The state a queued notice described is gone: settling it now would act on a stale view.
        lane.owed = undefined;
        return decision;
      }
      let delivered = false;
      try {
        delivered = (await deliver(decision.notice)) === true;
      } catch (error) {
        // A thrown send is an undelivered notice; the decision (refuse) stands either way.
        this.log.warn(`${this.channel}: resume notice send failed`, { error: String(error) });
      }
      this.audit.log(`${AUDIT_OP}.notice`, delivered ? "sent" : "failed", {
        channel: this.channel,
        conversation: conv,
        reason: decision.reason,
      });
      if (delivered) lane.owed = decision.settle;
      // An undelivered copy of the SAME notice keeps the earlier delivery's debt; anything else voids it.
      else if (!sameSettlement(lane.owed, decision.settle)) lane.owed = undefined;
      if (lane.owed && lane.delivery.waiting === 0) {
        const owed = lane.owed;
        lane.owed = undefined;
        await this.settle(owed);
      }
      return decision;
    } finally {
      release();
      if (!lane.delivery.locked && lane.owed === undefined) this.lanes.delete(conv);
    }
  }

  private laneFor(conv: string): Lane {
    let lane = this.lanes.get(conv);
    if (!lane) {
      lane = { delivery: new Mutex(), owed: undefined };
      this.lanes.set(conv, lane);
    }
    return lane;
  }

  /**
   * Sessions attached here from another surface, read without deciding anything: what a widget press
   * (which dispatches no turn) may resolve against besides the chat's own key.
   */
  boundKeys(location: ChannelLink): string[] {
    return this.ownersAt(location);
  }

  /** Keys of ANOTHER namespace bound here; a native key mirroring its own chat is not a resume. */
  private ownersAt(location: ChannelLink): string[] {
    const owners: string[] = [];
    for (const key of this.store.keys()) {
      if (channelNamespaceOf(key) === location.channelType) continue;
      const link = this.store.getMirrorLink(key);
      if (link && sameLocation(link, location)) owners.push(key);
    }
    return owners.sort();
  }

  private titleFor(key: string): string {
    return displayTitle(this.store.titleOf(key)?.title, key, this.redact);
  }

  private decide(
    conv: string,
    nativeKey: string,
    record: ResumeExpectation | undefined,
    owners: string[],
    shared: boolean,
  ): RoutingDecision {
    const c = this.copy;
    // In a shared room a session is described, never named.
    const named = (title: string, described = "a web chat session") => (shared ? described : q(title));
    if (owners.length > 1) {
      // Two transcripts claim this chat; picking one would be a guess about whose conversation this is.
      return {
        kind: "refuse",
        reason: "multiple_owners",
        notice:
          `⚠️ ${owners.length} sessions are attached to this chat, so I can't tell which one you mean. ` +
          `Your message was NOT sent. Send ${c.unlink} to detach them all, then ${c.sessions} to pick one.`,
      };
    }
    const owner = owners[0];
    if (owner === undefined) {
      // Nothing expected (never resumed, or a delivered detach): the chat's own session.
      if (!record || record.retired) return { kind: "route", sessionKey: nativeKey, resumed: false };
      // Expected but gone: routing natively would silently move the user off the transcript they chose.
      return {
        kind: "refuse",
        reason: "lost_link",
        notice:
          `⚠️ This chat was continuing ${named(record.title)}, but that link is gone (the session was reset, ` +
          "restarted or unlinked elsewhere). Your message was NOT sent. Send it again to talk to this " +
          `chat's own session, or use ${c.sessions} to pick a session to continue.`,
        settle: { kind: "retire", conversation: conv, version: record.version },
      };
    }
    // Bootstrap: a binding made elsewhere with no record yet is still the user's explicit attachment.
    if (!record) return { kind: "route", sessionKey: owner, resumed: true };
    if (!record.retired && record.key === owner) {
      return { kind: "route", sessionKey: owner, resumed: true };
    }
    const title = this.titleFor(owner);
    const settle: Settlement = {
      kind: "adopt",
      conversation: conv,
      version: record.version,
      key: owner,
      title,
    };
    if (record.retired) {
      // Attached after a detach: announce before the next message lands in that transcript.
      return {
        kind: "refuse",
        reason: "owner_beside_retired",
        notice:
          `⚠️ This chat was just attached to ${named(title)} from elsewhere. Your message was NOT sent. ` +
          `Send it again to continue ${named(title, "it")}, or send ${c.unlink} to detach.`,
        settle,
      };
    }
    // The binding moved under the record: the user believes they drive the recorded session.
    return {
      kind: "refuse",
      reason: "owner_changed",
      notice:
        `⚠️ This chat was continuing ${named(record.title)}, but it is now attached to ` +
        `${named(title, "a different one")}. ` +
        `Your message was NOT sent. Send it again to continue ${named(title, "that one")}, send ${c.sessions} to pick ` +
        `another, or ${c.new} to start fresh here.`,
      settle,
    };
  }

  private refused(conv: string, decision: Extract<RoutingDecision, { kind: "refuse" }>): RoutingDecision {
    this.audit.log(`${AUDIT_OP}.route`, "refused", {
      channel: this.channel,
      conversation: conv,
      reason: decision.reason,
    });
    return decision;
  }

  /** Apply a delivered notice's settlement; a version mismatch means a newer record won and is left alone. */
  private async settle(s: Settlement): Promise<void> {
    const result =
      s.kind === "retire"
        ? await this.expectations.retire(s.conversation, s.version)
        : await this.expectations.adopt(s.conversation, s.version, { key: s.key, title: s.title });
    const fields = {
      channel: this.channel,
      conversation: s.conversation,
      settlement: s.kind,
      version: s.version,
    };
    if (result.ok) {
      this.audit.log(`${AUDIT_OP}.settle`, "allowed", fields);
    } else if (result.reason === "version_mismatch") {
      this.audit.log(`${AUDIT_OP}.settle`, "refused", { ...fields, reason: "version_mismatch" });
    } else {
      // Unsettled means the same notice is owed again: the direction that fails safe.
      this.audit.log(`${AUDIT_OP}.settle`, "failed", { ...fields, reason: result.reason });
    }
  }

  // ── picking ─────────────────────────────────────────────────────────────────────────────────

  /**
   * List offerable sessions and register them under `handle` (default: a fresh nonce) for `who` in
   * this conversation, so a press resolves an INDEX against exactly this list. `text` is a plain
   * fallback rendering; channels with widgets render `choices` themselves.
   */
  offer(
    location: ChannelLink,
    who: string,
    handle?: string,
  ): { handle: string; choices: SessionChoice[]; text: string } {
    const choices = offerableSessions(this.store, {
      namespaces: this.namespaces,
      limit: this.offerLimit,
      redact: this.redact,
    });
    const id = handle ?? PickerRegistry.newHandle();
    this.picker.offer(id, { owner: who, scope: this.conversationKeyOf(location), items: choices });
    const text =
      choices.length === 0
        ? "There are no web chat sessions to continue yet."
        : [
            "Pick a session to continue in this chat:",
            ...choices.map((ch, i) => `${i + 1}. ${ch.title}`),
          ].join("\n");
    return { handle: id, choices, text };
  }

  /** A press on an offered list: resolve the index, then pick(). Every miss is visible and audited. */
  /** Whether list `handle` was offered here (a press on it is judged here). */
  offers(handle: string): boolean {
    return this.picker.has(handle);
  }

  async choose(handle: string, index: number, location: ChannelLink, who: string): Promise<ResumeReply> {
    const conv = this.conversationKeyOf(location);
    const taken = this.picker.take(handle, index, { owner: who, scope: conv });
    if (!taken.ok) {
      this.audit.log(`${AUDIT_OP}.pick`, "refused", {
        channel: this.channel,
        conversation: conv,
        who,
        reason: `picker_${taken.reason}`,
      });
      return { ok: false, text: PICK_REFUSAL_TEXT[taken.reason] };
    }
    return this.pick(location, taken.item, who);
  }

  /**
   * Attach this chat to `choice`. The expectation is recorded BEFORE the binding moves, so a binding
   * never exists without the evidence that makes its later loss reportable.
   */
  async pick(location: ChannelLink, choice: SessionChoice, who: string): Promise<ResumeReply> {
    const conv = this.conversationKeyOf(location);
    const key = choice.key;
    const fields = { channel: this.channel, conversation: conv, who, key };
    const refuse = (reason: string, text: string, outcome: "refused" | "failed" = "refused"): ResumeReply => {
      this.audit.log(`${AUDIT_OP}.pick`, outcome, { ...fields, reason });
      return { ok: false, text };
    };
    // Only offerable surfaces; a native key here would be "resuming" the chat's own session.
    const ns = channelNamespaceOf(key);
    if (!this.namespaces.includes(ns) || ns === location.channelType) {
      return refuse("not_offerable", "❌ That session can't be continued here.");
    }
    return this.withBindingLock(conv, async () => {
      const status = await this.expectations.ready();
      if (status.state !== "ready") {
        const problem = status.state === "unreadable" ? status.problem : "not loaded";
        return refuse("store_unreadable", this.unreadableText(problem));
      }
      // A session deleted since the list was posted: binding would create an empty ghost row.
      if (!this.store.get(key)) {
        return refuse(
          "session_gone",
          `❌ That session no longer exists. Send ${this.copy.sessions} for a fresh list.`,
        );
      }
      const rival = this.rivalAt(location, key);
      if (rival !== undefined) {
        // Switching would silently detach another transcript; the user detaches it explicitly first.
        return refuse(
          "occupied",
          `❌ This chat is already continuing ${q(this.titleFor(rival))}. ` +
            `Send ${this.copy.unlink} first, then pick again.`,
        );
      }
      const title = displayTitle(choice.title, key, this.redact);
      const recorded = await this.expectations.record(conv, { key, title });
      if (!recorded.ok) {
        return refuse(
          recorded.reason,
          "❌ Couldn't attach this chat: the change could not be saved. Nothing changed.",
          "failed",
        );
      }
      try {
        await this.store.batch(async () => {
          // Re-checked inside the write: the record write awaited, and the batch persists even when
          // this throws, so the refusal must come before any mutation.
          const late = this.rivalAt(location, key);
          if (late !== undefined) throw new MirrorOwnershipError(location, late);
          // The chat's own session mirrors here (bindOriginMirror); it yields the location to the pick.
          for (const holder of this.holdersAt(location)) {
            if (channelNamespaceOf(holder) === location.channelType) this.store.clearMirrorLink(holder);
          }
          this.store.setMirrorLink(key, location);
        });
      } catch (error) {
        return this.failedBind(location, conv, key, title, recorded.row.version, error, refuse);
      }
      this.audit.log(`${AUDIT_OP}.pick`, "granted", fields);
      return {
        ok: true,
        text:
          `✅ This chat now continues ${q(title)}. Send a message to pick up where it left off. ` +
          `${this.copy.unlink} detaches; ${this.copy.sessions} picks another.`,
      };
    });
  }

  /**
   * The binding could not be made after the record was. Retire the record (CAS on the version we just
   * wrote): the reply already says the pick failed, so the next message may run natively without a
   * notice. If that retirement also fails, the active record reads as a lost link next message: one
   * self-retiring notice, never a silent resume.
   */
  private async failedBind(
    location: ChannelLink,
    conv: string,
    key: string,
    title: string,
    version: number,
    error: unknown,
    refuse: (reason: string, text: string, outcome?: "refused" | "failed") => ResumeReply,
  ): Promise<ResumeReply> {
    const raced = error instanceof MirrorOwnershipError;
    if (!raced) {
      // A failed commit leaves the binding in memory; undo it there so memory matches what we report.
      try {
        const link = this.store.getMirrorLink(key);
        if (link && sameLocation(link, location)) {
          await this.store.batch(async () => {
            this.store.clearMirrorLink(key);
          });
        }
      } catch (undoError) {
        this.log.error(`${this.channel}: resume pick rollback write failed`, { error: String(undoError) });
      }
    }
    const retired = await this.expectations.retire(conv, version);
    const why = raced ? "another session took this chat at the same moment" : "the change could not be saved";
    const tail = retired.ok
      ? "Messages here still go to this chat's own session."
      : "You may see one notice about a lost link on your next message.";
    return refuse(
      raced ? "occupied_race" : "bind_failed",
      `❌ Couldn't attach ${q(title)}: ${why}. ${tail}`,
      "failed",
    );
  }

  // ── release ─────────────────────────────────────────────────────────────────────────────────

  /**
   * `new`/`unlink`: clear every binding at exactly this location, durably, then retire the record in
   * ONE write (a retired marker, not a delete, so an owner racing the write still meets evidence and
   * is refused before adoption). A clear that could not be made durable keeps the active record and
   * reports failure.
   */
  async release(location: ChannelLink): Promise<ResumeReply> {
    const conv = this.conversationKeyOf(location);
    const fields = { channel: this.channel, conversation: conv };
    return this.withBindingLock(conv, async () => {
      const status = await this.expectations.ready();
      if (status.state !== "ready") {
        // Without the record we cannot retire; clearing bindings alone would be a half-release.
        const problem = status.state === "unreadable" ? status.problem : "not loaded";
        this.audit.log(`${AUDIT_OP}.release`, "refused", { ...fields, reason: "store_unreadable" });
        return { ok: false, text: this.unreadableText(problem) };
      }
      const owners = this.ownersAt(location);
      const titles = owners.map((k) => this.titleFor(k));
      let swept: string[];
      try {
        swept = await this.store.batch(async () => this.store.clearMirrorLinksAt(location));
      } catch (error) {
        // The write stays owed (the store retries); the active record keeps the loss reportable.
        this.log.error(`${this.channel}: resume release write failed`, { error: String(error) });
        this.audit.log(`${AUDIT_OP}.release`, "failed", { ...fields, reason: "store_write_failed" });
        return {
          ok: false,
          text: `❌ Detaching this chat could not be saved, so it is not confirmed. Send ${this.copy.unlink} again.`,
        };
      }
      const record = this.expectations.get(conv);
      let note = "";
      if (record && !record.retired) {
        const retired = await this.expectations.retire(conv, record.version);
        if (!retired.ok && retired.reason !== "version_mismatch") {
          // Bindings are gone durably; the leftover active record costs one self-retiring notice.
          this.audit.log(`${AUDIT_OP}.release`, "failed", { ...fields, reason: `retire_${retired.reason}` });
          note = " (The resume record could not be updated, so you may see one more notice here.)";
        }
      }
      this.audit.log(`${AUDIT_OP}.release`, "revoked", { ...fields, swept: swept.length });
      const detached = titles.length > 0 || (record !== undefined && !record.retired);
      if (!detached)
        return { ok: true, detached: false, text: `This chat wasn't continuing another session.${note}` };
      const what =
        titles.length > 1
          ? `${titles.length} sessions`
          : this.sharedAudience(location)
            ? "a web chat session"
            : q(titles[0] ?? record?.title ?? "");
      return {
        ok: true,
        detached: true,
        text:
          `✅ Detached from ${what}. Messages here go to this chat's own session again; ` +
          `${this.copy.sessions} picks a session to continue.${note}`,
      };
    });
  }

  // ── helpers ─────────────────────────────────────────────────────────────────────────────────

  /** Every key whose mirror is exactly `location` (native ones included). */
  private holdersAt(location: ChannelLink): string[] {
    return this.store.keys().filter((k) => {
      const link = this.store.getMirrorLink(k);
      return link !== null && sameLocation(link, location);
    });
  }

  /** A non-native holder of another conversation than `key`'s: the pick would take its chat away. */
  private rivalAt(location: ChannelLink, key: string): string | undefined {
    const mine = conversationOf(key);
    return this.ownersAt(location).find((k) => conversationOf(k) !== mine);
  }

  private unreadableText(problem: string): string {
    return (
      `⛔ Session routing is paused: the resume record ${problem}. No message is routed until the ` +
      `operator repairs it. ${this.expectations.repairHint()}`
    );
  }

  private async withBindingLock<T>(conv: string, fn: () => Promise<T>): Promise<T> {
    let lock = this.bindingLocks.get(conv);
    if (!lock) {
      lock = new Mutex();
      this.bindingLocks.set(conv, lock);
    }
    try {
      return await lock.run(fn);
    } finally {
      if (!lock.locked) this.bindingLocks.delete(conv);
    }
  }
}

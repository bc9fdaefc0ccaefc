/**
 * SessionStore: the per-session record (origin + mirror links, privacy flags, generation, title, cwd,
 * mute, approval policy). The port plus an in-memory implementation; FileSessionStore adds the
 * durable half. Reads are synchronous from memory because they sit on every turn's hot path; a
 * subclass persists through the `changed()` / `commit()` hooks. Layer: messaging.
 */

import type { Logger } from "../base/logger.js";
import { silentLogger } from "../base/logger.js";
import type { ChannelLink, LinkStore } from "./keys.js";
import { sameLocation, splitDmSessionKey } from "./keys.js";

export type TitleKind = "auto" | "manual";
export type DeliveryLeg = "origin" | "mirror";

export interface SessionRow {
  sessionKey: string;
  /** The conversation the session was born in (where unattended output goes). */
  originLink?: ChannelLink;
  /** Where replies taken elsewhere (the dashboard) are mirrored. */
  mirrorLink?: ChannelLink;
  /** /unlink's refusal; honoured on the conversation's bucket row (see conversationOf). */
  mirrorOptOut: boolean;
  /** Named durable booleans; a privacy mode's name IS its flag name. */
  flags: Record<string, boolean>;
  generation: number;
  title?: string;
  titleKind?: TitleKind;
  cwd?: string;
  muted: { origin?: boolean; mirror?: boolean };
  /** "" / absent = the configured default (kept in the schema; nothing sets another value today). */
  approvalPolicy?: string;
  lastActiveMs?: number;
}

export interface TitleRecord {
  title: string;
  kind: TitleKind;
}

/** Thrown by setMirrorLink when another conversation already holds the location. */
export class MirrorOwnershipError extends Error {
  constructor(
    readonly location: ChannelLink,
    readonly owner: string,
  ) {
    super(`mirror location ${location.channelType}:${location.conversationId} is held by another session`);
    this.name = "MirrorOwnershipError";
  }
}

/** The port. It structurally satisfies dispatch.ts's TurnStore (LinkStore + isMuted + setOriginLink). */
export interface SessionStore extends LinkStore {
  getMirrorLink(key: string): ChannelLink | null;
  setMirrorLink(key: string, link: ChannelLink): void;
  clearMirrorLink(key: string): boolean;
  clearMirrorLinksAt(location: ChannelLink): string[];
  mirrorOptOut(key: string): boolean;
  setMirrorOptOut(key: string, optedOut: boolean): void;
  isMuted(key: string, leg: DeliveryLeg): boolean;
  setMuted(key: string, leg: DeliveryLeg, muted: boolean): void;
  getOriginLink(key: string): ChannelLink | null;
  setOriginLink(key: string, link: ChannelLink): void;
  get(key: string): SessionRow | undefined;
  keys(): string[];
  generationOf(key: string): number;
  setGeneration(key: string, generation: number): void;
  titleOf(key: string): TitleRecord | null;
  /** Manual always writes; "auto" writes only while the record carries no title. True iff written. */
  setTitle(key: string, title: string, kind: TitleKind): boolean;
  cwdOf(key: string): string | undefined;
  setCwd(key: string, cwd: string | undefined): void;
  approvalPolicyOf(key: string): string;
  setApprovalPolicy(key: string, policy: string): void;
  flag(key: string, name: string): boolean;
  setFlag(key: string, name: string, on: boolean): void;
  lastActiveOf(key: string): number;
  touch(key: string, epochMs: number): void;
  deleteSession(key: string): boolean;
  flush(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The conversation a key belongs to: its DM bucket, else the key itself. Rotating a generation (/new)
 * starts a new transcript in the SAME conversation, so the opt-out and the mirror location follow
 * the bucket: otherwise /new silently re-enables mirroring after /unlink.
 */
export function conversationOf(key: string): string {
  return splitDmSessionKey(key)?.[0] ?? key;
}

function copyLink(link: ChannelLink): ChannelLink {
  const out: ChannelLink = { channelType: link.channelType, conversationId: link.conversationId };
  if (link.threadId !== undefined) out.threadId = link.threadId;
  return out;
}

export function copyRow(row: SessionRow): SessionRow {
  const out: SessionRow = {
    ...row,
    flags: { ...row.flags },
    muted: { ...row.muted },
  };
  if (row.originLink) out.originLink = copyLink(row.originLink);
  if (row.mirrorLink) out.mirrorLink = copyLink(row.mirrorLink);
  return out;
}

export function emptyRow(sessionKey: string): SessionRow {
  return { sessionKey, mirrorOptOut: false, flags: {}, generation: 0, muted: {} };
}

export interface MemorySessionStoreOptions {
  logger?: Logger;
  rows?: Iterable<SessionRow>;
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

export class MemorySessionStore implements SessionStore {
  protected readonly rows = new Map<string, SessionRow>();
  protected readonly log: Logger;
  protected state: "new" | "open" | "closed" = "open";
  private depth = 0;

  constructor(options: MemorySessionStoreOptions = {}) {
    this.log = options.logger ?? silentLogger;
    for (const row of options.rows ?? []) this.rows.set(row.sessionKey, copyRow(row));
  }

  // ── persistence hooks (no-ops in memory) ──────────────────────────────────────────────────────

  /** Called after every mutation. */
  protected changed(): void {}
  /** Called with each row a mutation is about to change (or delete), so a row store writes only those. */
  protected rowTouched(_key: string): void {}
  /** Called once when the outermost batch exits. */
  protected async commit(): Promise<void> {}
  protected get inBatch(): boolean {
    return this.depth > 0;
  }

  async flush(): Promise<void> {}

  async close(): Promise<void> {
    this.state = "closed";
  }

  async batch<T>(fn: () => Promise<T>): Promise<T> {
    this.depth += 1;
    let outcome: Outcome<T>;
    try {
      outcome = { ok: true, value: await fn() };
    } catch (error) {
      outcome = { ok: false, error };
    }
    this.depth -= 1;
    if (this.depth === 0) {
      // The write happens even when fn threw: callers order the refusable step first for this reason.
      try {
        await this.commit();
      } catch (writeError) {
        if (outcome.ok) throw writeError;
        // fn's own error is what the caller must see; the write failure is still reported.
        this.log.error("session store batch write failed", { error: String(writeError) });
      }
    }
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  }

  // ── row access ────────────────────────────────────────────────────────────────────────────────

  private readable(): void {
    // Reading before open would answer "empty" for a store that merely has not loaded yet.
    if (this.state === "new") throw new Error("session store read before open()");
  }

  private row(key: string): SessionRow | undefined {
    this.readable();
    return this.rows.get(key);
  }

  /** The row to mutate, created on demand; every caller must finish with `this.changed()`. */
  private writable(key: string): SessionRow {
    if (this.state !== "open") throw new Error(`session store is ${this.state}; write refused`);
    this.rowTouched(key);
    let row = this.rows.get(key);
    if (!row) {
      row = emptyRow(key);
      this.rows.set(key, row);
    }
    return row;
  }

  get(key: string): SessionRow | undefined {
    const row = this.row(key);
    return row ? copyRow(row) : undefined;
  }

  keys(): string[] {
    this.readable();
    return [...this.rows.keys()];
  }

  deleteSession(key: string): boolean {
    this.writable(key);
    const removed = this.rows.delete(key);
    this.changed();
    return removed;
  }

  // ── links ─────────────────────────────────────────────────────────────────────────────────────

  getOriginLink(key: string): ChannelLink | null {
    const link = this.row(key)?.originLink;
    return link ? copyLink(link) : null;
  }

  setOriginLink(key: string, link: ChannelLink): void {
    this.writable(key).originLink = copyLink(link);
    this.changed();
  }

  getMirrorLink(key: string): ChannelLink | null {
    const link = this.row(key)?.mirrorLink;
    return link ? copyLink(link) : null;
  }

  /**
   * Claim `link` as the mirror of `key`. Refuses (throws) BEFORE any mutation when a session of
   * ANOTHER conversation holds it: two owners would mirror two conversations into one chat. A
   * sibling generation of the same conversation is not a rival, so its binding moves over.
   */
  setMirrorLink(key: string, link: ChannelLink): void {
    const mine = conversationOf(key);
    this.readable();
    const siblings: SessionRow[] = [];
    for (const row of this.rows.values()) {
      if (row.sessionKey === key || !row.mirrorLink || !sameLocation(row.mirrorLink, link)) continue;
      if (conversationOf(row.sessionKey) !== mine)
        throw new MirrorOwnershipError(copyLink(link), row.sessionKey);
      siblings.push(row);
    }
    const target = this.writable(key);
    for (const row of siblings) delete this.writable(row.sessionKey).mirrorLink;
    target.mirrorLink = copyLink(link);
    this.changed();
  }

  clearMirrorLink(key: string): boolean {
    const row = this.row(key);
    if (!row?.mirrorLink) return false;
    this.writable(key);
    delete row.mirrorLink;
    this.changed();
    return true;
  }

  clearMirrorLinksAt(location: ChannelLink): string[] {
    this.readable();
    const swept: string[] = [];
    for (const row of this.rows.values()) {
      if (row.mirrorLink && sameLocation(row.mirrorLink, location)) swept.push(row.sessionKey);
    }
    for (const key of swept) delete this.writable(key).mirrorLink;
    if (swept.length > 0) this.changed();
    return swept;
  }

  mirrorOptOut(key: string): boolean {
    return this.row(conversationOf(key))?.mirrorOptOut ?? false;
  }

  setMirrorOptOut(key: string, optedOut: boolean): void {
    this.writable(conversationOf(key)).mirrorOptOut = optedOut;
    this.changed();
  }

  isMuted(key: string, leg: DeliveryLeg): boolean {
    return this.row(key)?.muted[leg] === true;
  }

  setMuted(key: string, leg: DeliveryLeg, muted: boolean): void {
    const row = this.writable(key);
    if (muted) row.muted[leg] = true;
    else delete row.muted[leg];
    this.changed();
  }

  // ── scalar fields ─────────────────────────────────────────────────────────────────────────────

  generationOf(key: string): number {
    return this.row(key)?.generation ?? 0;
  }

  setGeneration(key: string, generation: number): void {
    // A NaN or negative generation builds a key suffix the parser cannot read back.
    if (!Number.isSafeInteger(generation) || generation < 0) {
      throw new RangeError(`generation must be a non-negative integer: ${generation}`);
    }
    this.writable(key).generation = generation;
    this.changed();
  }

  titleOf(key: string): TitleRecord | null {
    const row = this.row(key);
    if (row?.title === undefined) return null;
    // A kind-less title (a hand-edited file) counts as a person's: the direction a name is never lost.
    return { title: row.title, kind: row.titleKind ?? "manual" };
  }

  setTitle(key: string, title: string, kind: TitleKind): boolean {
    if (title.trim() === "") throw new RangeError("a title must not be empty");
    // "No title on the record" is decided here, on durable state, so a rename made before a
    // restart (when no in-process claim remembers it) still wins over a generated title.
    if (kind === "auto" && this.row(key)?.title !== undefined) return false;
    const row = this.writable(key);
    row.title = title;
    row.titleKind = kind;
    this.changed();
    return true;
  }

  cwdOf(key: string): string | undefined {
    return this.row(key)?.cwd;
  }

  setCwd(key: string, cwd: string | undefined): void {
    const row = this.writable(key);
    if (cwd === undefined) delete row.cwd;
    else row.cwd = cwd;
    this.changed();
  }

  approvalPolicyOf(key: string): string {
    return this.row(key)?.approvalPolicy ?? "";
  }

  setApprovalPolicy(key: string, policy: string): void {
    const row = this.writable(key);
    if (policy === "") delete row.approvalPolicy;
    else row.approvalPolicy = policy;
    this.changed();
  }

  flag(key: string, name: string): boolean {
    return this.row(key)?.flags[name] === true;
  }

  setFlag(key: string, name: string, on: boolean): void {
    const row = this.writable(key);
    if (on) row.flags[name] = true;
    else delete row.flags[name];
    this.changed();
  }

  lastActiveOf(key: string): number {
    return this.row(key)?.lastActiveMs ?? 0;
  }

  touch(key: string, epochMs: number): void {
    if (!Number.isFinite(epochMs)) throw new RangeError(`lastActiveMs must be finite: ${epochMs}`);
    this.writable(key).lastActiveMs = epochMs;
    this.changed();
  }
}

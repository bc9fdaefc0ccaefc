/**
 * ResumeExpectationStore: the durable, conversation-keyed shadow of inbound resume bindings, one file
 * per channel at `<dataHome>/trust/<channel>_resume_expectations.json`.
 *
 * A resume binding lives on the bound session's row (its mirrorLink). A recycle, a restart prune or a
 * dashboard unlink can destroy that row and with it the only evidence the chat was attached, and the
 * router would then silently fall back to the chat's own session. This record makes that loss
 * reportable. It detects loss; it is not routing authority (the session store is).
 *
 * Shape: `{ "<conversationKey>": { "key": string, "title": string, "version": integer, "retired":
 * boolean } }`. Persistence is fail-closed: memory publishes only after a durable write, only an
 * absent file means empty, and any other read problem leaves the store UNREADABLE (every routing
 * decision refuses) without ever rewriting, moving or deleting the file. Layer: messaging.
 */
import { chmod, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../base/logger.js";
import { silentLogger } from "../base/logger.js";
import { Mutex } from "../base/mutex.js";
import { atomicWriteFile } from "./file-session-store.js";

/** Agent-blocked, owner-only directory under the data home; trust state never shares a dir with workspaces. */
export const RESUME_TRUST_DIR = "trust";

export interface ResumeExpectation {
  /** The session key the conversation is expected to be bound to. */
  readonly key: string;
  /** Display-safe title, quoted in notices after the binding itself is gone. */
  readonly title: string;
  /** Bumped by every change: settlements compare-and-set on it so a newer record wins. */
  readonly version: number;
  /** A delivered detach: evidence kept (so a racing owner is still refused) but nothing is expected. */
  readonly retired: boolean;
}

export type ExpectationsStatus =
  | { state: "unloaded" }
  | { state: "ready" }
  | { state: "unreadable"; problem: string };

export type ExpectationWrite =
  | { ok: true; row: ResumeExpectation }
  | { ok: false; reason: "version_mismatch"; current: ResumeExpectation | undefined }
  | { ok: false; reason: "unreadable" | "write_failed"; problem: string };

export interface ResumeExpectationStoreOptions {
  logger?: Logger;
  /** Fault injection for the atomic swap (tests make a write fail without touching the real file). */
  rename?: (from: string, to: string) => Promise<void>;
}

// A channel name becomes part of a file name; anything else could walk out of trust/.
const CHANNEL_NAME_RE = /^[a-z0-9][a-z0-9_-]{0,31}$/;

/** `trust/<channel>_resume_expectations.json`, relative to the data home (what chat text may name). */
export function resumeExpectationsRelPath(channel: string): string {
  if (!CHANNEL_NAME_RE.test(channel))
    throw new RangeError(`invalid channel name for a trust file: ${channel}`);
  return `${RESUME_TRUST_DIR}/${channel}_resume_expectations.json`;
}

/**
 * The operator's repair procedure, carried by every refusal that an unreadable file causes: the file
 * may hold the only evidence of some conversation's attachment, so the fix must preserve it.
 */
export function expectationsRepairHint(relPath: string): string {
  return (
    `Repair: stop the gateway, copy ${relPath} aside, restore or edit it to ` +
    `{"<conversation>": {"key": "...", "title": "...", "version": <integer>, "retired": <true|false>}}, ` +
    "then restart. Never truncate or delete it; {} is valid only when no conversation has resume history."
  );
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Decode the file's bytes. Throws an Error naming the first problem: a row silently dropped here is a
 * conversation whose loss would route silently, so nothing malformed is skipped.
 */
export function decodeExpectations(bytes: Uint8Array): Map<string, ResumeExpectation> {
  let text: string;
  try {
    // fatal: a lossy decode would "repair" bytes into replacement characters and publish them.
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new Error("is not valid UTF-8");
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    // No parser detail: V8 quotes a snippet of the file, and this text reaches chat.
    throw new Error("is not valid JSON");
  }
  if (!isObject(doc)) throw new Error("top level is not an object");
  const rows = new Map<string, ResumeExpectation>();
  for (const [conv, raw] of Object.entries(doc)) {
    const where = `row ${JSON.stringify(conv)}`;
    if (!isObject(raw)) throw new Error(`${where} is not an object`);
    const { key, title, version, retired } = raw;
    if (typeof key !== "string" || key === "") throw new Error(`${where}.key is not a non-empty string`);
    if (typeof title !== "string") throw new Error(`${where}.title is not a string`);
    if (typeof version !== "number" || !Number.isSafeInteger(version) || version < 0) {
      throw new Error(`${where}.version is not a non-negative integer`);
    }
    // Absent means an older row written before retirement existed; anything else present is corruption.
    if (retired !== undefined && typeof retired !== "boolean") {
      throw new Error(`${where}.retired is not a boolean`);
    }
    rows.set(conv, { key, title, version, retired: retired === true });
  }
  return rows;
}

function encodeExpectations(rows: ReadonlyMap<string, ResumeExpectation>): string {
  const doc: Record<string, ResumeExpectation> = {};
  for (const [conv, row] of rows) {
    doc[conv] = { key: row.key, title: row.title, version: row.version, retired: row.retired };
  }
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/**
 * What the binder needs from a resume record: this file-backed store, or a database's (the storage
 * port). Reads are synchronous after ready(); writes publish to memory only once durable.
 */
export interface ResumeExpectations {
  readonly channel: string;
  status(): ExpectationsStatus;
  /** Load once; later calls answer the current status. */
  ready(): Promise<ExpectationsStatus>;
  /** Throws unless ready: "no row" must never be guessed from an unread record. */
  get(conversation: string): ResumeExpectation | undefined;
  entries(): [string, ResumeExpectation][];
  record(conversation: string, target: { key: string; title: string }): Promise<ExpectationWrite>;
  retire(conversation: string, expectedVersion: number): Promise<ExpectationWrite>;
  adopt(
    conversation: string,
    expectedVersion: number,
    target: { key: string; title: string },
  ): Promise<ExpectationWrite>;
  /** The operator's repair procedure, quoted by every refusal an unreadable record causes. */
  repairHint(): string;
}

export class ResumeExpectationStore implements ResumeExpectations {
  readonly channel: string;
  /** Absolute path of the file. */
  readonly path: string;
  /** Path relative to the data home: what a chat notice may name (no user home in chat text). */
  readonly relPath: string;
  private readonly dir: string;
  private readonly log: Logger;
  private readonly renameOp: ((from: string, to: string) => Promise<void>) | undefined;
  // One read-modify-write at a time; held only around file I/O, never around chat I/O.
  private readonly mutex = new Mutex();
  private rows = new Map<string, ResumeExpectation>();
  private current: ExpectationsStatus = { state: "unloaded" };
  private dirReady = false;

  constructor(dataHome: string, channel: string, options: ResumeExpectationStoreOptions = {}) {
    this.channel = channel;
    this.relPath = resumeExpectationsRelPath(channel);
    this.dir = join(dataHome, RESUME_TRUST_DIR);
    this.path = join(dataHome, this.relPath);
    this.log = options.logger ?? silentLogger;
    this.renameOp = options.rename;
  }

  status(): ExpectationsStatus {
    return this.current;
  }

  repairHint(): string {
    return expectationsRepairHint(this.relPath);
  }

  /**
   * (Re)read the file. Only ENOENT means empty; every other failure marks the store unreadable and
   * keeps nothing, because a partial view would let an unseen conversation route silently.
   */
  load(): Promise<ExpectationsStatus> {
    return this.mutex.run(() => this.loadLocked());
  }

  /** Load once; later calls answer the current status. */
  async ready(): Promise<ExpectationsStatus> {
    if (this.current.state !== "unloaded") return this.current;
    return this.mutex.run(() => (this.current.state === "unloaded" ? this.loadLocked() : this.current));
  }

  private async loadLocked(): Promise<ExpectationsStatus> {
    let bytes: Uint8Array;
    try {
      bytes = await readFile(this.path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") {
        this.rows = new Map();
        this.current = { state: "ready" };
        return this.current;
      }
      return this.unreadable(`cannot be read (${code ?? String(error)})`);
    }
    try {
      this.rows = decodeExpectations(bytes);
    } catch (error) {
      return this.unreadable((error as Error).message);
    }
    this.current = { state: "ready" };
    return this.current;
  }

  private unreadable(problem: string): ExpectationsStatus {
    // Drop the in-memory view too: a stale cache must not answer for a file we can no longer read.
    this.rows = new Map();
    this.current = { state: "unreadable", problem: `${this.relPath} ${problem}` };
    this.log.error("resume expectations unreadable; all resume routing refuses", {
      channel: this.channel,
      problem,
    });
    return this.current;
  }

  /** The row for `conversation`. Throws unless ready: "no row" must never be guessed from an unread file. */
  get(conversation: string): ResumeExpectation | undefined {
    if (this.current.state !== "ready") throw new Error(`resume expectations ${this.current.state}`);
    return this.rows.get(conversation);
  }

  /** A snapshot of every row (ready only). */
  entries(): [string, ResumeExpectation][] {
    if (this.current.state !== "ready") throw new Error(`resume expectations ${this.current.state}`);
    return [...this.rows];
  }

  /** A pick: the conversation now expects `target`. Unconditional; bumps the version past any row. */
  record(conversation: string, target: { key: string; title: string }): Promise<ExpectationWrite> {
    return this.mutate(conversation, (prev) => ({
      key: target.key,
      title: target.title,
      version: (prev?.version ?? 0) + 1,
      retired: false,
    }));
  }

  /**
   * A delivered detach or lost-link notice: replace the active row with a retired marker in ONE write.
   * Compare-and-set on `expectedVersion`, so a newer pick made while the notice was in flight wins.
   */
  retire(conversation: string, expectedVersion: number): Promise<ExpectationWrite> {
    // `prev!`: the compare-and-set above the change only passes when a row with that version exists.
    return this.mutate(conversation, (prev) => ({ ...prev!, version: prev!.version + 1, retired: true }), {
      expectedVersion,
    });
  }

  /** A delivered attachment notice: expect `target` from now on. Compare-and-set like retire(). */
  adopt(
    conversation: string,
    expectedVersion: number,
    target: { key: string; title: string },
  ): Promise<ExpectationWrite> {
    return this.mutate(
      conversation,
      (prev) => ({ key: target.key, title: target.title, version: prev!.version + 1, retired: false }),
      { expectedVersion },
    );
  }

  private mutate(
    conversation: string,
    change: (prev: ResumeExpectation | undefined) => ResumeExpectation,
    cas?: { expectedVersion: number },
  ): Promise<ExpectationWrite> {
    return this.mutex.run(async (): Promise<ExpectationWrite> => {
      if (this.current.state === "unloaded") await this.loadLocked();
      if (this.current.state === "unreadable") {
        // Writing would overwrite the only copy of records we could not read.
        return { ok: false, reason: "unreadable", problem: this.current.problem };
      }
      const prev = this.rows.get(conversation);
      if (cas && prev?.version !== cas.expectedVersion) {
        return { ok: false, reason: "version_mismatch", current: prev };
      }
      const row = change(prev);
      const next = new Map(this.rows);
      next.set(conversation, row);
      try {
        await this.write(next);
      } catch (error) {
        this.log.error("resume expectations write failed; nothing changed", {
          channel: this.channel,
          error: String(error),
        });
        return { ok: false, reason: "write_failed", problem: String(error) };
      }
      // Publish only what is on disk: memory ahead of the file would vanish at the next restart.
      this.rows = next;
      return { ok: true, row };
    });
  }

  private async write(rows: ReadonlyMap<string, ResumeExpectation>): Promise<void> {
    if (!this.dirReady) {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      // mkdir's mode applies only to a directory it creates; an existing trust/ is tightened too.
      await chmod(this.dir, 0o700);
      this.dirReady = true;
    }
    // The temp file is created 0600 and renamed into place, so the file is never wider than 0600
    // (umask can only narrow it); a chmod after the swap could fail AFTER the write became durable.
    await atomicWriteFile(
      this.path,
      this.dir,
      encodeExpectations(rows),
      this.renameOp ? { rename: this.renameOp } : {},
    );
  }
}

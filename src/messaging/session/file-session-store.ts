/**
 * FileSessionStore: the embedded default SessionStore. One JSON file under a data home, loaded whole
 * at open() so every read stays synchronous; writes are coalesced and flushed off the hot path,
 * always atomically (temp file in the same directory, fsync, rename, fsync the directory), so a
 * crash leaves either the old file or the new one, never half of one. Layer: messaging.
 */
import { rename as fsRename, mkdir, open, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import type { TimerHandle, Timers } from "../base/clock.js";
import { realClock } from "../base/clock.js";
import { ParleyError } from "../base/errors.js";
import type { Logger } from "../base/logger.js";
import type { ChannelLink } from "./keys.js";
import { canonicalKey } from "./keys.js";
import type { SessionRow } from "./session-store.js";
import { emptyRow, MemorySessionStore } from "./session-store.js";

export const SESSION_STORE_FILE = "sessions.json";
export const SESSION_STORE_VERSION = 1;
const DEFAULT_DEBOUNCE_MS = 250;

let tempSeq = 0;

/**
 * The data home: PARLEY_HOME when set, else ~/.parley. Pure on purpose: the gateway reads the
 * environment and passes the values in, so nothing in this layer depends on process state.
 */
export function dataHomeFrom(parleyHome: string | undefined, userHome: string): string {
  return parleyHome && parleyHome.trim() !== "" ? parleyHome : join(userHome, ".parley");
}

/**
 * Write `data` to `path` so a reader only ever sees the old or the new content. The temp file lives
 * in the same directory because rename is atomic only within one filesystem. `rename` is injectable
 * so a test can observe the moment between the durable temp write and the swap.
 */
export async function atomicWriteFile(
  path: string,
  dir: string,
  data: string,
  ops: { rename?: (from: string, to: string) => Promise<void> } = {},
): Promise<void> {
  tempSeq += 1;
  const tmp = `${path}.${process.pid}.${tempSeq}.tmp`;
  try {
    const fh = await open(tmp, "w", 0o600);
    try {
      await fh.writeFile(data, "utf8");
      // Without fsync the rename can reach disk before the bytes: a crash then leaves an empty file.
      await fh.sync();
    } finally {
      await fh.close();
    }
    await (ops.rename ?? fsRename)(tmp, path);
  } catch (error) {
    // The original error is what matters; a cleanup failure is attached rather than hiding it.
    await rm(tmp, { force: true }).catch((cleanup: unknown) => {
      throw new AggregateError([error, cleanup], `atomic write to ${path} failed and left ${tmp} behind`);
    });
    throw error;
  }
  // Windows cannot open a directory for fsync; elsewhere this makes the rename itself durable.
  if (process.platform !== "win32") {
    const dh = await open(dir, "r");
    try {
      await dh.sync();
    } finally {
      await dh.close();
    }
  }
}

// ── decoding (every malformed shape is corruption: a silently dropped row is lost state) ─────────

function fail(what: string): never {
  throw new Error(what);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function optString(raw: Record<string, unknown>, field: string, where: string): string | undefined {
  const v = raw[field];
  if (v === undefined) return undefined;
  return typeof v === "string" ? v : fail(`${where}.${field} is not a string`);
}

function decodeLink(v: unknown, where: string): ChannelLink | undefined {
  if (v === undefined) return undefined;
  if (!isObject(v)) fail(`${where} is not an object`);
  const { channelType, conversationId } = v;
  if (typeof channelType !== "string" || typeof conversationId !== "string") {
    fail(`${where} needs string channelType and conversationId`);
  }
  const link: ChannelLink = { channelType, conversationId };
  const threadId = optString(v, "threadId", where);
  if (threadId !== undefined) link.threadId = threadId;
  return link;
}

function decodeBoolMap(v: unknown, where: string): Record<string, boolean> {
  if (v === undefined) return {};
  if (!isObject(v)) fail(`${where} is not an object`);
  const out: Record<string, boolean> = {};
  for (const [name, on] of Object.entries(v)) {
    if (typeof on !== "boolean") fail(`${where}.${name} is not a boolean`);
    if (on) out[name] = true;
  }
  return out;
}

function decodeRow(sessionKey: string, raw: unknown): SessionRow {
  const where = `sessions[${JSON.stringify(sessionKey)}]`;
  if (!isObject(raw)) fail(`${where} is not an object`);
  const row = emptyRow(sessionKey);
  const originLink = decodeLink(raw.originLink, `${where}.originLink`);
  if (originLink) row.originLink = originLink;
  const mirrorLink = decodeLink(raw.mirrorLink, `${where}.mirrorLink`);
  if (mirrorLink) row.mirrorLink = mirrorLink;
  if (raw.mirrorOptOut !== undefined && typeof raw.mirrorOptOut !== "boolean") {
    fail(`${where}.mirrorOptOut is not a boolean`);
  }
  row.mirrorOptOut = raw.mirrorOptOut === true;
  row.flags = decodeBoolMap(raw.flags, `${where}.flags`);
  const muted = decodeBoolMap(raw.muted, `${where}.muted`);
  if (muted.origin) row.muted.origin = true;
  if (muted.mirror) row.muted.mirror = true;
  const gen = raw.generation ?? 0;
  if (typeof gen !== "number" || !Number.isSafeInteger(gen) || gen < 0) {
    fail(`${where}.generation is not a non-negative integer`);
  }
  row.generation = gen;
  const title = optString(raw, "title", where);
  if (title !== undefined) row.title = title;
  const kind = raw.titleKind;
  if (kind !== undefined) {
    if (kind !== "auto" && kind !== "manual") fail(`${where}.titleKind must be "auto" or "manual"`);
    row.titleKind = kind;
  }
  const cwd = optString(raw, "cwd", where);
  if (cwd !== undefined) row.cwd = cwd;
  const policy = optString(raw, "approvalPolicy", where);
  if (policy) row.approvalPolicy = policy;
  if (raw.lastActiveMs !== undefined) {
    if (typeof raw.lastActiveMs !== "number" || !Number.isFinite(raw.lastActiveMs)) {
      fail(`${where}.lastActiveMs is not a finite number`);
    }
    row.lastActiveMs = raw.lastActiveMs;
  }
  return row;
}

/** Parse a store file's text into rows; throws a plain Error naming the first problem found. */
export function decodeStore(text: string): SessionRow[] {
  const doc: unknown = JSON.parse(text);
  if (!isObject(doc)) fail("top level is not an object");
  if (doc.version !== SESSION_STORE_VERSION) {
    fail(`unsupported version ${JSON.stringify(doc.version)} (this build reads ${SESSION_STORE_VERSION})`);
  }
  if (!isObject(doc.sessions)) fail("sessions is not an object");
  return Object.entries(doc.sessions).map(([key, raw]) => decodeRow(key, raw));
}

function encodeRow(row: SessionRow): Record<string, unknown> {
  const { sessionKey: _key, ...rest } = row;
  const out: Record<string, unknown> = { ...rest };
  // Defaults are omitted so the file stays small and diffable.
  if (!row.mirrorOptOut) delete out.mirrorOptOut;
  if (row.generation === 0) delete out.generation;
  if (Object.keys(row.flags).length === 0) delete out.flags;
  if (Object.keys(row.muted).length === 0) delete out.muted;
  return out;
}

export interface FileSessionStoreOptions {
  fileName?: string;
  /** Coalescing window for unbatched writes. */
  debounceMs?: number;
  timers?: Timers;
  logger?: Logger;
  /** Fault injection for the final swap (tests simulate a crash between the temp write and rename). */
  rename?: (from: string, to: string) => Promise<void>;
}

export class FileSessionStore extends MemorySessionStore {
  readonly dir: string;
  readonly path: string;
  private readonly timers: Timers;
  private readonly debounceMs: number;
  private timer: TimerHandle | undefined;
  private dirty = false;
  private chain: Promise<void> = Promise.resolve();
  private dirReady = false;
  private readonly renameOp: ((from: string, to: string) => Promise<void>) | undefined;

  /** `dir` is the data home; only the gateway reads PARLEY_HOME, so nothing here touches env. */
  constructor(dir: string, options: FileSessionStoreOptions = {}) {
    super(options.logger ? { logger: options.logger } : {});
    this.dir = dir;
    this.path = join(dir, options.fileName ?? SESSION_STORE_FILE);
    this.timers = options.timers ?? realClock;
    this.debounceMs = options.debounceMs ?? DEFAULT_DEBOUNCE_MS;
    this.renameOp = options.rename;
    this.state = "new";
  }

  /** Construct and open in one step. */
  static async openIn(dir: string, options: FileSessionStoreOptions = {}): Promise<FileSessionStore> {
    const store = new FileSessionStore(dir, options);
    await store.open();
    return store;
  }

  /**
   * Load the file. Missing = an empty store. Anything unreadable or malformed throws STORE_CORRUPT
   * and loads nothing: resetting would silently drop every link, title and privacy flag, and the
   * next write would make that loss permanent. A leftover *.tmp from a killed write is never read.
   */
  async open(): Promise<void> {
    if (this.state !== "new") throw new Error(`session store already ${this.state}`);
    let text: string;
    try {
      text = await readFile(this.path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") {
        this.state = "open";
        return;
      }
      throw this.corrupt(`cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`, error);
    }
    let rows: SessionRow[];
    try {
      rows = decodeStore(text);
    } catch (error) {
      throw this.corrupt(`is not a valid session store: ${(error as Error).message}`, error);
    }
    for (const row of rows) {
      const key = canonicalKey(row.sessionKey);
      // A legacy bare key whose namespaced twin also exists: keep the twin, but say so.
      if (this.rows.has(key)) {
        this.log.warn("session store: duplicate row after key migration; keeping the first", { key });
        continue;
      }
      this.rows.set(key, { ...row, sessionKey: key });
    }
    this.state = "open";
  }

  private corrupt(problem: string, cause: unknown): ParleyError {
    return new ParleyError(
      "STORE_CORRUPT",
      `Session store ${this.path} ${problem}. Nothing was reset. Repair the file, or move it aside to ` +
        `start fresh (e.g. mv "${this.path}" "${this.path}.bad") and restart.`,
      { cause },
    );
  }

  protected override changed(): void {
    this.dirty = true;
    if (!this.inBatch) this.schedule();
  }

  protected override commit(): Promise<void> {
    return this.writeNow();
  }

  private schedule(): void {
    if (this.timer !== undefined) return;
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      this.writeNow().catch((error: unknown) => {
        // Still dirty: the next change, flush() or close() retries, and flush/close will throw.
        this.log.error("session store write failed; will retry", { path: this.path, error: String(error) });
      });
    }, this.debounceMs);
  }

  private cancelTimer(): void {
    if (this.timer === undefined) return;
    this.timers.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Serialized: one write at a time, each snapshotting the state as it STARTS, so none is stale. */
  private writeNow(): Promise<void> {
    this.cancelTimer();
    const run = async () => {
      if (!this.dirty) return;
      this.dirty = false;
      const sessions: Record<string, unknown> = {};
      for (const [key, row] of this.rows) sessions[key] = encodeRow(row);
      const data = `${JSON.stringify({ version: SESSION_STORE_VERSION, sessions }, null, 2)}\n`;
      try {
        if (!this.dirReady) {
          await mkdir(this.dir, { recursive: true, mode: 0o700 });
          this.dirReady = true;
        }
        await atomicWriteFile(this.path, this.dir, data, this.renameOp ? { rename: this.renameOp } : {});
      } catch (error) {
        this.dirty = true;
        throw error;
      }
    };
    const next = this.chain.then(run, run);
    // The chain only orders writes; each write's failure reaches its own caller through `next`.
    this.chain = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }

  /** Write any pending change now and wait for every write in flight. */
  override async flush(): Promise<void> {
    if (this.state === "new") return;
    await this.writeNow();
  }

  override async close(): Promise<void> {
    await this.flush();
    this.state = "closed";
  }
}

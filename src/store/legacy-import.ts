/**
 * The one-time import of an older install's JSON state into the database: the session store
 * (sessions.json), each channel's resume records (trust/<channel>_resume_expectations.json) and
 * Telegram's getUpdates cursor (routing/telegram_offset.json). Everything is written in ONE
 * transaction made durable against power loss, and only then is each file renamed to
 * `<name>.imported`: never deleted, so an operator can always go back to it.
 *
 * Each file keeps the failure rule it had: an unreadable sessions.json refuses the start (typed
 * error, nothing imported), an unreadable resume file leaves its channel's routing refusing until it
 * is repaired (it stays in place and is imported at the next start), and an unusable cursor counts
 * as absent (one bounded replay, as before). A crash between the commit and the renames imports the
 * same content again at the next start: the import is an upsert, so that is harmless. Layer: store.
 */
import { readdir, readFile, rename } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../messaging/base/logger.js";
import { silentLogger } from "../messaging/base/logger.js";
import { decodeStore, SESSION_STORE_FILE } from "../messaging/session/legacy-session-file.js";
import type { ResumeExpectation } from "../messaging/session/resume-expectations.js";
import { decodeExpectations, RESUME_TRUST_DIR } from "../messaging/session/resume-expectations.js";
import type { SessionRow } from "../messaging/session/session-store.js";
import { StoreCorruptError } from "../messaging/store/errors.js";
import type { SqlEngine } from "./sql/engine.js";
import { sessionToColumns } from "./sql/session-rows.js";

/** Where parley before the durable store kept Telegram's getUpdates cursor (legacy format, read-only). */
const CURSOR_DIR = "routing";
const CURSOR_FILE = "telegram_offset.json";

/** The legacy cursor file's offset; null when it cannot be trusted (it then counted as 0). */
function parseCursor(text: string): number | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const offset = (value as { offset?: unknown } | null)?.offset;
  return typeof offset === "number" && Number.isSafeInteger(offset) && offset >= 0 ? offset : null;
}

/** The cursor name Telegram's getUpdates offset lives under in the store. */
export const TELEGRAM_CURSOR = "telegram.getUpdates";

const RESUME_FILE = /^([a-z0-9][a-z0-9_-]{0,31})_resume_expectations\.json$/;

export interface LegacyImportResult {
  sessions: number;
  /** Rows imported per channel. */
  resume: Map<string, number>;
  telegramCursor: number | null;
  /** Where each imported file now is, relative to the data home (`<file>.imported`). */
  renamed: string[];
  /** Channels whose resume file did not decode: the problem, per channel. The file stays. */
  resumeProblems: Map<string, string>;
}

interface Found {
  rel: string;
  sessions?: SessionRow[];
  resume?: { channel: string; rows: Map<string, ResumeExpectation> };
  cursor?: number;
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === "ENOENT";
}

async function readIfPresent(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

function errorText(error: unknown): string {
  // No parser detail: V8 quotes a snippet of the file, and these files hold conversation titles.
  if (error instanceof SyntaxError) return "is not valid JSON";
  return (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
}

async function findSessions(home: string, dbPath: string): Promise<Found | undefined> {
  const path = join(home, SESSION_STORE_FILE);
  let rows: SessionRow[];
  try {
    const bytes = await readIfPresent(path);
    if (bytes === undefined) return undefined;
    rows = decodeStore(bytes.toString("utf8"));
  } catch (error) {
    throw new StoreCorruptError(
      path,
      `cannot be imported: it ${errorText(error)}`,
      `Repair the file, or move it aside (mv "${path}" "${path}.bad") to start without those sessions; ` +
        `it is imported into ${dbPath} at the next start.`,
      { cause: error },
    );
  }
  return { rel: SESSION_STORE_FILE, sessions: rows };
}

async function findResumeFiles(home: string, problems: Map<string, string>, log: Logger): Promise<Found[]> {
  let names: string[];
  try {
    names = (await readdir(join(home, RESUME_TRUST_DIR))).filter((n) => RESUME_FILE.test(n)).sort();
  } catch (error) {
    if (isMissing(error)) return [];
    throw error;
  }
  const found: Found[] = [];
  for (const name of names) {
    const channel = RESUME_FILE.exec(name)?.[1] as string;
    const rel = `${RESUME_TRUST_DIR}/${name}`;
    try {
      const rows = decodeExpectations(await readFile(join(home, rel)));
      found.push({ rel, resume: { channel, rows } });
    } catch (error) {
      const problem = error instanceof SyntaxError ? "is not valid JSON" : errorText(error);
      problems.set(channel, problem);
      log.error("resume records not imported: the file does not read; its channel refuses resume routing", {
        file: rel,
        problem,
      });
    }
  }
  return found;
}

async function findCursor(home: string, log: Logger): Promise<Found | undefined> {
  const rel = `${CURSOR_DIR}/${CURSOR_FILE}`;
  let bytes: Buffer | undefined;
  try {
    bytes = await readIfPresent(join(home, rel));
  } catch (error) {
    log.warn("telegram cursor file unreadable; left in place, polling starts from the store's cursor", {
      error: errorText(error),
    });
    return undefined;
  }
  if (bytes === undefined) return undefined;
  const offset = parseCursor(bytes.toString("utf8"));
  // An unusable cursor always read as 0 (one bounded replay); importing nothing keeps that.
  if (offset === null) log.warn("telegram cursor file unusable; importing no cursor (one bounded replay)");
  return offset === null ? { rel } : { rel, cursor: offset };
}

async function write(engine: SqlEngine, found: readonly Found[], now: number, log: Logger): Promise<void> {
  await engine.durably((db) =>
    db.transaction().execute(async (trx) => {
      for (const f of found) {
        const seen = new Set<string>();
        for (const row of f.sessions ?? []) {
          const key = row.sessionKey;
          // A key the file names twice: keep the first, as the file store did.
          if (seen.has(key)) {
            log.warn("legacy import: duplicate session key; keeping the first", { key });
            continue;
          }
          seen.add(key);
          const columns = sessionToColumns({ ...row, sessionKey: key });
          const { session_key: _key, ...rest } = columns;
          await trx
            .insertInto("session")
            .values(columns)
            .onConflict((oc) => oc.column("session_key").doUpdateSet(rest))
            .execute();
        }
        for (const [conversation, r] of f.resume?.rows ?? []) {
          const values = {
            session_key: r.key,
            title: r.title,
            version: r.version,
            retired: r.retired ? 1 : 0,
          };
          await trx
            .insertInto("resume_expectation")
            .values({ channel: f.resume!.channel, conversation, ...values })
            .onConflict((oc) => oc.columns(["channel", "conversation"]).doUpdateSet(values))
            .execute();
        }
        if (f.cursor !== undefined) {
          const value = f.cursor;
          await trx
            .insertInto("cursor")
            .values({ name: TELEGRAM_CURSOR, value, updated_at_ms: now })
            .onConflict((oc) =>
              oc.column("name").doUpdateSet({ value, updated_at_ms: now }).where("cursor.value", "<", value),
            )
            .execute();
        }
      }
    }),
  );
}

/** Rename `path` out of the way without ever replacing an earlier `.imported` copy. */
async function setAside(home: string, rel: string, now: number): Promise<string> {
  const from = join(home, rel);
  let to = `${rel}.imported`;
  try {
    await readFile(join(home, to));
    to = `${rel}.imported-${now}`;
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  await rename(from, join(home, to));
  return to;
}

export async function importLegacyState(
  engine: SqlEngine,
  home: string,
  options: { logger?: Logger; now?: () => number } = {},
): Promise<LegacyImportResult> {
  const log = options.logger ?? silentLogger;
  const now = (options.now ?? Date.now)();
  const result: LegacyImportResult = {
    sessions: 0,
    resume: new Map(),
    telegramCursor: null,
    renamed: [],
    resumeProblems: new Map(),
  };
  const found: Found[] = [];
  const sessions = await findSessions(home, engine.location);
  if (sessions) found.push(sessions);
  found.push(...(await findResumeFiles(home, result.resumeProblems, log)));
  const cursor = await findCursor(home, log);
  if (cursor) found.push(cursor);
  if (found.length === 0) return result;

  await write(engine, found, now, log);
  for (const f of found) {
    if (f.sessions) result.sessions = f.sessions.length;
    if (f.resume) result.resume.set(f.resume.channel, f.resume.rows.size);
    if (f.cursor !== undefined) result.telegramCursor = f.cursor;
    result.renamed.push(await setAside(home, f.rel, now));
  }
  log.info("imported the state of an older install into the store", {
    sessions: result.sessions,
    resumeChannels: [...result.resume.keys()].join(","),
    telegramCursor: result.telegramCursor,
    renamed: result.renamed.join(","),
  });
  return result;
}

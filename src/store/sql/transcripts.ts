/**
 * Transcripts over the `transcript` table: one row per line of a session's history. An entry key
 * makes an append idempotent (unique per session), so a turn resumed after a crash never doubles a
 * line. Purges run the engine's afterPurge so deleted text does not linger in free pages. Layer: store.
 */
import { StoreCorruptError } from "../../messaging/store/errors.js";
import type {
  TranscriptAppend,
  TranscriptEntry,
  TranscriptKind,
  TranscriptLine,
  TranscriptPurge,
  TranscriptStore,
} from "../../messaging/store/port.js";
import type { ParleyDb, SqlEngine } from "./engine.js";
import { toNumber } from "./engine.js";

/** Most lines one recent() returns: /history and resume need a handful, not a session's life. */
export const MAX_RECENT_LINES = 500;

function encode(entry: TranscriptEntry): { kind: string; text: string; data: string | null } {
  switch (entry.kind) {
    case "user":
      return { kind: "user", text: entry.text, data: JSON.stringify({ attachments: entry.attachments }) };
    case "agent":
      return { kind: "agent", text: entry.text, data: null };
    case "tool":
      return { kind: "tool", text: entry.title, data: JSON.stringify({ status: entry.status }) };
    case "approval":
      return { kind: "approval", text: entry.title, data: JSON.stringify({ outcome: entry.outcome }) };
  }
}

function field(data: Record<string, unknown>, name: string): string {
  const v = data[name];
  if (typeof v !== "string") throw new Error(`${name} is not a string`);
  return v;
}

/** Throws an Error naming the problem when a row does not decode. */
function decode(kind: string, text: string, raw: string | null): TranscriptEntry {
  if (kind === "agent") return { kind, text };
  const data: unknown = raw === null ? null : JSON.parse(raw);
  if (typeof data !== "object" || data === null || Array.isArray(data))
    throw new Error("data is not an object");
  const d = data as Record<string, unknown>;
  switch (kind) {
    case "user": {
      const a = d.attachments;
      if (!Array.isArray(a) || !a.every((x) => typeof x === "string"))
        throw new Error("attachments are not names");
      return { kind, text, attachments: a };
    }
    case "tool":
      return { kind, title: text, status: field(d, "status") };
    case "approval":
      return { kind, title: text, outcome: field(d, "outcome") };
    default:
      throw new Error(`unknown kind ${JSON.stringify(kind)}`);
  }
}

export function checkAppend(line: TranscriptAppend): void {
  if (!Number.isFinite(line.atMs)) throw new RangeError(`transcript: atMs must be finite: ${line.atMs}`);
  if (line.entryKey === "") throw new RangeError("transcript: an entry key is absent or non-empty");
}

/**
 * One line appended (false: its entry key was already recorded). On `db` or a transaction: the
 * intake journal appends a turn's answer in the transaction that completes its messages.
 */
export async function appendLine(db: ParleyDb, line: TranscriptAppend): Promise<boolean> {
  const inserted = await db
    .insertInto("transcript")
    .values({
      session_key: line.sessionKey,
      turn_id: line.turnId ?? null,
      entry_key: line.entryKey ?? null,
      at_ms: line.atMs,
      ...encode(line.entry),
    })
    .onConflict((oc) => oc.columns(["session_key", "entry_key"]).doNothing())
    .returning("id")
    .executeTakeFirst();
  return inserted !== undefined;
}

export class SqlTranscriptStore implements TranscriptStore {
  constructor(
    private readonly engine: SqlEngine,
    private readonly db: ParleyDb = engine.db,
  ) {}

  async append(line: TranscriptAppend): Promise<boolean> {
    checkAppend(line);
    return appendLine(this.db, line);
  }

  async recent(sessionKey: string, n: number, kinds?: readonly TranscriptKind[]): Promise<TranscriptLine[]> {
    if (!Number.isSafeInteger(n) || n < 1 || n > MAX_RECENT_LINES) {
      throw new RangeError(`transcript: n must be 1..${MAX_RECENT_LINES}: ${n}`);
    }
    let query = this.db
      .selectFrom("transcript")
      .selectAll()
      .where("session_key", "=", sessionKey)
      .orderBy("id", "desc")
      .limit(n);
    if (kinds) {
      if (kinds.length === 0) return [];
      query = query.where("kind", "in", [...kinds]);
    }
    const rows = await query.execute();
    return rows.reverse().map((r) => {
      let entry: TranscriptEntry;
      try {
        entry = decode(r.kind, r.text, r.data);
      } catch (error) {
        throw new StoreCorruptError(
          this.engine.location,
          `holds an unreadable transcript line ${r.id} (${(error as Error).message})`,
          "Purge that session's transcript, or run `parley doctor` and restore a backup if it fails.",
          { cause: error },
        );
      }
      return {
        id: toNumber(r.id),
        sessionKey: r.session_key,
        turnId: r.turn_id,
        atMs: toNumber(r.at_ms),
        entry,
      };
    });
  }

  async purge(what: TranscriptPurge): Promise<number> {
    let query = this.db.deleteFrom("transcript");
    if (what.scope === "session") query = query.where("session_key", "=", what.sessionKey);
    else if (what.scope === "before") {
      if (!Number.isFinite(what.beforeMs))
        throw new RangeError(`transcript: cutoff must be finite: ${what.beforeMs}`);
      query = query.where("at_ms", "<", what.beforeMs);
    }
    const result = await query.executeTakeFirst();
    const deleted = Number(result.numDeletedRows);
    if (deleted > 0) await this.engine.afterPurge();
    return deleted;
  }
}

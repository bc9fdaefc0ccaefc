/**
 * Resume expectations: the durable, conversation-keyed shadow of inbound resume bindings, one record
 * per channel (the store's `resume.forChannel(channel)`; before the store, a file per channel at
 * `<dataHome>/trust/<channel>_resume_expectations.json`, which the legacy import still decodes here).
 *
 * A resume binding lives on the bound session's row (its mirrorLink). A recycle, a restart prune or a
 * dashboard unlink can destroy that row and with it the only evidence the chat was attached, and the
 * router would then silently fall back to the chat's own session. This record makes that loss
 * reportable. It detects loss; it is not routing authority (the session store is).
 *
 * Shape: `{ "<conversationKey>": { "key": string, "title": string, "version": integer, "retired":
 * boolean } }`. Persistence is fail-closed: memory publishes only after a durable write, and a
 * record that cannot be read leaves its channel UNREADABLE (every routing decision refuses) without
 * ever being rewritten or reset. Layer: messaging.
 */

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
 * Decode a legacy record file's bytes (the import of an older install, and doctor). Throws an Error naming the first problem: a row silently dropped here is a
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

/**
 * What the binder needs from a resume record (the storage port's `resume.forChannel`). Reads are
 * synchronous after ready(); writes publish to memory only once durable.
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

/**
 * The storage port: everything parley must not lose, behind one interface with sub-repositories.
 * Types only; the adapters live outside the core (src/store/sqlite today, PostgreSQL next), so the
 * core never depends on a database. Every method except the session store's is async because the
 * same port runs over a network driver; the session store keeps its synchronous reads (see below).
 * Layer: messaging.
 */
import type { AuditRecord } from "../security/audit.js";
import type { ChannelLink } from "../session/keys.js";
import type { ResumeExpectations } from "../session/resume-expectations.js";
import type { SessionStore } from "../session/session-store.js";

/** A JSON-serializable value: what the journal stores as a message's payload. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

// ── intake journal ──────────────────────────────────────────────────────────────────────────────

/** An inbound message as the channel received it, AFTER its sender was authorized. */
export interface InboundMessage {
  /** The channel's namespace ("telegram", "discord", "webchat"). */
  channel: string;
  /**
   * The platform's stable id for this delivery (Telegram update_id, Discord message id, a web chat
   * client message id). Redelivery of the same id within the dedupe window is a duplicate. `null`
   * when the platform gives none: accepted every time, never deduped.
   */
  platformMessageId: string | null;
  /** The conversation the message belongs to (what resume and ordering group by). */
  conversationKey: string;
  /** Everything a restarted gateway needs to run the turn again. */
  payload: JsonValue;
  /** When the platform says it was sent/received (epoch ms); the journal stamps its own acceptance. */
  receivedAtMs: number;
}

export type IntakeState = "accepted" | "claimed" | "done";

/**
 * How a journaled message ended. answered: the turn ran and its reply landed. refused: policy
 * refused it after acceptance (routing, a full queue). failed: the turn failed and the user was told.
 * stale: found unfinished at start, too old to run; the user was told to send it again.
 */
export type IntakeOutcome = "answered" | "refused" | "failed" | "stale";

export type AcceptResult =
  | { kind: "accepted"; id: number }
  /**
   * Already journaled: the caller acknowledges the platform again and does nothing else.
   * `samePayload` false means the platform reused an id for different content: worth an audit line.
   */
  | { kind: "duplicate"; id: number; state: IntakeState; samePayload: boolean };

export type ClaimResult =
  /** `attempt` counts claims, so 2+ means a restart interrupted an earlier run of this message. */
  { kind: "claimed"; attempt: number } | { kind: "finished"; outcome: IntakeOutcome } | { kind: "unknown" };

export interface UnfinishedIntake {
  id: number;
  channel: string;
  platformMessageId: string | null;
  conversationKey: string;
  payload: JsonValue;
  receivedAtMs: number;
  acceptedAtMs: number;
  state: "accepted" | "claimed";
  /** Claims so far; a message that crashed the gateway on every attempt shows here. */
  attempts: number;
  /** Now minus acceptance, so the caller can tell "answer it" from "tell the user we restarted". */
  ageMs: number;
}

/**
 * The journal behind accept-before-ack: a message is written here before the platform is
 * acknowledged or a cursor advances, and marked done only when its turn has ended.
 */
export interface IntakeJournal {
  /**
   * Durable when it resolves: the row survives a SIGKILL of the process right after. Atomic with
   * the dedupe check, so two redeliveries racing each other yield one "accepted".
   */
  accept(message: InboundMessage): Promise<AcceptResult>;
  /** Mark a message as being worked on (its turn or command starts; again after a restart). */
  claim(id: number): Promise<ClaimResult>;
  /**
   * True when this call finished it; false when it was already done or is unknown. The payload is
   * dropped (its digest stays, for dedupe): a finished message's words are not kept here.
   */
  complete(id: number, outcome: IntakeOutcome): Promise<boolean>;
  /**
   * The turn answering these messages delivered its whole answer: every one of them completes
   * "answered" AND the answer's transcript line (when given) is appended, in ONE transaction. A kill
   * can then never leave an answered message unfinished (run again, or given up on after a restart)
   * or missing from the history the next turn's agent reads. Resolves how many it finished.
   */
  completeAnswered(ids: readonly number[], answer?: TranscriptAppend): Promise<number>;
  /**
   * Give a DONE message's platform id back: a redelivery of that id is then accepted as new. For a
   * platform that redelivers what it saw go unanswered (WeCom's msgid): a message whose work failed
   * must not stay deduped against the one mechanism that can recover it. True when an id was freed.
   */
  forget(id: number): Promise<boolean>;
  /** Accepted or claimed messages, oldest first: what a starting gateway resumes. */
  unfinished(): Promise<UnfinishedIntake[]>;
  countUnfinished(): Promise<number>;
  /**
   * Delete DONE rows completed before `beforeMs`; unfinished rows are never pruned. The retention of
   * done rows IS the dedupe window: a redelivery after its row is gone is accepted again.
   */
  prune(beforeMs: number): Promise<number>;
}

// ── delivery ledger ─────────────────────────────────────────────────────────────────────────────

/**
 * One outbound part of a turn. `turnId` must be stable across a restart (an intake-driven turn uses
 * `intake:<id>@<received>`), so the resumed turn finds what its first run already posted.
 */
export interface PartKey {
  turnId: string;
  partIndex: number;
}

export interface DeliveredPart extends PartKey {
  /**
   * sending: the platform call was about to be made and its result is not recorded, so after a
   * crash the part may or may not exist. landed: the platform returned `platformMessageId`.
   */
  state: "sending" | "landed";
  platformMessageId: string | null;
  /** contentDigest of the text the part carries (or was about to carry). */
  textDigest: string;
  updatedAtMs: number;
}

export interface DeliveryLedger {
  /** Record the intent before the platform call: a crash in between leaves evidence, not silence. */
  markSending(part: PartKey, textDigest: string): Promise<void>;
  /** Record what landed (a post, or an edit of a landed part with new text). */
  markLanded(part: PartKey, platformMessageId: string, textDigest: string): Promise<void>;
  /** Every recorded part of a turn, by index. */
  parts(turnId: string): Promise<DeliveredPart[]>;
  /** Delete LANDED parts last touched before `beforeMs`; a "sending" part is kept as evidence. */
  prune(beforeMs: number): Promise<number>;
}

// ── transcripts ─────────────────────────────────────────────────────────────────────────────────

export type TranscriptEntry =
  | { kind: "user"; text: string; attachments: string[] }
  | { kind: "agent"; text: string }
  | { kind: "tool"; title: string; status: string }
  | { kind: "approval"; title: string; outcome: string };

export type TranscriptKind = TranscriptEntry["kind"];

export interface TranscriptAppend {
  sessionKey: string;
  atMs: number;
  entry: TranscriptEntry;
  turnId?: string;
  /**
   * Idempotency key within the session (e.g. `intake:<id>@<received>:user`): a resumed turn appending the same
   * entry again is a no-op, so a crash never doubles a line of history.
   */
  entryKey?: string;
}

export interface TranscriptLine {
  id: number;
  sessionKey: string;
  turnId: string | null;
  atMs: number;
  entry: TranscriptEntry;
}

export type TranscriptPurge =
  | { scope: "all" }
  | { scope: "session"; sessionKey: string }
  | { scope: "before"; beforeMs: number };

export interface TranscriptStore {
  /** False when `entryKey` was already recorded for this session (nothing written). */
  append(line: TranscriptAppend): Promise<boolean>;
  /** The last `n` lines of a session, oldest first; `kinds` narrows (resume replays user/agent only). */
  recent(sessionKey: string, n: number, kinds?: readonly TranscriptKind[]): Promise<TranscriptLine[]>;
  /** Delete lines; resolves to how many went. The deleted text is overwritten, not just unlinked. */
  purge(what: TranscriptPurge): Promise<number>;
}

// ── small repositories ──────────────────────────────────────────────────────────────────────────

/** The agent-side session a parley session was last bound to, for `session/load` after a restart. */
export interface AgentSessionRef {
  /** Which agent issued the id (the caller's identity for the configured agent): ids do not travel. */
  agent: string;
  agentSessionId: string;
}

export interface AgentSessionStore {
  get(sessionKey: string): Promise<AgentSessionRef | undefined>;
  set(sessionKey: string, ref: AgentSessionRef): Promise<void>;
  clear(sessionKey: string): Promise<boolean>;
}

/** Durable, advance-only positions in a platform's stream (Telegram's getUpdates offset). */
export interface CursorStore {
  get(name: string): Promise<number | undefined>;
  /**
   * Store `value` unless the stored one is already >= it; resolves to the value now stored. Durable
   * against power loss, not only a process kill, and makes every EARLIER accept just as durable:
   * advancing a cursor is what lets a platform forget a message, so it is the point that must hold.
   */
  advance(name: string, value: number): Promise<number>;
}

/**
 * Where a conversation is reached, for a platform that offers no lookup (Teams: the serviceUrl an
 * activity arrived with). Written only after its sender was authorized; read by proactive sends
 * and by a restarted gateway; forgotten when the platform refuses the conversation for good.
 */
export interface ChannelRoute {
  channel: string;
  /** The platform's conversation id. */
  conversation: string;
  /** The channel's own form of the address (plain data it alone reads). */
  address: JsonValue;
  /** The authorized identity the conversation belongs to. */
  owner: string;
  updatedAtMs: number;
}

export interface RouteStore {
  /** Insert or replace the route of (channel, conversation). */
  put(route: Omit<ChannelRoute, "updatedAtMs">): Promise<void>;
  get(channel: string, conversation: string): Promise<ChannelRoute | undefined>;
  /** Every route of a channel, most recently written first. */
  list(channel: string): Promise<ChannelRoute[]>;
  /** True when a route was removed. */
  forget(channel: string, conversation: string): Promise<boolean>;
}

export interface AuditStore {
  append(records: readonly AuditRecord[]): Promise<void>;
  /** The newest `n` records, oldest first. */
  recent(n: number): Promise<AuditRecord[]>;
}

/** Inbound frames a channel did not turn into a message, counted per channel and reason (doctor reads them). */
export interface InboundDropTotal {
  channel: string;
  reason: string;
  count: number;
  lastAtMs: number;
}

export interface InboundDropStore {
  /** Add each row's count to the stored total of its (channel, reason); the later time is kept. */
  add(batch: readonly InboundDropTotal[]): Promise<void>;
  /** Every total, by channel then reason. */
  totals(): Promise<InboundDropTotal[]>;
}

/** Per-channel resume records (the durable shadow of resume bindings); one instance per channel. */
export interface ResumeRecordStore {
  forChannel(channel: string): ResumeExpectations;
}

// ── scheduled prompts ───────────────────────────────────────────────────────────────────────────

/** When a scheduled prompt runs: every interval, or once at a moment (epoch ms). */
export type JobSchedule = { kind: "every"; everyMs: number } | { kind: "at"; atMs: number };

/** The conversation that scheduled a job, or a named target from the configuration. */
export type JobDestination = { kind: "link"; link: ChannelLink } | { kind: "target"; name: string };

/**
 * A prompt run unattended on a schedule, its output delivered to ONE surface: the conversation that
 * scheduled it (or, for a job from the configuration, the named target it gives).
 */
export interface ScheduledJob {
  /** Short and opaque; what /jobs lists and /unschedule takes. */
  id: string;
  /** The channel that scheduled it ("config" for a job from the configuration). */
  channel: string;
  /** The conversation it belongs to (`<channel>:<route>`): what /jobs lists and who may cancel. */
  conversationKey: string;
  /** The session key of that conversation when it was scheduled: the principal re-checked at egress. */
  sessionKey: string;
  /** Who scheduled it (the platform user id). */
  userId: string;
  /** Where its output is delivered; resolved and re-authorized at every delivery. */
  deliverTo: JobDestination;
  /** The conversation's address as its channel's hub spells it (journal form), for channel-server wakes. */
  address: JsonValue;
  prompt: string;
  schedule: JobSchedule;
  /** The next time it is due (epoch ms). */
  nextRunMs: number;
  createdMs: number;
  /** Runs started so far; a run is claimed (counted) before it starts. */
  runs: number;
  /** The run claimed and not yet finished (a crash left it): resumed once at the next start. */
  running: number | null;
}

export interface JobStore {
  /** Insert or replace the whole row: the scheduler keeps jobs in memory and writes each change through. */
  save(job: ScheduledJob): Promise<void>;
  list(): Promise<ScheduledJob[]>;
  /** True when it was there. */
  remove(id: string): Promise<boolean>;
}

// ── the channel server's inbox ──────────────────────────────────────────────────────────────────

/**
 * A message the channel server handed to its agent host (in), or one the host sent (out). Kept so a
 * locator resolves to durable state: a wake carries only the locator, and the body is read later
 * through `channel_read`, possibly after a restart.
 */
export interface InboxEntry {
  id: number;
  /** `<channel>:<route>`: the conversation the entry belongs to (what a locator is bound to). */
  conversationKey: string;
  channel: string;
  /** The conversation's address as its channel's hub spells it (journal form). */
  address: JsonValue;
  direction: "in" | "out";
  /** The sender's platform id (in), or "" (out). */
  userId: string;
  text: string;
  /** Names of the files that came with it. */
  attachments: string[];
  /** The platform's id of the message (reactions, replies), when it has one. */
  platformMessageId: string | null;
  /** The turn whose parts delivered an outbound entry (edits go through it again). */
  turnId: string | null;
  atMs: number;
  handled: boolean;
}

export interface InboxStore {
  add(entry: Omit<InboxEntry, "id" | "handled">): Promise<number>;
  get(id: number): Promise<InboxEntry | undefined>;
  /** The conversation's last `n` entries with an id at most `uptoId` (all when absent), oldest first. */
  recent(conversationKey: string, n: number, uptoId?: number): Promise<InboxEntry[]>;
  /** True when this call marked it. */
  markHandled(id: number): Promise<boolean>;
  /** Delete entries older than `beforeMs`. */
  prune(beforeMs: number): Promise<number>;
}

// ── the store ───────────────────────────────────────────────────────────────────────────────────

export type IntegrityResult = { ok: true } | { ok: false; problems: string[] };

export interface StoreHealth {
  /** Where the data lives (a file path, or a database URL without credentials). */
  location: string;
  schemaVersion: number;
  sizeBytes: number;
  integrity: IntegrityResult;
  unfinishedIntake: number;
}

/**
 * What a started channel gets of the store besides the session rows (which reach it as the
 * context's `store`): the journal, the ledger, transcripts, resume records, cursors and agent
 * session ids. The session rows and the audit rows each have their one route already.
 */
export type DurableState = Omit<ParleyStore, "sessions" | "audit" | "inboundDrops" | "health" | "close">;

export interface ParleyStore {
  /**
   * Reads are synchronous from memory (they sit on every turn's hot path); every row was loaded at
   * open and each change is written through to the database shortly after, or at the end of a batch.
   */
  readonly sessions: SessionStore;
  readonly agentSessions: AgentSessionStore;
  readonly intake: IntakeJournal;
  readonly deliveries: DeliveryLedger;
  readonly transcripts: TranscriptStore;
  readonly resume: ResumeRecordStore;
  readonly cursors: CursorStore;
  readonly routes: RouteStore;
  readonly audit: AuditStore;
  /** Counts of inbound frames dropped with a reason (the ledger's route to doctor). */
  readonly inboundDrops: InboundDropStore;
  /** Scheduled prompts (/every, /at, and the configured ones). */
  readonly jobs: JobStore;
  /** What the channel server handed its agent host, for locators and `channel_read`. */
  readonly inbox: InboxStore;
  /** Runs a full integrity check: seconds on a large database, so for doctor, not for a hot path. */
  health(): Promise<StoreHealth>;
  /** Flush the session store, then release the database. */
  close(): Promise<void>;
}

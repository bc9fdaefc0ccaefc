/**
 * Conversation history over the transcript store: what each turn leaves behind (the user's messages
 * with their file names, the tools the agent called, approval outcomes, the agent's final text),
 * what `/history` shows, and the replay a fresh agent session is given when the session a
 * conversation had could not be restored. A temporary or incognito session writes none of it.
 *
 * Every line of a turn carries an entry key derived from the turn id, and an intake-driven turn's
 * id survives a restart (`intake:<id>@<received>`): a turn resumed after a crash re-records the same keys, and
 * the store drops them, so a crash never doubles a line of history.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "../base/logger.js";
import type { TranscriptAppend, TranscriptEntry, TranscriptLine, TranscriptStore } from "../store/port.js";
import { clip } from "../text/clip.js";
import { MODE_INCOGNITO, MODE_TEMPORARY } from "./privacy-mode.js";
import type { SessionStore } from "./session-store.js";

/** The earlier messages given to a fresh agent session: the text, and how many (the chat says so). */
export interface Replay {
  text: string;
  messages: number;
}

/** How many earlier messages a fresh agent session is given (the spec's five-message replay). */
export const REPLAY_MESSAGES = 5;
/** One replayed message at most this long (code points): context, not a second transcript. */
const REPLAY_ENTRY_CHARS = 2_000;

/** One user message of a turn (a drained burst has several). */
export interface UserLine {
  text: string;
  /** Names of the files it carried. */
  attachments: readonly string[];
  /**
   * The turn id the message itself is journaled under (`intake:<id>@<received>`), when it is: its
   * line is keyed on it, not on the turn answering it, so a message first answered in a burst that
   * a kill cut short, then answered alone after the restart, is recorded once.
   */
  ownTurnId?: string;
}

/** What the turn driver reports as it goes (see TurnObserver in turn/driver.ts). */
export interface TurnRecord {
  toolCall(title: string): void;
  approval(title: string, outcome: string): void;
  /**
   * The turn ended; `text` is its final (redacted) answer. Resolves once everything is written.
   * With `commit`, the answer's line (undefined: nothing to record) is handed to it, after every
   * earlier line is written, to be written with the bookkeeping of the messages the turn answered
   * (one transaction); `commit` resolving false or failing leaves the line to be appended here.
   */
  end(text: string, commit?: AnswerCommit): Promise<void>;
}

/** Writes a turn's answer line together with the end of the messages it answered; false: not written. */
export type AnswerCommit = (line: TranscriptAppend | undefined) => Promise<boolean>;

/** A turn id for a turn no journal row stands behind: unique, so its keys never collide. */
export function ephemeralTurnId(): string {
  return `turn:${randomUUID()}`;
}

export interface ConversationHistoryOptions {
  transcripts: TranscriptStore;
  /** The durable privacy flags: a restricted session records nothing. */
  flags: Pick<SessionStore, "flag">;
  now: () => number;
  logger: Logger;
}

export class ConversationHistory {
  /** Session key -> the turn running on it now (its own lines are not "earlier" to a replay). */
  private readonly running = new Map<string, string>();

  constructor(private readonly o: ConversationHistoryOptions) {}

  /** A temporary or incognito session keeps no history; an unreadable flag counts as restricted. */
  restricted(key: string): boolean {
    try {
      return this.o.flags.flag(key, MODE_TEMPORARY) || this.o.flags.flag(key, MODE_INCOGNITO);
    } catch (error) {
      this.o.logger.warn("privacy flag unreadable; recording no history", {
        session: key,
        error: String(error),
      });
      return true;
    }
  }

  /** Start recording a turn: its user lines are written now, the rest as it runs. */
  begin(turn: { sessionKey: string; turnId: string; users: readonly UserLine[] }): TurnRecord {
    const key = turn.sessionKey;
    this.running.set(key, turn.turnId);
    let chain: Promise<void> = Promise.resolve();
    let tools = 0;
    let approvals = 0;
    const line = (entryKey: string, entry: TranscriptEntry): TranscriptAppend | undefined =>
      // Checked per line: /temporary mid-turn stops the very next one.
      this.restricted(key)
        ? undefined
        : { sessionKey: key, turnId: turn.turnId, entryKey, atMs: this.o.now(), entry };
    const append = (l: TranscriptAppend | undefined) => {
      if (!l) return;
      chain = chain.then(() =>
        this.o.transcripts.append(l).then(
          () => undefined,
          (error: unknown) =>
            // History is a convenience: a failed line must not cost the user the answer.
            this.o.logger.warn("transcript write failed", { session: key, error: String(error) }),
        ),
      );
    };
    const write = (entryKey: string, entry: TranscriptEntry) =>
      append(line(`${turn.turnId}:${entryKey}`, entry));
    turn.users.forEach((u, i) => {
      const entry = { kind: "user" as const, text: u.text, attachments: [...u.attachments] };
      // A message journaled under its own id: the same key as the first line of its own turn.
      if (u.ownTurnId !== undefined) append(line(`${u.ownTurnId}:user:0`, entry));
      else write(`user:${i}`, entry);
    });
    return {
      toolCall: (title) => write(`tool:${tools++}`, { kind: "tool", title, status: "called" }),
      approval: (title, outcome) => write(`approval:${approvals++}`, { kind: "approval", title, outcome }),
      end: async (text, commit) => {
        const answer = text.trim() ? line(`${turn.turnId}:agent`, { kind: "agent", text }) : undefined;
        if (this.running.get(key) === turn.turnId) this.running.delete(key);
        await chain;
        if (commit && (await committed(commit, answer, key, this.o.logger))) return;
        append(answer);
        await chain;
      },
    };
  }

  /** The last `n` lines of a session, oldest first. */
  recent(key: string, n: number): Promise<TranscriptLine[]> {
    return this.o.transcripts.recent(key, n);
  }

  /**
   * The earlier messages of a session as one block of context for a fresh agent session, or
   * undefined when there are none. The running turn's own lines are left out: they are the prompt.
   */
  async replayFor(key: string): Promise<Replay | undefined> {
    const current = this.running.get(key);
    const lines = (await this.o.transcripts.recent(key, REPLAY_MESSAGES * 3, ["user", "agent"]))
      .filter((l) => l.turnId === null || l.turnId !== current)
      .slice(-REPLAY_MESSAGES);
    if (lines.length === 0) return undefined;
    const body = lines.map((l) => {
      const who = l.entry.kind === "user" ? "User" : "Assistant";
      const text = l.entry.kind === "user" || l.entry.kind === "agent" ? l.entry.text : "";
      return `${who}: ${clip(text, REPLAY_ENTRY_CHARS)}`;
    });
    const text = [
      `[Context: this conversation's earlier agent session could not be restored. Its last ${lines.length} message(s), oldest first:]`,
      ...body,
      "[End of context. The user's new message follows.]",
    ].join("\n\n");
    return { text, messages: lines.length };
  }
}

/** Runs the commit; a failed one is logged, and the answer line is then appended on its own. */
async function committed(
  commit: AnswerCommit,
  answer: TranscriptAppend | undefined,
  key: string,
  logger: Logger,
): Promise<boolean> {
  try {
    return await commit(answer);
  } catch (error) {
    logger.warn("recording the answer with its messages failed; recording it alone", {
      session: key,
      error: String(error),
    });
    return false;
  }
}

/**
 * Accept-before-ack, as the kit does it for every channel (the hub holds one of these). An
 * authorized message is written to the intake journal, with its platform id, before the platform is
 * acknowledged or a cursor moves past it; a redelivery of the same platform id is dropped
 * (authorization comes first, so a stranger can never occupy the dedupe window). Each journaled
 * message travels as a ticket with its work and is completed when that work ends; at start, whatever
 * is still unfinished is run again (or, too old or cut short too often, its sender is told).
 *
 * The journal form is plain data: the channel's address, the sender, the text, file descriptors,
 * and the channel's own extra only through its surface's `journalExtra`/`reviveExtra`.
 */
import type { Logger } from "../base/logger.js";
import type { AuditSink } from "../security/audit.js";
import type {
  IntakeJournal,
  IntakeOutcome,
  JsonValue,
  TranscriptAppend,
  UnfinishedIntake,
} from "../store/port.js";
import { oneLine } from "../text/clip.js";
import type { ChannelDurability } from "./contract.js";
import { TurnParts } from "./delivery.js";
import type { InboundDrops } from "./inbound-drops.js";
import type { ChannelSurface, IncomingMessage } from "./surface.js";
import type { InboundAttachment } from "./transport.js";

/** A journaled message, carried with its work until that work ends. */
export interface IntakeTicket {
  readonly id: number;
  /**
   * The id of the turn that answers it first: stable across a restart, so a resumed turn finds
   * what its first run delivered and recorded.
   */
  readonly turnId: string;
}

/** Where a message came from, as the journal needs it. */
export interface IntakeSource {
  /** The platform's stable id of this delivery (the dedupe key); null when it gives none. */
  platformId: string | null;
  /** When the platform says it was sent (epoch ms); default: now. */
  receivedAtMs?: number;
  /** Messages the platform sent as one (a Telegram album): merged again when resumed together. */
  group?: string;
}

/** What the journal settles at start. */
export interface JournalPolicy {
  /**
   * An unfinished message older than this is not run after a restart: its sender is told the
   * gateway restarted while working on it and to send it again.
   */
  staleAfterMs: number;
  /** A message whose runs were cut short this often is not run again (it may be what kills us). */
  maxAttempts: number;
}

/** Unfinished messages found at start that belong together (one, or an album), oldest first. */
export interface UnfinishedGroup<A, P> {
  messages: IncomingMessage<A, P>[];
  tickets: IntakeTicket[];
  ageMs: number;
  /** The most runs any of them was given (each cut short: they are unfinished). */
  attempts: number;
}

interface JournaledMessage {
  v: 1;
  address: JsonValue;
  userId: string;
  text: string;
  messageId?: string;
  attachments?: InboundAttachment[];
  isMention?: boolean;
  interpretCommands?: boolean;
  staleVerdict?: boolean;
  extra?: JsonValue;
  group?: string;
}

/**
 * The id of the turn that first answers a journaled message. The row id keeps it stable across a
 * restart; the message's receipt time makes it unique beyond this database: a store moved aside
 * and started empty numbers its rows from 1 again, and a part key sent as a platform's idempotency
 * key (Discord's nonce, remembered for minutes) must never match an earlier store's.
 */
export function turnIdOf(intakeId: number, receivedAtMs: number): string {
  return `intake:${intakeId}@${receivedAtMs}`;
}

export interface ChannelJournalOptions<A, P> {
  channel: string;
  /**
   * The platform redelivers a message it saw go unanswered, keyed on its own id (WeCom's msgid): a
   * message whose work FAILED gives that id back, so the redelivery runs instead of being dropped.
   */
  forgetFailed?: boolean;
  durable: ChannelDurability;
  surface: ChannelSurface<A, P>;
  audit: AuditSink;
  /** A redelivery is counted as a duplicate drop, beside the channel's own. */
  drops: InboundDrops;
  logger: Logger;
  now: () => number;
}

export class ChannelJournal<A, P> {
  private readonly journal: IntakeJournal;

  constructor(private readonly o: ChannelJournalOptions<A, P>) {
    this.journal = o.durable.state.intake;
  }

  /**
   * Durable when it resolves: the message survives a SIGKILL right after. null for a redelivery
   * (the caller acknowledges the platform again and does nothing else).
   */
  async accept(message: IncomingMessage<A, P>, source: IntakeSource): Promise<IntakeTicket | null> {
    const receivedAtMs = source.receivedAtMs ?? this.o.now();
    const result = await this.journal.accept({
      channel: this.o.channel,
      platformMessageId: source.platformId,
      conversationKey: `${this.o.channel}:${this.o.surface.conversation(message.address).route}`,
      payload: this.encode(message, source.group) as unknown as JsonValue,
      receivedAtMs,
    });
    if (result.kind === "duplicate") {
      // A platform's redelivery of what the journal holds: counted here, once, for every channel (a
      // channel counts only what its own window catches before the journal, as "duplicate").
      this.o.drops.record({
        reason: result.samePayload ? "redelivered" : "redelivered_changed",
        operation: "intake",
        user: message.userId,
        conversation: this.o.surface.conversation(message.address).route,
        fields: { intake: result.id },
      });
      return null;
    }
    return { id: result.id, turnId: turnIdOf(result.id, receivedAtMs) };
  }

  /** Mark the messages' work as ended. A failed write is logged: the message then runs once more. */
  async finish(tickets: readonly IntakeTicket[], outcome: IntakeOutcome): Promise<void> {
    for (const t of tickets) {
      try {
        await this.journal.complete(t.id, outcome);
        if (outcome === "failed" && this.o.forgetFailed && (await this.journal.forget(t.id)))
          this.o.audit.log("intake", "revoked", { channel: this.o.channel, reason: "failed", intake: t.id });
      } catch (error) {
        this.o.logger.error(`${this.o.channel}: completing a journaled message failed`, {
          intake: t.id,
          error: String(error),
        });
      }
    }
  }

  /**
   * The turn answering these messages delivered its answer: they complete "answered" in one
   * transaction with the answer's history line. False when that write failed (logged): the caller
   * then records the line and completes the messages the ordinary way.
   */
  async answered(tickets: readonly IntakeTicket[], line: TranscriptAppend | undefined): Promise<boolean> {
    try {
      await this.journal.completeAnswered(
        tickets.map((t) => t.id),
        line,
      );
      return true;
    } catch (error) {
      this.o.logger.error(`${this.o.channel}: completing an answered turn's messages failed`, {
        intakes: tickets.map((t) => t.id),
        error: String(error),
      });
      return false;
    }
  }

  /** This channel's unfinished messages, decoded and grouped, oldest first. */
  async unfinished(): Promise<UnfinishedGroup<A, P>[]> {
    return this.grouped((await this.journal.unfinished()).filter((r) => r.channel === this.o.channel));
  }

  /** Rows decoded and grouped (an album's items together), in the order given. */
  private async grouped(rows: readonly UnfinishedIntake[]): Promise<UnfinishedGroup<A, P>[]> {
    const groups: UnfinishedGroup<A, P>[] = [];
    const byGroup = new Map<string, UnfinishedGroup<A, P>>();
    for (const row of rows) {
      const message = this.decode(row);
      if (message === null) {
        // Never runnable, so never left unfinished: it would be found again at every start.
        await this.finish([{ id: row.id, turnId: turnIdOf(row.id, row.receivedAtMs) }], "failed");
        continue;
      }
      const attempts = row.attempts;
      const ticket = { id: row.id, turnId: turnIdOf(row.id, row.receivedAtMs) };
      const groupKey = (row.payload as { group?: unknown } | null)?.group;
      const key = typeof groupKey === "string" ? `${row.conversationKey}\u0000${groupKey}` : undefined;
      const existing = key === undefined ? undefined : byGroup.get(key);
      if (existing) {
        existing.messages.push(message);
        existing.tickets.push(ticket);
        existing.attempts = Math.max(existing.attempts, attempts);
        continue;
      }
      const group = { messages: [message], tickets: [ticket], ageMs: row.ageMs, attempts };
      groups.push(group);
      if (key !== undefined) byGroup.set(key, group);
    }
    return groups;
  }

  /**
   * The outbound parts of the work answering these tickets (its first one names it): recorded in
   * the ledger, so a second run after a crash edits what the first one posted. `suffix` names a
   * different piece of work for the same message (the notice that it will not run).
   */
  parts(tickets: readonly IntakeTicket[] | undefined, suffix = ""): Promise<TurnParts> {
    const first = tickets?.[0];
    if (!first) return Promise.resolve(TurnParts.unrecorded());
    return TurnParts.open(this.o.durable.state.deliveries, first.turnId + suffix, {
      channel: this.o.channel,
      logger: this.o.logger,
      audit: this.o.audit,
    });
  }

  /**
   * At start: run again (`run`, which resolves once a message is routed) what this channel left
   * unfinished, or, when it is too old or was cut short too often, tell its sender instead. Each
   * conversation's messages go in the order they came, the conversations side by side (one busy
   * chat must not hold up the others); resolves once all are routed.
   */
  async resume(
    run: (message: IncomingMessage<A, P>) => Promise<void>,
    rows?: readonly UnfinishedIntake[],
  ): Promise<void> {
    // `rows`: what this gateway took in hand from a journal shared by several (docs/scale-out.md).
    const groups = rows ? await this.grouped(rows) : await this.unfinished();
    const byConversation = new Map<string, UnfinishedGroup<A, P>[]>();
    for (const group of groups) {
      const route = this.o.surface.conversation((group.messages[0] as IncomingMessage<A, P>).address).route;
      byConversation.set(route, [...(byConversation.get(route) ?? []), group]);
    }
    await Promise.all([...byConversation.values()].map((groups) => this.resumeConversation(groups, run)));
  }

  private async resumeConversation(
    groups: readonly UnfinishedGroup<A, P>[],
    run: (message: IncomingMessage<A, P>) => Promise<void>,
  ): Promise<void> {
    const merge = this.o.surface.mergeGroup;
    for (const group of groups) {
      const messages =
        group.messages.length > 1 && merge
          ? [{ ...merge(group.messages), tickets: group.tickets }]
          : group.messages.map((m, i) => ({ ...m, tickets: group.tickets.slice(i, i + 1) }));
      const stale = group.ageMs > this.o.durable.staleAfterMs;
      // Started that often and never finished: each run was cut short (it may be what kills us).
      const poisoned = group.attempts >= this.o.durable.maxAttempts;
      for (const message of messages) {
        try {
          if (stale || poisoned) await this.giveUp(message, poisoned ? group.attempts : 0);
          else await run(message);
        } catch (error) {
          this.o.logger.error(`${this.o.channel}: resuming a message failed`, { error: String(error) });
        }
      }
    }
  }

  /** A message found unfinished at start that will not run: its sender is told, then it is closed. */
  private async giveUp(message: IncomingMessage<A, P>, crashes: number): Promise<void> {
    const preview = oneLine(message.text, 80) || "(files)";
    const text =
      crashes > 0
        ? `⚠️ parley stopped ${crashes} times while working on your message “${preview}”, so it was not run again. Send it again to retry.`
        : `⚠️ parley restarted while working on your message “${preview}”, and it is now too old to run. Send it again to run it.`;
    await this.o.surface.reply(message.address, text, await this.parts(message.tickets, ":notice"));
    this.o.audit.log("intake", "dropped", {
      channel: this.o.channel,
      reason: crashes > 0 ? "cut_short_repeatedly" : "stale",
    });
    await this.finish(message.tickets ?? [], crashes > 0 ? "failed" : "stale");
  }

  /**
   * The work answering these messages starts now (a turn, a command): counted, so a message whose
   * runs keep being cut short can be told from one that merely waited in a queue.
   */
  async claim(tickets: readonly IntakeTicket[]): Promise<void> {
    for (const t of tickets) {
      try {
        await this.journal.claim(t.id);
      } catch (error) {
        // The message still runs; only its attempt count is uncertain.
        this.o.logger.warn(`${this.o.channel}: claiming a journaled message failed`, {
          intake: t.id,
          error: String(error),
        });
      }
    }
  }

  private encode(m: IncomingMessage<A, P>, group: string | undefined): JournaledMessage {
    const extra = m.extra !== undefined ? this.o.surface.journalExtra?.(m.extra) : undefined;
    return {
      v: 1,
      address: m.address as unknown as JsonValue,
      userId: m.userId,
      text: m.text,
      ...(m.messageId !== undefined ? { messageId: m.messageId } : {}),
      ...(m.attachments?.length ? { attachments: [...m.attachments] } : {}),
      ...(m.isMention !== undefined ? { isMention: m.isMention } : {}),
      ...(m.interpretCommands === false ? { interpretCommands: false } : {}),
      ...(m.staleVerdict ? { staleVerdict: true } : {}),
      ...(extra !== undefined ? { extra } : {}),
      ...(group !== undefined ? { group } : {}),
    };
  }

  /** A row back into a message; null (the row completed as failed) when it does not decode. */
  private decode(row: UnfinishedIntake): IncomingMessage<A, P> | null {
    const p = row.payload as Partial<JournaledMessage> | null;
    if (
      p?.v !== 1 ||
      typeof p.userId !== "string" ||
      typeof p.text !== "string" ||
      p.address === undefined ||
      p.address === null
    ) {
      this.o.logger.error(`${this.o.channel}: a journaled message does not decode; dropped`, {
        intake: row.id,
      });
      this.o.audit.log("intake", "dropped", {
        channel: this.o.channel,
        reason: "undecodable",
        intake: row.id,
      });
      return null;
    }
    const address = p.address as unknown as A;
    const extra = p.extra !== undefined ? this.o.surface.reviveExtra?.(p.extra, address) : undefined;
    return {
      address,
      userId: p.userId,
      text: p.text,
      ...(p.messageId !== undefined ? { messageId: p.messageId } : {}),
      ...(p.attachments ? { attachments: p.attachments } : {}),
      ...(p.isMention !== undefined ? { isMention: p.isMention } : {}),
      ...(p.interpretCommands === false ? { interpretCommands: false } : {}),
      ...(p.staleVerdict === true ? { staleVerdict: true } : {}),
      ...(extra !== undefined ? { extra } : {}),
    };
  }
}

/**
 * The hub's parts' side of the tickets: the journal's, or (nothing journaled here: no store) no-ops
 * and unrecorded parts, so no part has to ask which. Each returns the journal's own promise, or an
 * already settled one.
 */
export interface TicketWork {
  claim(tickets: readonly IntakeTicket[]): Promise<void>;
  parts(tickets: readonly IntakeTicket[] | undefined, suffix?: string): Promise<TurnParts>;
  /** Complete journaled messages (a no-op for none). */
  finish(tickets: readonly IntakeTicket[], outcome: IntakeOutcome): Promise<void>;
  /**
   * Complete them "answered" together with the answer's history line (ChannelJournal.answered);
   * false when nothing was written (no journal, no tickets, or the write failed).
   */
  answered(tickets: readonly IntakeTicket[], line: TranscriptAppend | undefined): Promise<boolean>;
}

export function ticketWork<A, P>(journal: ChannelJournal<A, P> | undefined): TicketWork {
  return {
    claim: (tickets) => journal?.claim(tickets) ?? Promise.resolve(),
    parts: (tickets, suffix = "") =>
      journal?.parts(tickets, suffix) ?? Promise.resolve(TurnParts.unrecorded()),
    finish: (tickets, outcome) =>
      tickets.length === 0 || !journal ? Promise.resolve() : journal.finish(tickets, outcome),
    answered: (tickets, line) =>
      tickets.length === 0 || !journal ? Promise.resolve(false) : journal.answered(tickets, line),
  };
}

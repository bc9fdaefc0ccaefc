/**
 * Several gateways on one store (docs/scale-out.md), as a channel's hub sees it: a conversation is
 * served by exactly one gateway at a time. Whichever gateway receives a message journals it; the
 * conversation's owner runs it. Types only: the gateway supplies the implementation (the core never
 * depends on a database). Layer: messaging/store.
 */
import type { JsonValue, UnfinishedIntake } from "./port.js";

/** A journaled message taken in hand by this gateway from the shared journal. */
export interface AdoptedIntake extends UnfinishedIntake {
  /** Another gateway had it in hand and is gone (a takeover): resumed like after a restart. */
  resumed: boolean;
}

export interface ConversationOwnership {
  /**
   * Serve this conversation here (journal key `<channel>:<route>`)? True when this gateway owns it,
   * taking it over when no live gateway does; false when another live gateway serves it.
   */
  acquire(conversationKey: string): Promise<boolean>;
  /**
   * Take a just-journaled message in hand (once: false when this gateway's own pick-up or another
   * one already has it), so it runs exactly once across gateways.
   */
  takeInHand(intakeId: number): Promise<boolean>;
  /**
   * The channel's journaled messages that this gateway must now run: those of conversations it owns
   * (taking over the conversations of gateways that are gone) that no live gateway has in hand,
   * oldest first, each taken in hand (`FOR UPDATE SKIP LOCKED` on PostgreSQL).
   */
  pickUp(channel: string): Promise<AdoptedIntake[]>;
  /** Call `adopt` at each pick-up tick until the returned function is called. */
  onTick(adopt: () => Promise<void>): () => void;
  /**
   * The live gateway serving this conversation when that is ANOTHER gateway; undefined when this
   * one serves it or none does (a press is then judged here).
   */
  servedElsewhere(conversationKey: string): Promise<string | undefined>;
  /**
   * Hand `request` to gateway `to`'s answerer for `channel`: its answer, or undefined when none came
   * in time (the gateway died, or the request was lost). Never throws.
   */
  forward(to: string, channel: string, request: JsonValue): Promise<JsonValue | undefined>;
  /** Answer the requests other gateways forward here for `channel`, until the returned function is called. */
  onForwarded(channel: string, answer: (request: JsonValue) => Promise<JsonValue>): () => void;
}

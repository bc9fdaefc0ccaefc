/**
 * The session key each conversation routes to, and the way back from a key to the address it
 * renders at: the one piece of the hub (hub.ts) that every other piece asks. A conversation's key
 * carries its generation (/new and idle/daily rotation move it on); the generation is seeded once
 * from the store and every move is persisted, so a restart neither counts from 0 nor resurrects a
 * key that was left behind.
 */
import type { Clock } from "../base/clock.js";
import type { Logger } from "../base/logger.js";
import { ConversationState } from "../session/generations.js";
import type { RotationPolicy } from "../session/keys.js";
import type { SessionStore } from "../session/session-store.js";
import type { ChannelSurface } from "./surface.js";

export interface ConversationKeysOptions<A> {
  channel: string;
  surface: Pick<ChannelSurface<A, unknown>, "conversation" | "sessionKey">;
  store: SessionStore;
  logger: Logger;
  clock: Clock;
  rotation?: RotationPolicy | undefined;
}

export class ConversationKeys<A> {
  private readonly generations: ConversationState;
  private readonly seeded = new Set<string>();
  private readonly addresses = new Map<string, A>();

  constructor(private readonly o: ConversationKeysOptions<A>) {
    this.generations = new ConversationState({ clock: o.clock, ...o.rotation });
  }

  /** The current session key of an address (its generation seeded once from the store). */
  keyOf(address: A): string {
    const { route } = this.o.surface.conversation(address);
    if (!this.seeded.has(route)) {
      // Without the seed a restart counts from 0, and /new would land on a key already discarded.
      this.generations.seedGeneration(
        route,
        this.o.store.generationOf(this.o.surface.sessionKey(address, 0)),
      );
      this.seeded.add(route);
    }
    const key = this.o.surface.sessionKey(address, this.generations.generation(route));
    this.addresses.set(key, address);
    return key;
  }

  /** /new: a fresh generation, persisted so a restart cannot resurrect the old one. */
  advance(address: A): string {
    this.keyOf(address);
    const { route } = this.o.surface.conversation(address);
    this.persistGeneration(address, this.generations.advance(route));
    return this.keyOf(address);
  }

  /**
   * The conversation's own key after the idle/daily rotation check (never while `busy`): a new
   * generation when it rotated, the key as it was otherwise.
   */
  rotate(address: A, key: string, busy: boolean): string {
    const { route } = this.o.surface.conversation(address);
    const rotation = this.generations.maybeRotate(route, { busy });
    if (!rotation.rotated) return key;
    this.persistGeneration(address, rotation.generation);
    return this.keyOf(address);
  }

  /** A route's current generation (the commands' view of it). */
  generation(route: string): number {
    return this.generations.generation(route);
  }

  /** The address a session key renders to, when it has been seen. */
  addressOf(key: string): A | undefined {
    return this.addresses.get(key);
  }

  /** A session that renders at this address from now on (a resumed one, an agent host's prompt). */
  renderAt(key: string, address: A): void {
    this.addresses.set(key, address);
  }

  /** A new generation outlives a restart: without it the next start would resume the one left behind. */
  private persistGeneration(address: A, generation: number): void {
    try {
      this.o.store.setGeneration(this.o.surface.sessionKey(address, 0), generation);
    } catch (error) {
      this.o.logger.warn(`${this.o.channel}: persisting the generation failed`, { error: String(error) });
    }
  }
}

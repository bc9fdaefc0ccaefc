/**
 * ConversationState: per-conversation rotating generation bookkeeping. The generation is the `:genN`
 * suffix of a DM session key; advancing it starts a fresh transcript on the same durable bucket.
 * In-memory, seeded from the persisted session map, clock injected. Layer: messaging.
 */
import { type Clock, realClock } from "../base/clock.js";
import { type RotationPolicy, shouldRotateGeneration } from "./keys.js";

/** What the session map remembers about a route: its highest generation, and when it was last used. */
export type GenerationSeed = number | { generation: number; lastActiveMs?: number };

export interface ConversationStateOptions extends RotationPolicy {
  clock?: Pick<Clock, "now">;
  /**
   * Reads the highest generation already persisted for a route, consulted once per route. Without it
   * a restart counts from 0 and the next /new lands on a persisted :gen1, resuming a discarded
   * conversation. A throwing seed propagates and is retried on the next call: guessing 0 is exactly
   * the resurrection the seed exists to prevent.
   */
  seed?: (route: string) => GenerationSeed;
}

export interface RotationOutcome {
  generation: number;
  rotated: boolean;
}

interface RouteState {
  generation: number;
  lastActiveMs: number;
}

function checkedGeneration(value: number, route: string): number {
  // A garbage seed must not become a generation: a NaN or negative suffix cannot be parsed back.
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`persisted generation for route '${route}' is not a non-negative integer: ${value}`);
  }
  return value;
}

/**
 * A route is whatever string names one conversation for the channel (the DM bucket, a Topic's bucket),
 * so /new and idle/daily rotation are scoped to exactly that conversation.
 */
export class ConversationState {
  private readonly routes = new Map<string, RouteState>();
  private readonly clock: Pick<Clock, "now">;
  private readonly seed: ((route: string) => GenerationSeed) | undefined;
  private readonly policy: RotationPolicy;

  constructor(options: ConversationStateOptions = {}) {
    const { clock, seed, ...policy } = options;
    this.clock = clock ?? realClock;
    this.seed = seed;
    this.policy = policy;
  }

  /** The route's current generation (seeding it on first use). */
  generation(route: string): number {
    return this.state(route).generation;
  }

  /** Last recorded activity in epoch ms, or 0 when none is known. */
  lastActive(route: string): number {
    return this.state(route).lastActiveMs;
  }

  /**
   * Raise a route to at least a persisted generation, for a caller whose store is async. Never lowers
   * it: a stored value older than what this process already minted must not rewind onto a discarded key.
   */
  seedGeneration(route: string, stored: number, lastActiveMs = 0): number {
    const state = this.state(route);
    state.generation = Math.max(state.generation, checkedGeneration(stored, route));
    state.lastActiveMs = Math.max(state.lastActiveMs, lastActiveMs);
    return state.generation;
  }

  /** /new: start a fresh transcript. Counts as activity, so the next message does not rotate again. */
  advance(route: string): number {
    const state = this.state(route);
    state.generation += 1;
    state.lastActiveMs = this.clock.now();
    return state.generation;
  }

  /**
   * Call for every inbound message AFTER the busy check, passing its answer. A busy route is never
   * rotated: minting a new generation under a running turn would strand that turn on the old key and
   * route this message to a session the turn never sees. The message still counts as activity.
   */
  maybeRotate(route: string, context: { busy: boolean }): RotationOutcome {
    const state = this.state(route);
    const now = this.clock.now();
    const rotated = !context.busy && shouldRotateGeneration(state.lastActiveMs, now, this.policy);
    if (rotated) state.generation += 1;
    state.lastActiveMs = now;
    return { generation: state.generation, rotated };
  }

  /** Drop a route's in-memory state; the next use re-seeds from the store. */
  forget(route: string): void {
    this.routes.delete(route);
  }

  private state(route: string): RouteState {
    const known = this.routes.get(route);
    if (known) return known;
    const seeded = this.seed ? this.seed(route) : 0;
    const state: RouteState =
      typeof seeded === "number"
        ? { generation: checkedGeneration(seeded, route), lastActiveMs: 0 }
        : { generation: checkedGeneration(seeded.generation, route), lastActiveMs: seeded.lastActiveMs ?? 0 };
    this.routes.set(route, state);
    return state;
  }
}

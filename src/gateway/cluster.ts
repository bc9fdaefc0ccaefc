/**
 * One gateway's membership in a group of gateways sharing one PostgreSQL store
 * (docs/scale-out.md): its identity, the heartbeat that keeps its lease (and so everything it
 * holds), the conversations it serves, and the elections for platform connections that must be
 * single (Telegram's getUpdates). Time comes from the injected clock, so tests need no real time.
 * Layer: gateway.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { AutoApproveGrant } from "../messaging/approval/grant.js";
import type { Clock, TimerHandle } from "../messaging/base/clock.js";
import { realClock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { AdoptedIntake, ConversationOwnership } from "../messaging/store/ownership.js";
import type { JsonValue, ParleyStore } from "../messaging/store/port.js";
import type { SqlClusterRegistry } from "../store/sql/cluster.js";
import type { ClusterSignals } from "../store/sql/engine.js";
import { SqlParleyStore } from "../store/sql/store.js";
import type { ParleyConfig } from "./config.js";
import { GatewayForwarding } from "./forwarding.js";
import { shareGrant } from "./shared-grant.js";

/** At most 15 s: a dead gateway's conversations move within lease + one tick (well inside 30 s). */
export const DEFAULT_LEASE_MS = 15_000;
/** How often messages journaled elsewhere for conversations served here are picked up. */
export const DEFAULT_PICK_UP_MS = 1_000;

export interface ClusterOptions {
  registry: SqlClusterRegistry;
  /** How presses reach the gateway serving their conversation (forwarding.ts). */
  signals: ClusterSignals;
  /** How long a forwarded press waits for its answer (default 5 s). */
  forwardTimeoutMs?: number;
  clock: Clock;
  logger: Logger;
  leaseMs?: number;
  pickUpEveryMs?: number;
  /** A name for this gateway (default: the host name); a random suffix makes each run unique. */
  name?: string;
  /** Told once when the lease could not be kept: others may now serve what this gateway held. */
  onFenced(reason: string): void;
  /** The random suffix (tests pin it). */
  incarnation?: string;
  /**
   * Told after this gateway took a conversation over from one that is gone, before its work runs
   * here: the gateway re-reads the state it keeps in memory (the session rows).
   */
  onTakeover?: () => Promise<void>;
}

export interface ElectionHandlers {
  /** This gateway now holds the connection: open it. */
  elected(): Promise<void>;
  /** It no longer does (the lease was lost): close it. */
  deposed(): Promise<void>;
}

interface Election extends ElectionHandlers {
  name: string;
  held: boolean;
}

export function conversationResource(conversationKey: string): string {
  return `conversation:${conversationKey}`;
}

export function connectionResource(name: string): string {
  return `connection:${name}`;
}

export class ClusterMember implements ConversationOwnership {
  /** Never the host name alone: two gateways may run on one host, and a restart is a new member. */
  readonly gatewayId: string;
  readonly leaseMs: number;
  private readonly tickMs: number;
  private lastRenewedMs: number;
  private fenced = false;
  private stopped = false;
  private timer: TimerHandle | undefined;
  private ticking: Promise<void> = Promise.resolve();
  private readonly adopters = new Set<() => Promise<void>>();
  private readonly elections: Election[] = [];
  private readonly forwarding: GatewayForwarding;

  private constructor(private readonly o: ClusterOptions) {
    this.leaseMs = o.leaseMs ?? DEFAULT_LEASE_MS;
    if (!(Number.isSafeInteger(this.leaseMs) && this.leaseMs >= 1000))
      throw new RangeError(`cluster: lease must be at least 1000 ms, got ${this.leaseMs}`);
    // The heartbeat renews three times per lease: two missed beats still keep it.
    this.tickMs = Math.min(o.pickUpEveryMs ?? DEFAULT_PICK_UP_MS, Math.floor(this.leaseMs / 3));
    const incarnation = o.incarnation ?? randomBytes(4).toString("hex");
    this.gatewayId = `${o.name ?? hostname()}/${process.pid}/${incarnation}`;
    this.lastRenewedMs = o.clock.now();
    this.forwarding = new GatewayForwarding({
      gatewayId: this.gatewayId,
      signals: o.signals,
      clock: o.clock,
      logger: o.logger,
      ...(o.forwardTimeoutMs !== undefined ? { timeoutMs: o.forwardTimeoutMs } : {}),
    });
  }

  /** Register as alive and start the heartbeat. */
  static async join(o: ClusterOptions): Promise<ClusterMember> {
    const member = new ClusterMember(o);
    await o.registry.join(
      { gatewayId: member.gatewayId, host: o.name ?? hostname(), pid: process.pid },
      member.lastRenewedMs,
      member.leaseMs,
    );
    try {
      await member.forwarding.start();
    } catch (error) {
      // Not half a member: the others must not wait out a lease for one that never served.
      await o.registry.leave(member.gatewayId);
      throw error;
    }
    member.schedule();
    return member;
  }

  get isFenced(): boolean {
    return this.fenced;
  }

  /** Neither fenced nor gone: what this gateway holds is still its own. */
  get serving(): boolean {
    return !this.fenced && !this.stopped;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.o.clock.setTimeout(() => {
      this.ticking = this.tick().finally(() => this.schedule());
    }, this.tickMs);
  }

  /** One heartbeat: renew the lease when due, hold elections, pick up journaled work. */
  async tick(): Promise<void> {
    if (this.stopped || this.fenced) return;
    await this.renewIfDue();
    if (this.fenced || this.stopped) return;
    for (const election of this.elections) await this.runElection(election);
    for (const adopt of [...this.adopters]) {
      try {
        await adopt();
      } catch (error) {
        this.o.logger.error("cluster: picking up journaled work failed", { error: String(error) });
      }
    }
  }

  private async renewIfDue(): Promise<void> {
    const now = this.o.clock.now();
    if (now - this.lastRenewedMs < this.tickMs) return;
    try {
      if (await this.o.registry.renew(this.gatewayId, now, this.leaseMs)) {
        this.lastRenewedMs = now;
        return;
      }
      this.fence("the lease had run out before it was renewed");
    } catch (error) {
      this.o.logger.warn("cluster: lease renewal failed; retrying", { error: String(error) });
      // Stop before the lease runs out, so no other gateway takes over work still running here.
      if (now - this.lastRenewedMs >= (this.leaseMs * 2) / 3)
        this.fence("the database did not answer for two thirds of the lease");
    }
  }

  private fence(reason: string): void {
    if (this.fenced) return;
    this.fenced = true;
    this.o.logger.error(`cluster: ${this.gatewayId} lost its lease (${reason}); it stops serving`);
    for (const election of this.elections) {
      if (!election.held) continue;
      election.held = false;
      void election
        .deposed()
        .catch((error: unknown) =>
          this.o.logger.error(`cluster: closing ${election.name} failed`, { error: String(error) }),
        );
    }
    this.o.onFenced(reason);
  }

  private async runElection(election: Election): Promise<void> {
    try {
      const epoch = await this.o.registry.acquire(
        connectionResource(election.name),
        this.gatewayId,
        this.o.clock.now(),
      );
      const holds = epoch !== undefined;
      if (holds && !election.held) {
        election.held = true;
        this.o.logger.info(`cluster: ${this.gatewayId} holds ${election.name} (epoch ${epoch})`);
        await election.elected();
      } else if (!holds && election.held) {
        election.held = false;
        await election.deposed();
      }
    } catch (error) {
      this.o.logger.error(`cluster: election for ${election.name} failed`, { error: String(error) });
    }
  }

  /**
   * Hold a connection that must be single across gateways: `elected` runs here when this gateway
   * wins it (now or when its holder dies), `deposed` when it loses it. Resolves after the first try.
   */
  async elect(name: string, handlers: ElectionHandlers): Promise<void> {
    const election: Election = { name, held: false, ...handlers };
    this.elections.push(election);
    if (!this.fenced && !this.stopped) await this.runElection(election);
  }

  holdsConnection(name: string): boolean {
    return this.elections.some((e) => e.name === name && e.held);
  }

  async acquire(conversationKey: string): Promise<boolean> {
    if (this.fenced || this.stopped) return false;
    const epoch = await this.o.registry.acquire(
      conversationResource(conversationKey),
      this.gatewayId,
      this.o.clock.now(),
    );
    if (epoch !== undefined && epoch > 1) {
      this.tookOver(conversationKey, epoch);
      await this.o.onTakeover?.();
    }
    return epoch !== undefined;
  }

  /** A conversation another gateway served before: what that one kept must be read again. */
  private tookOver(conversationKey: string, epoch: number): void {
    this.o.logger.info(`cluster: ${this.gatewayId} took over ${conversationKey} (epoch ${epoch})`);
  }

  async takeInHand(intakeId: number): Promise<boolean> {
    if (this.fenced || this.stopped) return false;
    return this.o.registry.takeInHand(intakeId, this.gatewayId);
  }

  async pickUp(channel: string): Promise<AdoptedIntake[]> {
    if (this.fenced || this.stopped) return [];
    const now = this.o.clock.now();
    let tookOver = false;
    for (const key of await this.o.registry.orphanedConversations(channel, now)) {
      const epoch = await this.o.registry.acquire(conversationResource(key), this.gatewayId, now);
      if (epoch !== undefined && epoch > 1) {
        this.tookOver(key, epoch);
        tookOver = true;
      }
    }
    // Once for all of them, before any of their work runs here.
    if (tookOver) await this.o.onTakeover?.();
    return this.o.registry.pickUp(channel, this.gatewayId, now);
  }

  async servedElsewhere(conversationKey: string): Promise<string | undefined> {
    const held = await this.o.registry.holder(conversationResource(conversationKey), this.o.clock.now());
    return held?.alive && held.gatewayId !== this.gatewayId ? held.gatewayId : undefined;
  }

  forward(to: string, channel: string, request: JsonValue): Promise<JsonValue | undefined> {
    return this.forwarding.forward(to, channel, request);
  }

  onForwarded(channel: string, answer: (request: JsonValue) => Promise<JsonValue>): () => void {
    // A gateway that lost its lease serves nothing any more, forwarded presses included.
    return this.forwarding.onForwarded(channel, async (request) =>
      this.fenced || this.stopped ? { refused: "not_serving" } : answer(request),
    );
  }

  onTick(adopt: () => Promise<void>): () => void {
    this.adopters.add(adopt);
    return () => this.adopters.delete(adopt);
  }

  /**
   * A graceful stop: no more ticks, and everything held is released at once, so the others take
   * it over at their next tick instead of waiting for the lease to run out.
   */
  async leave(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.o.clock.clearTimeout(this.timer);
    await this.ticking.catch((error: unknown) =>
      this.o.logger.error("cluster: the last heartbeat failed", { error: String(error) }),
    );
    for (const election of this.elections) {
      if (!election.held) continue;
      election.held = false;
      await election.deposed();
    }
    await this.forwarding.stop();
    await this.o.registry.leave(this.gatewayId);
  }
}

/** The scheduled prompts run on one gateway: each due job must run once, not once per gateway. */
export const SCHEDULER_LEASE = "scheduler";

/**
 * Platform connections that must be single across gateways, by channel: the platform allows one
 * (Telegram answers a second getUpdates with a conflict; one Discord gateway session per shard; one
 * WhatsApp linked-device session). Such a channel starts only on the gateway elected for it. The
 * others (web chat, webhooks behind a load balancer, Slack Socket Mode which allows several) run on
 * every gateway.
 */
export const SINGLE_CONNECTIONS: Readonly<Record<string, string>> = {
  telegram: "telegram.getUpdates",
  discord: "discord.gateway",
  whatsapp: "whatsapp.linkedDevice",
};

/** The store's notifications between gateways; only a shareable (PostgreSQL) store has them. */
export function signalsOf(store: SqlParleyStore): ClusterSignals {
  const signals = store.signals;
  if (!signals) throw new Error(`cluster: ${store.constructor.name} cannot signal between gateways`);
  return signals;
}

/**
 * Join the group when the store is shared (PostgreSQL); undefined on SQLite, where one gateway
 * owns everything. A fenced gateway shuts down (`stop`): its work is the survivors' now, and a
 * supervisor restarting it makes it a fresh member.
 */
export async function joinCluster(
  o: { config: ParleyConfig; logger: Logger },
  store: ParleyStore,
  stop: () => void,
  grant?: AutoApproveGrant,
): Promise<ClusterMember | undefined> {
  if (!(store instanceof SqlParleyStore) || !store.shareable) return undefined;
  const member = await ClusterMember.join({
    registry: store.cluster,
    signals: signalsOf(store),
    clock: realClock,
    logger: o.logger,
    leaseMs: Math.round(o.config.cluster.leaseSeconds * 1000),
    pickUpEveryMs: o.config.cluster.pickUpMs,
    ...(o.config.cluster.name ? { name: o.config.cluster.name } : {}),
    onFenced: () => stop(),
    onTakeover: async () => void (await store.sessions.refresh()),
  });
  o.logger.info(`cluster: joined as ${member.gatewayId} (lease ${member.leaseMs} ms)`);
  if (grant)
    await shareGrant({
      grant,
      routes: store.routes,
      logger: o.logger,
      onTick: (read) => member.onTick(read),
      serving: () => member.serving,
    });
  return member;
}

/**
 * The hub's part when several gateways share one store (docs/scale-out.md): a journaled message runs
 * on the gateway that serves its conversation and has taken it in hand; the rest waits in the shared
 * journal for the owner's pick-up at every tick; a press for a conversation served elsewhere is
 * forwarded there (press-forwarding.ts) and judged by the same rules as a local one. It owns the
 * pick-up ticks and the forwarding; the hub (hub.ts) keeps the routing and judges what lands here.
 */
import type { ApprovalVerdict } from "../approval/approvals.js";
import type { Logger } from "../base/logger.js";
import type { ConversationOwnership } from "../store/ownership.js";
import type { JsonValue } from "../store/port.js";
import type { ChannelJournal } from "./journal.js";
import type { ModelPicker } from "./model-picker.js";
import { PICK_REFUSAL_TEXT } from "./picker.js";
import type {
  ApprovalOutcome,
  ForwardedApproval,
  ForwardedListOutcome,
  ForwardedModelOutcome,
} from "./press-forwarding.js";
import { PressForwarding } from "./press-forwarding.js";
import type { ChannelSurface, Handled, IncomingMessage } from "./surface.js";
import { placeOf } from "./surface.js";

/** A press on a posted model list, as the hub takes it. */
interface ModelPress {
  handle: string;
  index: number;
  presser: string;
}

export interface GatewayPeersOptions<A, P> {
  channel: string;
  ownership: ConversationOwnership;
  journal: ChannelJournal<A, P>;
  surface: Pick<ChannelSurface<A, P>, "conversation" | "pickers">;
  models: ModelPicker;
  logger: Logger;
  /** Route a message served here, after its conversation's earlier ones (the hub's own routing). */
  route(message: IncomingMessage<A, P>): Promise<Handled>;
  /** Judge an approval press on this gateway only (a forwarded press is never forwarded again). */
  pressHere(address: A, press: ForwardedApproval): Promise<ApprovalOutcome>;
  /** Judge a press on a channel-kept list here (the hub's list registry). */
  listHere(address: A, list: string, data: JsonValue): Promise<string | null>;
  /** The hub's in-flight work (a shutdown waits for it). */
  track<T>(p: Promise<T>): Promise<T | undefined>;
  /** Shutting down: nothing more is picked up. */
  closing(): boolean;
}

export class GatewayPeers<A, P> {
  private readonly forwarding: PressForwarding;
  /** A pick-up from the shared journal is running: the next tick waits its turn. */
  private adopting = false;
  /** Stops the pick-up ticks; set once the channel resumed. */
  private untick: (() => void) | undefined;
  /** Stops judging presses other gateways forward here; set once the channel resumed. */
  private unserve: (() => void) | undefined;

  constructor(private readonly o: GatewayPeersOptions<A, P>) {
    this.forwarding = new PressForwarding({ channel: o.channel, ownership: o.ownership, logger: o.logger });
  }

  /**
   * Run a journaled message here only when this gateway serves its conversation and has taken the
   * message in hand; otherwise it stays journaled for the owner's pick-up (`adopt`). A store that
   * cannot say leaves it journaled too: a pick-up runs it later.
   */
  async servesHere(message: IncomingMessage<A, P>): Promise<boolean> {
    const key = this.ownershipKey(message.address);
    try {
      if (!(await this.o.ownership.acquire(key))) return false;
      for (const t of message.tickets ?? []) if (!(await this.o.ownership.takeInHand(t.id))) return false;
      return true;
    } catch (error) {
      this.o.logger.warn(`${this.o.channel}: ownership check failed; the message waits for a pick-up`, {
        error: String(error),
      });
      return false;
    }
  }

  /**
   * Run what this gateway must now serve from the shared journal (messages another gateway received
   * for a conversation owned here, and the unfinished work of a gateway that is gone), with the same
   * stale / cut-short rules as a restart. One pick-up at a time.
   */
  async adopt(): Promise<void> {
    if (this.o.closing() || this.adopting) return;
    this.adopting = true;
    try {
      const rows = await this.o.ownership.pickUp(this.o.channel);
      if (rows.length === 0) return;
      await this.o.journal.resume(
        async (message) => void this.o.track((await this.o.route({ ...message, staleVerdict: true })).turn),
        rows,
      );
    } finally {
      this.adopting = false;
    }
  }

  /**
   * The resume of a gateway among several: only what this one owns and nobody live has in hand (the
   * rest is theirs), then again at every tick, since other gateways journal for conversations served
   * here; from now on, presses forwarded here are judged here.
   */
  start(): Promise<void> {
    this.untick ??= this.o.ownership.onTick(() => this.adopt());
    this.unserve ??= this.forwarding.serve({
      approval: (press) => this.o.pressHere(press.address as unknown as A, press),
      model: (press) => this.pickModelForwarded(press.address as unknown as A, press),
      list: async (press) => ({
        text: await this.o.listHere(press.address as unknown as A, press.list, press.data),
      }),
    });
    return this.adopt();
  }

  /** No more pick-ups, no more forwarded presses (shutdown). */
  stop(): void {
    this.untick?.();
    this.unserve?.();
  }

  /** An approval press whose prompt is not open here: the serving gateway's outcome, or undefined. */
  forwardApproval(
    address: A,
    p: { requestId: string; nonce: string | null | undefined; verdict: ApprovalVerdict; label?: string },
  ): Promise<ApprovalOutcome | undefined> {
    return this.forwarding.approval(this.ownershipKey(address), {
      address: address as unknown as JsonValue,
      requestId: p.requestId,
      nonce: p.nonce ?? null,
      verdict: p.verdict,
      ...(p.label !== undefined ? { label: p.label } : {}),
    });
  }

  /** A press on a model list not posted here: as `forwardApproval`. */
  forwardModel(address: A, p: ModelPress): Promise<ForwardedModelOutcome | undefined> {
    return this.forwarding.model(this.ownershipKey(address), {
      address: address as unknown as JsonValue,
      ...p,
    });
  }

  /** A press on a channel-kept list not posted here: as `forwardApproval`. */
  forwardList(address: A, list: string, data: JsonValue): Promise<ForwardedListOutcome | undefined> {
    return this.forwarding.list(this.ownershipKey(address), {
      address: address as unknown as JsonValue,
      list,
      data,
    });
  }

  /** A model-list press another gateway forwarded: judged here, the switch tracked here. */
  private async pickModelForwarded(address: A, p: ModelPress): Promise<ForwardedModelOutcome> {
    const pickers = this.o.surface.pickers?.(address);
    if (!pickers) return { refusal: PICK_REFUSAL_TEXT.unknown };
    const scope = placeOf(this.o.surface.conversation(address));
    const pick = await this.o.models.press(p.handle, p.index, { presser: p.presser, scope }, pickers);
    if ("refusal" in pick) return pick;
    void this.o.track(pick.applied);
    return { applied: true };
  }

  /** The key a conversation's ownership and journal rows go by across gateways. */
  private ownershipKey(address: A): string {
    return `${this.o.channel}:${this.o.surface.conversation(address).route}`;
  }
}

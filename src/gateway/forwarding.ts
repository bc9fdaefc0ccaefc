/**
 * Requests from one gateway to another over the store's signals (PostgreSQL LISTEN/NOTIFY): a
 * press that landed on a gateway other than the one serving its conversation is asked of that
 * gateway, and its answer comes back (docs/scale-out.md). Every gateway listens on one channel and
 * takes only what is addressed to it; an answer counts only from the gateway that was asked, under
 * the random id of the ask. No answer in time (the gateway died, a notification was lost) is
 * `undefined`: the caller approves nothing and says so. Layer: gateway.
 */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { Clock, TimerHandle } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { JsonValue } from "../messaging/store/port.js";
import type { ClusterSignals, SignalSubscription } from "../store/sql/engine.js";

/** The one notification channel the gateways of a database share. */
export const FORWARDING_CHANNEL = "parley_forward";

/** A chat platform waits a few seconds for a press to be acknowledged; a live gateway answers in ms. */
export const DEFAULT_FORWARD_TIMEOUT_MS = 5_000;

const envelope = z.discriminatedUnion("t", [
  z.object({
    t: z.literal("ask"),
    id: z.string(),
    from: z.string(),
    to: z.string(),
    channel: z.string(),
    request: z.json(),
  }),
  z.object({
    t: z.literal("answer"),
    id: z.string(),
    from: z.string(),
    to: z.string(),
    /** Absent: the gateway asked has no answerer for that channel (it does not run it). */
    answer: z.json().optional(),
  }),
]);
type Envelope = z.infer<typeof envelope>;

interface Pending {
  to: string;
  timer: TimerHandle;
  settle(answer: JsonValue | undefined): void;
}

export interface ForwardingOptions {
  gatewayId: string;
  signals: ClusterSignals;
  clock: Clock;
  logger: Logger;
  timeoutMs?: number;
}

export class GatewayForwarding {
  private readonly pending = new Map<string, Pending>();
  private readonly answerers = new Map<string, (request: JsonValue) => Promise<JsonValue>>();
  private subscription: SignalSubscription | undefined;
  private stopped = false;
  private readonly timeoutMs: number;

  constructor(private readonly o: ForwardingOptions) {
    this.timeoutMs = o.timeoutMs ?? DEFAULT_FORWARD_TIMEOUT_MS;
  }

  async start(): Promise<void> {
    this.subscription = await this.o.signals.listen(
      FORWARDING_CHANNEL,
      (payload) => this.received(payload),
      (problem) => this.o.logger.warn(`cluster: forwarding: ${problem}`),
    );
  }

  /** Stop answering and listening; asks still waiting get no answer. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const [id, p] of this.pending) {
      this.o.clock.clearTimeout(p.timer);
      this.pending.delete(id);
      p.settle(undefined);
    }
    await this.subscription?.close();
  }

  onForwarded(channel: string, answer: (request: JsonValue) => Promise<JsonValue>): () => void {
    this.answerers.set(channel, answer);
    return () => {
      if (this.answerers.get(channel) === answer) this.answerers.delete(channel);
    };
  }

  forward(to: string, channel: string, request: JsonValue): Promise<JsonValue | undefined> {
    if (this.stopped) return Promise.resolve(undefined);
    const id = randomBytes(12).toString("hex");
    return new Promise((resolve) => {
      const timer = this.o.clock.setTimeout(() => {
        if (!this.pending.delete(id)) return;
        this.o.logger.warn(`cluster: ${to} did not answer a forwarded ${channel} press in time`);
        resolve(undefined);
      }, this.timeoutMs);
      this.pending.set(id, { to, timer, settle: resolve });
      this.send({ t: "ask", id, from: this.o.gatewayId, to, channel, request }).catch((error: unknown) => {
        if (!this.pending.delete(id)) return;
        this.o.clock.clearTimeout(timer);
        this.o.logger.warn(`cluster: forwarding a ${channel} press to ${to} failed`, {
          error: String(error),
        });
        resolve(undefined);
      });
    });
  }

  private async send(message: Envelope): Promise<void> {
    await this.o.signals.notify(FORWARDING_CHANNEL, JSON.stringify(message));
  }

  private received(payload: string): void {
    let message: Envelope;
    try {
      const parsed = envelope.safeParse(JSON.parse(payload));
      if (!parsed.success) throw new Error(parsed.error.issues[0]?.message ?? "invalid");
      message = parsed.data;
    } catch (error) {
      this.o.logger.warn("cluster: a malformed forwarding notification was ignored", {
        error: String(error),
      });
      return;
    }
    if (message.to !== this.o.gatewayId) return;
    if (message.t === "answer") this.answered(message);
    else void this.answer(message);
  }

  private answered(message: Extract<Envelope, { t: "answer" }>): void {
    const pending = this.pending.get(message.id);
    // Only the gateway asked may answer: anything else is stale or forged.
    if (!pending || pending.to !== message.from) return;
    this.pending.delete(message.id);
    this.o.clock.clearTimeout(pending.timer);
    pending.settle(message.answer);
  }

  private async answer(ask: Extract<Envelope, { t: "ask" }>): Promise<void> {
    const answerer = this.stopped ? undefined : this.answerers.get(ask.channel);
    let answer: JsonValue | undefined;
    try {
      answer = answerer ? await answerer(ask.request) : undefined;
    } catch (error) {
      this.o.logger.error(`cluster: answering a forwarded ${ask.channel} press failed`, {
        error: String(error),
      });
    }
    const reply: Envelope = {
      t: "answer",
      id: ask.id,
      from: this.o.gatewayId,
      to: ask.from,
      ...(answer !== undefined ? { answer } : {}),
    };
    await this.send(reply).catch((error: unknown) =>
      this.o.logger.warn(`cluster: answering ${ask.from} failed`, { error: String(error) }),
    );
  }
}

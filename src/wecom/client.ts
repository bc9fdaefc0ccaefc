/**
 * WeComClient: the one long connection (`ws` directly, because the rules below need control of
 * req_id and of where each answer is routed). Subscribe with the bot id and secret (the secret goes
 * in that frame and nowhere else), a ping every 30 s, callbacks handed out as they arrive (the caller
 * runs each in its own task, so pings keep flowing during a long turn), reply frames and pushes out.
 *
 * Every answer WeCom sends back has the same cmd-less shape, so answers are told apart by req_id:
 * the ping ids are kept in a set as they are sent, the subscribe id carries a fixed prefix (the only
 * way a wrong secret is detectable: otherwise an immediate close looks like a kick), and anything
 * else answers a reply. Reply frames are sent ONE AT A TIME per req_id and each waits for its answer
 * (bounded), because an answer names only the req_id: with two frames in flight it could belong to
 * either. Pushes carry their own req_id, so their verdict is exact. WeCom's error messages are never
 * logged (they can echo the payload, which is the user's answer); only a classification is.
 *
 * A push, or a bubble's sealing frame, that nobody acknowledged (its answer timed out, or the socket
 * closed with it in flight) is sent again, after the reconnect when the socket closed, a bounded
 * number of times: WeCom never redelivers anything, so a part taken for delivered on no evidence is
 * a part the user never sees. A re-send of a frame that did land shows at worst once more (a push)
 * or not at all (a sealing frame replaces its bubble with the same text).
 *
 * Every inbound frame that is not handed out (an event nobody answers, an answer for nothing in
 * flight, a binary or unreadable frame) is counted with its reason (ctx.drops), never dropped silently.
 *
 * Reconnects back off exponentially; a connection must have stayed up a while for its close to reset
 * that (an accept-then-close loop would otherwise hammer the endpoint). A kick by another subscriber
 * is reported and not fought: two gateways taking turns kicking each other serve nobody.
 */
import { randomBytes } from "node:crypto";
import WebSocket from "ws";
import type { Clock } from "../messaging/base/clock.js";
import { sleep } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { InboundDrops } from "../messaging/channel/inbound-drops.js";
import type { PushWindow } from "./budget.js";
import { PushBudget } from "./budget.js";
import type { HealthReason, WeComHealth } from "./health.js";
import {
  WECOM_ACK_TIMEOUT_MS,
  WECOM_MAX_RESENDS,
  WECOM_MIN_HEALTHY_MS,
  WECOM_MISSED_PINGS,
  WECOM_PING_INTERVAL_MS,
  WECOM_RECONNECT_BASE_MS,
  WECOM_RECONNECT_MAX_MS,
} from "./limits.js";
import type { CallbackFrame, OutboundFrame } from "./wire.js";
import {
  CMD_PING,
  CMD_SEND,
  CMD_SUBSCRIBE,
  ERR_STREAM_EXPIRED,
  ERR_UNROUTABLE,
  pingFrame,
  pushFrame,
  readFrame,
  streamFrame,
  subscribeFrame,
  withinWireCap,
} from "./wire.js";

/** What WeCom said about one frame we sent. */
export type FrameVerdict =
  | { kind: "accepted" }
  /** `terminal`: the stream (846608) or every stream of the req_id (846605) can never be written again. */
  | { kind: "refused"; errcode: number; terminal: boolean }
  /** No answer within the bound: no evidence either way. */
  | { kind: "unacked" }
  /** The connection was not open: the frame never left. */
  | { kind: "unsent" };

export interface WeComClientOptions {
  url: string;
  botId: string;
  secret: string;
  clock: Clock;
  logger: Logger;
  /** A user's message. Called as the frame arrives; the caller must not block the socket on it. */
  onCallback(frame: CallbackFrame): void;
  /** Where every inbound frame that is not handed out is counted, with its reason. */
  drops: InboundDrops;
  /** Health transitions (doctor's last verdict, the log). */
  onHealth?(health: WeComHealth): void;
  ackTimeoutMs?: number;
  pingIntervalMs?: number;
  reconnectBaseMs?: number;
  reconnectMaxMs?: number;
  minHealthyMs?: number;
  /** The push windows (WeCom's own, per minute and per hour, by default). */
  pushWindows?: readonly PushWindow[];
  /** Re-sends of an unacknowledged push or sealing frame. */
  maxResends?: number;
  /** How long a frame made while the connection is not subscribed waits for it. */
  connectWaitMs?: number;
}

interface Pending {
  resolve(verdict: FrameVerdict): void;
  timer: unknown;
}

/** Answered req_ids remembered (oldest forgotten first): far more than can still be replied to. */
const MAX_REMEMBERED_REQS = 10_000;

/** Subscribe ids start with this, so their answer is recognized whatever else is in flight. */
const SUBSCRIBE_PREFIX = `${CMD_SUBSCRIBE}_`;

export class WeComClient {
  private ws: WebSocket | null = null;
  private subscribed = false;
  private subscribedAt = 0;
  private attempts = 0;
  private closing = false;
  private kicked = false;
  private reconnectTimer: unknown = null;
  private pingTimer: unknown = null;
  private missedPings = 0;
  private readonly pingIds = new Set<string>();
  private readonly pending = new Map<string, Pending>();
  /** Per req_id: the tail of its reply frames, sent one at a time. */
  private readonly chains = new Map<string, Promise<unknown>>();
  /** req_ids a reply frame has been written on: their message is being (or was) answered. */
  private readonly answeredReqs = new Set<string>();
  private readonly budget: PushBudget;
  private readonly stopping = new AbortController();
  private readonly readyWaiters = new Set<(ok: boolean) => void>();
  private current: WeComHealth;

  constructor(private readonly o: WeComClientOptions) {
    this.budget = new PushBudget(() => o.clock.now(), o.pushWindows);
    this.current = { state: "connecting", at: o.clock.now() };
  }

  get health(): WeComHealth {
    return this.current;
  }

  /** Open the connection (and keep it open until close). */
  start(): void {
    this.connect();
  }

  /** Whether a reply frame has gone out on this req_id (its message has an answer on screen). */
  hasAnswered(reqId: string): boolean {
    return this.answeredReqs.has(reqId);
  }

  /**
   * One frame of a bubble on the inbound req_id. Frames of one req_id go out one at a time, each
   * after the previous one's answer (or its timeout), so every verdict belongs to its own frame.
   */
  respond(reqId: string, streamId: string, content: string, finish: boolean): Promise<FrameVerdict> {
    const previous = this.chains.get(reqId) ?? Promise.resolve();
    const bounded = withinWireCap(content, this.o.logger);
    const frame = streamFrame(reqId, streamId, bounded, finish);
    // A live frame is replaced by the next one anyway; the sealing frame is the one the bubble keeps.
    const mine = previous.then(() =>
      finish ? this.resending("seal", () => this.exchange(reqId, frame)) : this.exchange(reqId, frame),
    );
    const tail = mine.catch(() => undefined);
    this.chains.set(reqId, tail);
    void tail.then(() => {
      if (this.chains.get(reqId) === tail) this.chains.delete(reqId);
    });
    // From the first frame on, a notice must never reuse this req_id (it would retarget the answers).
    this.answeredReqs.add(reqId);
    if (this.answeredReqs.size > MAX_REMEMBERED_REQS) {
      const oldest = this.answeredReqs.values().next().value;
      if (oldest !== undefined) this.answeredReqs.delete(oldest);
    }
    return mine;
  }

  /**
   * A push into `chatId` (a user's one-to-one conversation), spent from its budget: a push that
   * would overdraw it waits for the window instead of being sent to be refused. Not acknowledged, it
   * is sent again (each send spends budget: WeCom may have counted it).
   */
  async push(chatId: string, content: string): Promise<FrameVerdict> {
    const bounded = withinWireCap(content, this.o.logger);
    return this.resending("push", async () => {
      if (!(await this.spend(chatId))) return { kind: "unsent" };
      // A fresh req_id per send: an answer to the earlier one must not settle this one.
      const reqId = this.newReqId(CMD_SEND);
      return this.exchange(reqId, pushFrame(reqId, chatId, bounded));
    });
  }

  /** How long until `count` more pushes into `chatId` could have gone out (budget only; spends nothing). */
  pushDelay(chatId: string, count: number): number {
    return this.budget.delayFor(chatId, count);
  }

  /** Stop reconnecting and close the socket. Callers settle their turns first (start.ts). */
  async close(): Promise<void> {
    this.closing = true;
    this.stopping.abort(new Error("closing"));
    this.o.clock.clearTimeout(this.reconnectTimer);
    this.stopHeartbeat();
    for (const [id, p] of [...this.pending]) this.settle(id, p, { kind: "unacked" });
    this.wakeReady(false);
    const ws = this.ws;
    this.ws = null;
    if (!ws || ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      ws.once("close", () => resolve());
      // A peer that never completes the closing handshake must not hold the shutdown.
      const timer = setTimeout(() => {
        ws.terminate();
        resolve();
      }, 2_000);
      timer.unref?.();
      ws.close(1000);
    });
  }

  /** Wait for one push of budget and spend it; false when the client stopped meanwhile. */
  private async spend(chatId: string): Promise<boolean> {
    for (;;) {
      const wait = this.budget.take(chatId);
      if (wait === 0) return true;
      try {
        await sleep(this.o.clock, wait, this.stopping.signal);
      } catch {
        // Aborted by close(): the push is reported unsent to its caller, who says so.
        return false;
      }
    }
  }

  /**
   * `send`, again while its verdict is no evidence (unacked: maybe lost; unsent: the socket was
   * down), a bounded number of times. Each try waits for the subscription (exchange), so a socket
   * that closed is reconnected first. A stopped or kicked client does not try again.
   */
  private async resending(what: "push" | "seal", send: () => Promise<FrameVerdict>): Promise<FrameVerdict> {
    const resends = this.o.maxResends ?? WECOM_MAX_RESENDS;
    let verdict: FrameVerdict = await send();
    for (let n = 1; n <= resends; n++) {
      if (verdict.kind === "accepted" || verdict.kind === "refused") return verdict;
      if (this.closing || this.kicked) return verdict;
      this.o.logger.warn("wecom: a frame was not acknowledged; sending it again", {
        what,
        verdict: verdict.kind,
        resend: n,
      });
      const unanswered = verdict.kind === "unacked";
      const again: FrameVerdict = await send();
      // The stream is sealed already, so the unanswered try did land (bubbles roll well before
      // their lifetime, so 846608 here is not an expiry): the bubble shows this very frame.
      if (what === "seal" && unanswered && isStreamDead(again)) return { kind: "accepted" };
      verdict = again;
    }
    return verdict;
  }

  // ── the connection ────────────────────────────────────────────────────────────────────────

  private isOpen(): boolean {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN;
  }

  private connect(): void {
    if (this.closing || this.kicked) return;
    this.subscribed = false;
    this.missedPings = 0;
    this.pingIds.clear();
    let opened = false;
    const ws = new WebSocket(this.o.url, { handshakeTimeout: 15_000, maxPayload: 4 * 1024 * 1024 });
    this.ws = ws;
    ws.on("open", () => {
      opened = true;
      const reqId = this.newReqId(CMD_SUBSCRIBE);
      this.write(ws, subscribeFrame(reqId, this.o.botId, this.o.secret));
    });
    ws.on("message", (data, isBinary) => {
      // WeCom's frames are JSON text (aibot-node-sdk src/ws.ts handleFrame): a binary one is not ours.
      if (isBinary) {
        this.o.drops.record({ reason: "unparseable", fields: { frame: "binary" } });
        return;
      }
      this.onFrame(ws, data.toString());
    });
    ws.on("error", (error) => {
      // A socket error carries no payload; its name says enough (the close handler reconnects).
      this.o.logger.warn("wecom: connection error", { error: error.name, code: codeOf(error) });
    });
    ws.on("close", () => {
      if (this.ws === ws) this.ws = null;
      this.stopHeartbeat();
      // Frames written on this socket will never be answered now.
      for (const [id, p] of [...this.pending]) this.settle(id, p, { kind: "unacked" });
      if (this.closing || this.kicked) return;
      if (this.current.state !== "unhealthy") this.report(opened ? "closed" : "unreachable");
      this.scheduleReconnect();
    });
  }

  private scheduleReconnect(): void {
    // Only a connection that stayed up resets the curve; an immediate close stays on it.
    if (
      this.subscribed &&
      this.o.clock.now() - this.subscribedAt >= (this.o.minHealthyMs ?? WECOM_MIN_HEALTHY_MS)
    )
      this.attempts = 0;
    this.subscribed = false;
    const base = this.o.reconnectBaseMs ?? WECOM_RECONNECT_BASE_MS;
    const max = this.o.reconnectMaxMs ?? WECOM_RECONNECT_MAX_MS;
    const delay = Math.min(max, base * 2 ** Math.min(this.attempts, 16));
    this.attempts += 1;
    this.o.logger.info("wecom: reconnecting", { inMs: delay, attempt: this.attempts });
    this.reconnectTimer = this.o.clock.setTimeout(() => this.connect(), delay);
  }

  private onFrame(ws: WebSocket, data: string): void {
    const frame = readFrame(data);
    switch (frame.kind) {
      case "callback":
        this.o.onCallback(frame.frame);
        return;
      case "event": {
        if (frame.eventType === "disconnected_event") {
          this.onKicked(ws);
          return;
        }
        // enter_chat (a welcome owed within 5 s), feedback_event and template_card_event answer
        // features this channel does not have: counted as events nobody answers, never silently.
        const user = frame.frame.body.from?.userid;
        this.o.drops.record({
          reason: "event_unanswered",
          shape: frame.eventType || "no_eventtype",
          ...(typeof user === "string" && user ? { user } : {}),
          fields: { event: frame.eventType || "no_eventtype" },
        });
        return;
      }
      case "ack":
        this.onAck(ws, frame.frame.headers.req_id, frame.frame.errcode);
        return;
      case "unknown":
        this.o.drops.record({
          reason: frame.reason,
          ...(frame.shape ? { shape: frame.shape, fields: { cmd: frame.shape } } : {}),
        });
    }
  }

  private onAck(ws: WebSocket, reqId: string, errcode: number): void {
    if (this.pingIds.delete(reqId)) {
      this.missedPings = 0;
      return;
    }
    if (reqId.startsWith(SUBSCRIBE_PREFIX)) {
      if (errcode === 0) {
        this.subscribed = true;
        this.subscribedAt = this.o.clock.now();
        this.setHealth({ state: "healthy", at: this.o.clock.now() });
        this.startHeartbeat(ws);
        this.wakeReady(true);
        return;
      }
      // Never the errmsg: only that the credentials were refused. A secret can be corrected while
      // the gateway runs, so the reconnect loop goes on.
      this.report("subscribe_refused", { errcode });
      ws.terminate();
      return;
    }
    const pending = this.pending.get(reqId);
    if (!pending) {
      // Late (its frame already timed out and was sent again), or for a frame of an earlier socket.
      this.o.drops.record({ reason: "stray_ack", fields: { errcode } });
      return;
    }
    this.settle(
      reqId,
      pending,
      errcode === 0
        ? { kind: "accepted" }
        : {
            kind: "refused",
            errcode,
            terminal: errcode === ERR_UNROUTABLE || errcode === ERR_STREAM_EXPIRED,
          },
    );
  }

  private onKicked(ws: WebSocket): void {
    this.kicked = true;
    this.report("kicked");
    this.wakeReady(false);
    this.o.logger.error(
      "wecom: another connection subscribed with this bot, so WeCom disconnected this one; not reconnecting (stop the other gateway, then restart this one)",
    );
    ws.terminate();
  }

  // ── frames and their answers ──────────────────────────────────────────────────────────────

  /**
   * Send one frame and wait for its answer (bounded). One exchange per req_id at a time. A frame
   * made while the connection is (re)opening waits for the subscription, bounded too: a turn resumed
   * at start, or a push during a reconnect, goes out instead of being dropped.
   */
  private async exchange(reqId: string, frame: OutboundFrame): Promise<FrameVerdict> {
    if (!(await this.whenSubscribed())) return { kind: "unsent" };
    const ws = this.ws;
    if (!ws || !this.isOpen()) return { kind: "unsent" };
    return new Promise<FrameVerdict>((resolve) => {
      const entry: Pending = {
        resolve,
        timer: this.o.clock.setTimeout(
          () => this.settle(reqId, entry, { kind: "unacked" }),
          this.o.ackTimeoutMs ?? WECOM_ACK_TIMEOUT_MS,
        ),
      };
      this.pending.set(reqId, entry);
      if (!this.write(ws, frame)) this.settle(reqId, entry, { kind: "unsent" });
    });
  }

  /** True once subscribed (at once when already); false when that did not happen in time. */
  private whenSubscribed(): Promise<boolean> {
    if (this.subscribed && this.isOpen()) return Promise.resolve(true);
    if (this.closing || this.kicked) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const done = (ok: boolean) => {
        this.o.clock.clearTimeout(timer);
        this.readyWaiters.delete(onReady);
        resolve(ok);
      };
      const onReady = (ok: boolean) => done(ok);
      const timer = this.o.clock.setTimeout(
        () => done(false),
        this.o.connectWaitMs ?? WECOM_ACK_TIMEOUT_MS * 2,
      );
      this.readyWaiters.add(onReady);
    });
  }

  private wakeReady(ok: boolean): void {
    for (const w of [...this.readyWaiters]) w(ok);
  }

  private settle(reqId: string, entry: Pending, verdict: FrameVerdict): void {
    if (this.pending.get(reqId) !== entry) return;
    this.pending.delete(reqId);
    this.o.clock.clearTimeout(entry.timer);
    if (verdict.kind === "refused")
      // The classification only: the errmsg that came with it can echo the frame's content.
      this.o.logger.warn("wecom: a frame was refused", {
        errcode: verdict.errcode,
        terminal: verdict.terminal,
      });
    entry.resolve(verdict);
  }

  private write(ws: WebSocket, frame: OutboundFrame): boolean {
    if (ws.readyState !== WebSocket.OPEN) return false;
    try {
      ws.send(JSON.stringify(frame));
      return true;
    } catch (error) {
      this.o.logger.warn("wecom: a frame could not be written", { cmd: frame.cmd, error: String(error) });
      return false;
    }
  }

  // ── heartbeat ─────────────────────────────────────────────────────────────────────────────

  private startHeartbeat(ws: WebSocket): void {
    this.stopHeartbeat();
    const tick = () => {
      if (this.ws !== ws || !this.isOpen()) return;
      if (this.missedPings >= WECOM_MISSED_PINGS) {
        this.report("heartbeat_lost");
        ws.terminate();
        return;
      }
      this.missedPings += 1;
      const reqId = this.newReqId(CMD_PING);
      this.pingIds.add(reqId);
      this.write(ws, pingFrame(reqId));
      this.pingTimer = this.o.clock.setTimeout(tick, this.o.pingIntervalMs ?? WECOM_PING_INTERVAL_MS);
    };
    this.pingTimer = this.o.clock.setTimeout(tick, this.o.pingIntervalMs ?? WECOM_PING_INTERVAL_MS);
  }

  private stopHeartbeat(): void {
    this.o.clock.clearTimeout(this.pingTimer);
    this.pingTimer = null;
    // Answers to pings of a closed socket would only ever be strays.
    this.pingIds.clear();
  }

  // ── health ────────────────────────────────────────────────────────────────────────────────

  /** `<cmd>_<time>_<random>`: unique per frame, and the prefix names what it answers. */
  private newReqId(prefix: string): string {
    return `${prefix}_${this.o.clock.now().toString(36)}_${randomBytes(6).toString("hex")}`;
  }

  private report(reason: HealthReason, fields: Record<string, unknown> = {}): void {
    this.setHealth({ state: "unhealthy", reason, at: this.o.clock.now() });
    this.o.logger.warn("wecom: not healthy", { reason, ...fields });
  }

  private setHealth(h: WeComHealth): void {
    const before = this.current;
    this.current = h;
    if (
      before.state === h.state &&
      (before as { reason?: string }).reason === (h as { reason?: string }).reason
    )
      return;
    if (h.state === "healthy") this.o.logger.info("wecom: subscribed");
    this.o.onHealth?.(h);
  }
}

function isStreamDead(verdict: FrameVerdict): boolean {
  return verdict.kind === "refused" && verdict.errcode === ERR_STREAM_EXPIRED;
}

function codeOf(error: Error): string | undefined {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? code : undefined;
}

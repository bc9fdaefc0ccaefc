/**
 * The ways a message reaches a WeCom user, and the order they are tried in. A push has its own
 * req_id, so WeCom's verdict on it is exact; a sealed bubble on the inbound req_id is next, but only
 * while nothing has answered that message yet (a frame there after the answer would be read as part
 * of it); the one-shot response_url is the last resort. Command replies, notices and refusals go
 * this way. Pushes go through the turn's parts, so a turn run again after a restart does not push
 * what its first run already delivered.
 */
import type { Logger } from "../messaging/base/logger.js";
import type { TurnParts } from "../messaging/channel/delivery.js";
import type { FrameVerdict } from "./client.js";
import type { ResponseUrl } from "./response-url.js";

/** The client's side of the wire, as the renderer and the surface use it. */
export interface WeComWire {
  respond(reqId: string, streamId: string, content: string, finish: boolean): Promise<FrameVerdict>;
  push(chatId: string, content: string): Promise<FrameVerdict>;
  /** How long until `count` more pushes into `chatId` fit WeCom's budget (nothing is spent). */
  pushDelay(chatId: string, count: number): number;
  hasAnswered(reqId: string): boolean;
}

/** A confirmed push's outcome: landed, or WeCom's last verdict on it (what the user is told). */
export type PushOutcome = { landed: true } | { landed: false; verdict: FrameVerdict };

/** Where one conversation's message came from: the user, and the message's own reply handles. */
export interface WeComAddress {
  userid: string;
  /** The inbound frame's req_id (absent: no bubble can be streamed). */
  reqId?: string;
  responseUrl?: string;
}

export interface OutboxOptions {
  wire: WeComWire;
  responseUrl: ResponseUrl;
  address: WeComAddress;
  logger: Logger;
  parts?: TurnParts;
  /** A fresh stream id for a sealed bubble (the turn's part key where there is one). */
  streamId: () => string;
}

export class Outbox {
  constructor(private readonly o: OutboxOptions) {}

  /** A confirmed push: true when WeCom accepted it (or an earlier run of this turn already had). */
  async push(content: string): Promise<boolean> {
    return (await this.pushed(content)).landed;
  }

  /** `push`, with WeCom's verdict when it did not land. */
  async pushed(content: string): Promise<PushOutcome> {
    let verdict: FrameVerdict = { kind: "unsent" };
    const send = async () => {
      verdict = await this.o.wire.push(this.o.address.userid, content);
      return verdict.kind === "accepted";
    };
    if (!this.o.parts) return (await send()) ? { landed: true } : { landed: false, verdict };
    const landed = await this.o.parts.post(content, {
      // A push has no id to edit later: "pushed" only marks it landed.
      create: async () => ((await send()) ? "pushed" : null),
      replace: async () => false,
    });
    return landed !== null ? { landed: true } : { landed: false, verdict };
  }

  /** How long until `count` more pushes to this user fit WeCom's budget. */
  pushDelay(count: number): number {
    return this.o.wire.pushDelay(this.o.address.userid, count);
  }

  /** The one-shot response_url, when the message has one; true when it accepted `content`. */
  async lastResort(content: string): Promise<boolean> {
    const url = this.o.address.responseUrl;
    return url ? this.o.responseUrl.post(url, content) : false;
  }

  /** A bubble of its own on the inbound req_id, sealed at once, while nothing else answered it. */
  async sealedBubble(content: string): Promise<boolean> {
    const reqId = this.o.address.reqId;
    if (!reqId || this.o.wire.hasAnswered(reqId)) return false;
    // A sealing frame is sent again while unanswered (client.ts); still unanswered is no delivery.
    const verdict = await this.o.wire.respond(reqId, this.o.streamId(), content, true);
    return verdict.kind === "accepted";
  }

  /** Push, then a sealed bubble, then the response_url; true when one of them delivered. */
  async say(content: string): Promise<boolean> {
    if (await this.push(content)) return true;
    if (await this.sealedBubble(content)) return true;
    if (await this.lastResort(content)) return true;
    this.o.logger.warn("wecom: a reply could not be delivered by any route");
    return false;
  }
}

/**
 * What parley keeps per peer and per bot in the durable store: the `context_token` of each peer's
 * latest message (iLink requires it on every send to that peer; a send without one is refused
 * locally, never tried blind) and the `get_updates_buf` long-poll cursor. Both ride the store's
 * route table (the channel's own plain data per conversation): a token is written only after its
 * sender was authorized; the cursor under a reserved key no iLink id can take. Without a durable
 * store (unit tests of one part), both live in memory only.
 */
import type { Logger } from "../messaging/base/logger.js";
import type { CursorStore, RouteStore } from "../messaging/store/port.js";

const CHANNEL = "weixin";
/** Not an iLink id (those are `…@im.wechat`): the cursor's row cannot collide with a peer's. */
export const CURSOR_KEY = "#getupdates";
/**
 * The store's numeric cursor, counting the batches confirmed: advancing it is the store's durable
 * (fsynced) commit, which makes the opaque cursor written just before it, and every accept before
 * that, survive power loss too: the point at which iLink may forget a message must hold.
 */
export const CURSOR_GENERATION = "weixin.getupdates";

export class PeerState {
  private readonly tokens = new Map<string, string>();
  private cursor = "";
  private generation = 0;

  constructor(
    private readonly o: {
      routes?: RouteStore | undefined;
      cursors?: CursorStore | undefined;
      logger: Logger;
    },
  ) {}

  /** Read what a previous run kept: every peer's token and the cursor. */
  async load(): Promise<void> {
    this.generation = (await this.o.cursors?.get(CURSOR_GENERATION)) ?? 0;
    if (!this.o.routes) return;
    for (const route of await this.o.routes.list(CHANNEL)) {
      const address = route.address as { contextToken?: unknown; buf?: unknown } | null;
      if (route.conversation === CURSOR_KEY) {
        if (typeof address?.buf === "string") this.cursor = address.buf;
      } else if (typeof address?.contextToken === "string" && address.contextToken)
        this.tokens.set(route.conversation, address.contextToken);
    }
  }

  contextToken(peer: string): string | undefined {
    return this.tokens.get(peer);
  }

  /** Peers a token is known for (the ones a proactive send could reach). */
  reachable(): string[] {
    return [...this.tokens.keys()];
  }

  /** An authorized peer's latest token; durable before the message it came with is journaled. */
  async rememberToken(peer: string, token: string): Promise<void> {
    if (!token || this.tokens.get(peer) === token) return;
    this.tokens.set(peer, token);
    await this.o.routes?.put({
      channel: CHANNEL,
      conversation: peer,
      address: { contextToken: token },
      owner: peer,
    });
  }

  get updatesCursor(): string {
    return this.cursor;
  }

  /** Move the cursor (only once the batch it passes is journaled); a failed write is logged, not fatal. */
  async advanceCursor(buf: string): Promise<void> {
    if (buf === this.cursor) return;
    this.cursor = buf;
    try {
      await this.o.routes?.put({ channel: CHANNEL, conversation: CURSOR_KEY, address: { buf }, owner: "" });
      await this.o.cursors?.advance(CURSOR_GENERATION, ++this.generation);
    } catch (error) {
      this.o.logger.error("weixin: persisting the getupdates cursor failed", { error: String(error) });
    }
  }
}

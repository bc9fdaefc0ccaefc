/**
 * Starting the web chat: transport, surface and hub over the shared machinery, then the HTTP +
 * WebSocket server. It prints one line with the URL and its per-start token.
 */
import { randomBytes } from "node:crypto";
import { ParleyError } from "../messaging/base/errors.js";
import { SHARED_HANDLERS } from "../messaging/channel/command-handlers.js";
import type { ChannelContext, RunningChannel } from "../messaging/channel/contract.js";
import { ConversationHub } from "../messaging/channel/hub.js";
import { redactForDisplay } from "../messaging/security/display-safety.js";
import type { TranscriptLine } from "../messaging/store/port.js";
import { oneLine } from "../messaging/text/clip.js";
import { OWNER_PRINCIPAL, WebChatServer } from "./client.js";
import { WEBCHAT_HELP_FOOTER, webchatCommands } from "./commands.js";
import type { WebChatSettings } from "./index.js";
import { WebChatFrames } from "./intake.js";
import { renderPage } from "./page.js";
import type { WebChatExtra } from "./surface.js";
import { WebChatSurface } from "./surface.js";
import { WebChatTransport } from "./transport.js";

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

export interface WebChatStartOptions {
  throttleMs?: number;
  maxHeldUploadBytes?: number;
}

/** The web chat without its server: transport, surface, hub and the frame intake over them. */
export function assembleWebChat(ctx: ChannelContext<WebChatSettings>, options: WebChatStartOptions = {}) {
  const transport = new WebChatTransport({ audit: ctx.audit, drops: ctx.drops, now: () => ctx.clock.now() });
  const surface = new WebChatSurface({ transport, agentName: ctx.defaults.agentName, ...options }, ctx);
  const hub = new ConversationHub<string, WebChatExtra>({
    surface,
    commands: webchatCommands(),
    ctx,
    // The token holder is the operator: the one owner there is.
    isOwner: (userId) => userId === OWNER_PRINCIPAL,
    helpFooter: WEBCHAT_HELP_FOOTER,
    handlers: {
      stop: async (call) => {
        const reply = await SHARED_HANDLERS.stop?.(call);
        surface.dropHeld(call.key);
        return reply ?? "";
      },
    },
  });
  return { transport, surface, hub, frames: new WebChatFrames(transport, surface, hub, ctx) };
}

/**
 * Lines of history a reloaded page shows at most: as many as this process keeps bubbles (500), and
 * the most one transcript read returns. Older lines stay in the transcript until its retention.
 */
const HISTORY_ON_LOAD = 500;

async function conversationHistory(ctx: ChannelContext, key: string): Promise<TranscriptLine[]> {
  const history = ctx.pipeline.history;
  if (!history || history.restricted(key)) return [];
  try {
    return await history.recent(key, HISTORY_ON_LOAD);
  } catch (error) {
    // The page still opens; what this process rendered is still shown.
    ctx.logger.warn("webchat: reading the history failed", { error: String(error) });
    return [];
  }
}

export async function start(
  ctx: ChannelContext<WebChatSettings>,
  options: WebChatStartOptions = {},
): Promise<RunningChannel> {
  const { host, port, allowRemote } = ctx.settings;
  if (!LOOPBACK.has(host)) {
    if (!allowRemote) {
      throw new ParleyError(
        "CONFIG_INVALID",
        `refusing to bind the web chat to non-loopback host ${host}: pass --allow-remote (or webchat.allowRemote) to expose it`,
      );
    }
    ctx.logger.warn(
      `the web chat is reachable from other machines on ${host}; anyone with the URL and token can drive the agent`,
    );
  }
  const token = randomBytes(18).toString("base64url");
  const { transport, hub, frames } = assembleWebChat(ctx, options);
  const titleOf = (conversationId: string) => ctx.store.titleOf(hub.keyOf(conversationId))?.title;
  // Before the page can send anything new: a conversation's older message is answered first.
  await hub.resume();
  const server = new WebChatServer({
    host,
    port,
    token,
    logger: ctx.logger,
    page: renderPage,
    // A (re)loaded page gets the conversation's history too, from before any restart.
    onConnect: async (conn) => {
      transport.open(conn.conversationId);
      const history = await conversationHistory(ctx, hub.keyOf(conn.conversationId));
      const title = titleOf(conn.conversationId);
      conn.send({
        type: "snapshot",
        conversationId: conn.conversationId,
        bubbles: transport.snapshot(conn.conversationId, history),
        // Redacted like any text the page shows.
        ...(title ? { title: redactForDisplay(oneLine(title, 80)).text } : {}),
      });
    },
    onFrame: (conn, frame) => frames.handleFrame(conn, frame),
    onBadFrame: (conn, refusal) => frames.handleBadFrame(conn, refusal),
    limits: ctx.settings,
    now: () => ctx.clock.now(),
    ...(ctx.routes ? { routes: ctx.routes } : {}),
    // A refused upgrade, request or frame is an inbound drop: counted for doctor as well as audited.
    onRefused: (reason, { conversation, ...detail }) =>
      ctx.drops.record({
        reason,
        operation: "webchat.socket",
        outcome: "refused",
        ...(typeof conversation === "string" ? { conversation } : {}),
        fields: detail,
      }),
  });
  // Conversations nobody has open are dropped from memory once idle.
  const idleMs = ctx.settings.idleConversationMinutes * 60_000;
  let pruning: unknown = null;
  const prune = () => {
    transport.pruneIdle((id) => server.hasConversation(id), ctx.clock.now(), idleMs);
    pruning = ctx.clock.setTimeout(prune, Math.min(idleMs, 60_000));
  };
  pruning = ctx.clock.setTimeout(prune, Math.min(idleMs, 60_000));
  transport.admit(OWNER_PRINCIPAL, (conversationId, frame) => server.broadcast(conversationId, frame));
  const actualPort = await server.start();
  // Listening is the web chat's connection: pages reach it from here on.
  ctx.status?.connected();
  const shownHost = host.includes(":") ? `[${host}]` : host;
  ctx.announce(`parley web chat: http://${shownHost}:${actualPort}/?token=${token}`);
  return {
    name: "webchat",
    transport,
    async stop() {
      ctx.clock.clearTimeout(pruning);
      await hub.shutdown();
      await server.stop();
    },
  };
}

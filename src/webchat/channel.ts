/** Starting the web chat: transport + server + dispatcher, wired to the gateway's shared machinery. */
import { randomBytes } from "node:crypto";
import type { GatewayContext, RunningChannel } from "../gateway/channel.js";
import { ParleyError } from "../messaging/base/errors.js";
import { normalizeQueueMode } from "../messaging/queue/mid-turn-router.js";
import { OWNER_PRINCIPAL, WebChatServer } from "./client.js";
import { WebChatDispatcher } from "./dispatch.js";
import { renderPage } from "./page.js";
import { WebChatTransport } from "./transport.js";

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

export async function start(ctx: GatewayContext): Promise<RunningChannel> {
  const { host, port, allowRemote } = ctx.config.webchat;
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
  const transport = new WebChatTransport({ audit: ctx.audit });
  const dispatcher = new WebChatDispatcher({
    transport,
    sessions: ctx.sessions,
    pipeline: ctx.pipeline,
    audit: ctx.audit,
    logger: ctx.logger,
    approvalMode: ctx.config.approvalMode,
    queueMode: normalizeQueueMode(ctx.config.queueMode),
    grant: ctx.grant,
  });
  const server = new WebChatServer({
    host,
    port,
    token,
    logger: ctx.logger,
    page: renderPage,
    onConnect: (conn) =>
      conn.send({
        type: "snapshot",
        conversationId: conn.conversationId,
        bubbles: [...transport.open(conn.conversationId)],
      }),
    onFrame: (conn, frame) => dispatcher.handleFrame(conn, frame),
    onBadFrame: (conn, refusal) => dispatcher.handleBadFrame(conn, refusal),
  });
  transport.admit(OWNER_PRINCIPAL, (conversationId, frame) => server.broadcast(conversationId, frame));
  const actualPort = await server.start();
  const shownHost = host.includes(":") ? `[${host}]` : host;
  ctx.announce(`parley web chat: http://${shownHost}:${actualPort}/?token=${token}`);
  return {
    name: "webchat",
    async stop() {
      await dispatcher.shutdown();
      await server.stop();
    },
  };
}

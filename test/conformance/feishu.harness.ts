/**
 * Feishu under the channel contract: the real transport and renderer, the Lark SDK's real REST client
 * and long connection, and the loopback fake. Outbound payloads are every message request's `md`
 * body as sent, with what a Feishu user would read of it as the rendered form. A Feishu message is
 * always a reply to one a user sent, so the configured half seeds one message as the conversation's
 * anchor (the intake notes every admitted message so).
 */
import { createClient, createHttp, FeishuRest } from "../../src/feishu/client.js";
import type { FeishuSettings } from "../../src/feishu/index.js";
import { feishuChannel } from "../../src/feishu/index.js";
import { PromptLedger } from "../../src/feishu/prompts.js";
import { FeishuRenderer } from "../../src/feishu/renderer.js";
import { start as startFeishu } from "../../src/feishu/start.js";
import type { FeishuAddress } from "../../src/feishu/surface.js";
import { FEISHU_CAPABILITIES, FeishuTransport } from "../../src/feishu/transport.js";
import { realClock } from "../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import type { MessagingTransport } from "../../src/messaging/channel/transport.js";
import type { AuditSink } from "../../src/messaging/security/audit.js";
import { postMarkdown, renderVisible } from "../fakes/feishu/render.js";
import { FakeFeishu } from "../fakes/feishu/server.js";
import { testChannelContext } from "../helpers/channel-context.js";
import { tempHome } from "../helpers/channel-under-test.js";
import { testDrops } from "../helpers/drops.js";
import type { ChannelHarness, OutboundMessage } from "./contract.js";
import type { DispatcherHarness } from "./dispatcher-contract.js";
import { liveChannel } from "./dispatcher-contract.js";

const OWNER = "ou_conformance0000000000000000000001";
let next = 1;

/** An `im.message.receive_v1` as the SDK's dispatcher hands it to the channel (header and event flattened). */
function envelope(user: string, text: string, opts?: { bot?: boolean }) {
  const id = `om_conf_${next++}`;
  return {
    schema: "2.0",
    event_id: `ev_${id}`,
    event_type: "im.message.receive_v1",
    sender: { sender_id: { open_id: user }, sender_type: opts?.bot ? "app" : "user" },
    message: {
      message_id: id,
      chat_id: `oc_p2p_${user.slice(3)}`,
      chat_type: "p2p",
      message_type: "text",
      content: JSON.stringify({ text }),
    },
  };
}

/** Every message a request carried (reply, create, edit): its md, and what a reader sees of it. */
function outboundOf(fake: FakeFeishu): OutboundMessage[] {
  return fake
    .callsTo(/^(POST|PUT) \/open-apis\/im\/v1\/messages/)
    .filter((c) => c.status === 200 && typeof c.body?.content === "string")
    .map((c) => {
      const md = postMarkdown(JSON.parse(String(c.body?.content))) ?? "";
      return { text: md, rendered: [renderVisible(md).visible], buttons: 0 };
    });
}

export const feishuHarness: ChannelHarness = {
  name: "feishu",
  capabilities: FEISHU_CAPABILITIES,
  unconfigured: (audit: AuditSink) =>
    new FeishuTransport({
      drops: testDrops(audit, "feishu"),
      audit,
    }) as unknown as MessagingTransport<unknown>,
  async configured(audit: AuditSink) {
    const fake = await FakeFeishu.start({ lifetimeMs: 60_000 });
    const logger = new MemoryLogger();
    const client = createClient({
      appId: fake.appId,
      appSecret: fake.appSecret,
      origin: fake.origin,
      http: createHttp(),
      logger,
    });
    const rest = new FeishuRest({ client, clock: realClock, logger });
    const transport = new FeishuTransport({
      drops: testDrops(audit, "feishu"),
      audit,
      rest,
      allowedOpenIds: new Set([OWNER]),
      logger,
    });
    transport.setIdentity({ openId: fake.botOpenId, appName: fake.appName });
    const anchor = fake.seedMessage({ openId: OWNER }, "hello");
    transport.noteAnchor(OWNER, anchor);
    return {
      transport: transport as unknown as MessagingTransport<unknown>,
      conversationId: OWNER,
      allowedUser: OWNER,
      envelope,
      newRenderer: () =>
        new FeishuRenderer({
          post: (md) => transport.postMarkdown({ replyTo: anchor, chatId: "" }, md),
          prompts: new PromptLedger(),
          now: () => Date.now(),
          logger,
          commands: { new: "`/new`", stop: "`/stop`" },
        }),
      outbound: () => outboundOf(fake),
      close: () => fake.stop(),
    };
  },
};

/** The whole Feishu channel (start()) against the fake: DMs from the owner and a guest. */
export const feishuDispatcher: DispatcherHarness = {
  name: "feishu",
  buffered: true,
  steerOnly: true,
  async lab() {
    const fake = await FakeFeishu.start({ lifetimeMs: 60_000 });
    const home = tempHome("feishu-dispatch");
    const owner = "ou_dispatchowner00000000000000000001";
    const guest = "ou_dispatchguest00000000000000000002";
    return {
      owner,
      guest,
      async start(shared) {
        const ctx = testChannelContext<FeishuSettings>(feishuChannel, {
          section: { allowedOpenIds: [owner, guest], owner },
          env: { FEISHU_APP_ID: fake.appId, FEISHU_APP_SECRET: fake.appSecret, FEISHU_DOMAIN: fake.origin },
          home,
          ...shared,
        });
        const before = fake.ws.connections;
        const running = await startFeishu(ctx);
        await fake.waitFor(() => fake.ws.connections > before && fake.ws.ready.size > 0, 5000, "connected");
        return liveChannel(
          running,
          (user): FeishuAddress => ({ chatType: "p2p", route: user, chatId: `oc_p2p_${user.slice(3)}` }),
          async (user, text) => void fake.pushMessage({ openId: user }, text),
        );
      },
      visible: () => fake.botMessages().map((m) => m.visible),
      // Feishu declares no reactions: nothing is ever put on a user's message.
      reactions: () => fake.callsTo(/reactions/).map((c) => c.path),
      close: () => fake.stop(),
    };
  },
};

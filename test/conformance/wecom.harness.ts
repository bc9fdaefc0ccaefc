/**
 * The WeCom channel under the shared contract: the real WeComTransport and WeComRenderer over the
 * real long-connection client, against the loopback fake. `outbound()` reads every stream frame,
 * push and response_url body that reached the fake (each frame is what the bubble showed at that
 * moment), so the caps and the redaction are checked on everything a WeCom user could have seen.
 */
import type { MessagingTransport } from "../../src/messaging/channel/transport.js";
import type { AuditSink } from "../../src/messaging/security/audit.js";
import type { WeComSettings } from "../../src/wecom/index.js";
import { wecomChannel } from "../../src/wecom/index.js";
import { start as startWeCom } from "../../src/wecom/start.js";
import { WECOM_CAPABILITIES, WeComTransport } from "../../src/wecom/transport.js";
import type { CallbackFrame } from "../../src/wecom/wire.js";
import { FakeWeCom } from "../fakes/wecom/server.js";
import { testChannelContext } from "../helpers/channel-context.js";
import { tempHome } from "../helpers/channel-under-test.js";
import { testDrops } from "../helpers/drops.js";
import { USER, wire, wireTexts } from "../wecom/helpers.js";
import type { ChannelHarness, OutboundMessage } from "./contract.js";
import type { DispatcherHarness } from "./dispatcher-contract.js";
import { liveChannel } from "./dispatcher-contract.js";

const BOT = "aib-conformance";

let seq = 0;
function envelope(user: string, text: string, opts?: { bot?: boolean }): CallbackFrame {
  seq += 1;
  return {
    cmd: "aibot_msg_callback",
    headers: { req_id: `conf-${seq}` },
    body: {
      msgid: `conf-msg-${seq}`,
      aibotid: BOT,
      chattype: "single",
      // WeCom marks nothing as "bot": the bot's own messages carry its own id as the sender.
      from: { userid: opts?.bot ? BOT : user },
      msgtype: "text",
      text: { content: text },
    },
  };
}

export const wecomHarness: ChannelHarness = {
  name: "wecom",
  capabilities: WECOM_CAPABILITIES,
  unconfigured: (audit: AuditSink) =>
    new WeComTransport({
      drops: testDrops(audit, "wecom"),
      audit,
      botId: BOT,
    }) as unknown as MessagingTransport<unknown>,
  async configured(audit: AuditSink) {
    const w = await wire();
    const transport = new WeComTransport({
      drops: testDrops(audit, "wecom"),
      audit,
      botId: BOT,
      allowedUsers: [USER],
      pusher: w.client,
    });
    // The user opens the conversation (WeCom pushes only into one the user wrote to).
    w.message({ text: "hello" });
    return {
      transport: transport as unknown as MessagingTransport<unknown>,
      conversationId: USER,
      allowedUser: USER,
      envelope,
      // Each turn answers its own message: its req_id routes the frames.
      newRenderer: () => w.renderer(w.message({ text: "go" })),
      outbound: (): OutboundMessage[] =>
        wireTexts(w.fake).map((t) => ({ text: t, rendered: [t], buttons: 0 })),
      close: () => w.close(),
    };
  },
};

/** The whole WeCom channel (start()) against the fake long connection: 1:1 chats of owner and guest. */
export const wecomDispatcher: DispatcherHarness = {
  name: "wecom",
  // An answer is bound to the message that asked: a message mid-turn steers or is refused.
  queueModes: ["steer"],
  async lab() {
    const fake = await FakeWeCom.start({ lifetimeMs: 60_000 });
    const home = tempHome("wecom-dispatch");
    const owner = "zhangsan";
    const guest = "lisi";
    return {
      owner,
      guest,
      async start(shared) {
        const ctx = testChannelContext<WeComSettings>(wecomChannel, {
          section: { allowedUsers: [owner, guest], owner },
          env: {
            WECOM_BOT_ID: fake.botId,
            WECOM_SECRET: fake.secret,
            WECOM_WS_URL: fake.wsUrl,
            WECOM_MEDIA_HOSTS: fake.origin,
          },
          home,
          ...shared,
        });
        const running = await startWeCom(ctx, { throttleMs: 0 });
        await fake.waitFor(() => fake.connected, 5000, "a subscribed connection");
        return liveChannel(
          running,
          (user) => ({ userid: user }),
          async (user, text) => void fake.callback({ userid: user, text }),
        );
      },
      visible: () => fake.visible(),
      // WeCom has no reactions.
      reactions: () => [],
      close: () => fake.stop(),
    };
  },
};

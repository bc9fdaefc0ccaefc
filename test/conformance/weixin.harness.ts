/**
 * Weixin under the channel contract: the real transport and renderer over plain fetch, and the
 * loopback iLink fake. Outbound payloads are every sendmessage body's text as sent, with what a
 * WeChat user reads of it (Markdown rendered away) as the rendered form. iLink sends only with a
 * context token from the peer's latest message, so the configured half has the peer write first.
 */
import { realClock } from "../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import type { MessagingTransport } from "../../src/messaging/channel/transport.js";
import type { AuditSink } from "../../src/messaging/security/audit.js";
import { IlinkClient } from "../../src/weixin/client.js";
import type { WeixinSettings } from "../../src/weixin/index.js";
import { weixinChannel } from "../../src/weixin/index.js";
import { PeerState } from "../../src/weixin/peers.js";
import { PeerPolicy } from "../../src/weixin/policy.js";
import { WeixinRenderer } from "../../src/weixin/renderer.js";
import { start as startWeixin } from "../../src/weixin/start.js";
import { WEIXIN_CAPABILITIES, WeixinTransport } from "../../src/weixin/transport.js";
import { renderVisible } from "../fakes/weixin/render.js";
import { FakeIlink } from "../fakes/weixin/server.js";
import { testChannelContext } from "../helpers/channel-context.js";
import { tempHome } from "../helpers/channel-under-test.js";
import { testDrops } from "../helpers/drops.js";
import type { ChannelHarness, OutboundMessage } from "./contract.js";
import type { DispatcherHarness } from "./dispatcher-contract.js";
import { liveChannel } from "./dispatcher-contract.js";

const OWNER = "conformance1@im.wechat";
let next = 1;

/** A getupdates message as iLink delivers it. */
function envelope(user: string, text: string, opts?: { bot?: boolean }) {
  return {
    message_id: 90_000 + next++,
    from_user_id: user,
    to_user_id: "bot@im.bot",
    message_type: opts?.bot ? 2 : 1,
    message_state: 2,
    item_list: [{ type: 1, text_item: { text } }],
    context_token: `ctx-conf-${next}`,
  };
}

function outboundOf(fake: FakeIlink): OutboundMessage[] {
  return fake.callsTo("sendmessage").map((c) => {
    const msg = c.body?.msg as { item_list?: { text_item?: { text?: string } }[] } | undefined;
    const text = (msg?.item_list ?? []).map((i) => i.text_item?.text ?? "").join("");
    return { text, rendered: [renderVisible(text)], buttons: 0 };
  });
}

export const weixinHarness: ChannelHarness = {
  name: "weixin",
  capabilities: WEIXIN_CAPABILITIES,
  unconfigured: (audit: AuditSink) =>
    new WeixinTransport({
      drops: testDrops(audit, "weixin"),
      audit,
    }) as unknown as MessagingTransport<unknown>,
  async configured(audit: AuditSink) {
    const fake = await FakeIlink.start({ lifetimeMs: 60_000 });
    const logger = new MemoryLogger();
    const client = new IlinkClient({ origin: fake.origin, token: fake.token, timers: realClock });
    const peers = new PeerState({ logger });
    const { contextToken } = fake.push(OWNER, "hello");
    await peers.rememberToken(OWNER, contextToken);
    const transport = new WeixinTransport({
      drops: testDrops(audit, "weixin"),
      audit,
      client,
      policy: new PeerPolicy({ dmPolicy: "allowlist", allowedUserIds: [OWNER] }),
      peers,
      logger,
      sendGapMs: 0,
    });
    return {
      transport: transport as unknown as MessagingTransport<unknown>,
      conversationId: OWNER,
      allowedUser: OWNER,
      envelope,
      newRenderer: () =>
        new WeixinRenderer({
          post: (md) => transport.postMarkdown(OWNER, md),
          now: () => Date.now(),
          logger,
          commands: { new: "`/new`", stop: "`/stop`" },
        }),
      outbound: () => outboundOf(fake),
      close: () => fake.stop(),
    };
  },
};

/** The whole Weixin channel (start()) against the fake: 1:1 chats of the owner and a guest. */
export const weixinDispatcher: DispatcherHarness = {
  name: "weixin",
  buffered: true,
  steerOnly: true,
  queueModes: ["steer"],
  async lab() {
    const fake = await FakeIlink.start({ lifetimeMs: 60_000, holdMs: 200 });
    const home = tempHome("weixin-dispatch");
    const owner = "dispatchowner@im.wechat";
    const guest = "dispatchguest@im.wechat";
    return {
      owner,
      guest,
      async start(shared) {
        const ctx = testChannelContext<WeixinSettings>(weixinChannel, {
          section: { allowedUserIds: [owner, guest], owner },
          env: { WEIXIN_BOT_TOKEN: fake.token, WEIXIN_API_URL: fake.origin, WEIXIN_CDN_URL: fake.cdnUrl },
          home,
          ...shared,
        });
        const running = await startWeixin(ctx, { sendGapMs: 0 });
        return liveChannel(
          running,
          (user) => user,
          async (user, text) => void fake.push(user, text),
        );
      },
      visible: () => fake.visible(),
      // WeChat has no reactions: nothing is ever put on a user's message.
      reactions: () => [],
      close: () => fake.stop(),
    };
  },
};

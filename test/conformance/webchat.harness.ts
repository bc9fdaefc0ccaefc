import type { MessagingTransport } from "../../src/messaging/channel/transport.js";
import type { AuditSink } from "../../src/messaging/security/audit.js";
import { OWNER_PRINCIPAL } from "../../src/webchat/client.js";
import type { WebChatSettings } from "../../src/webchat/index.js";
import { webchatChannel } from "../../src/webchat/index.js";
import { WebChatRenderer } from "../../src/webchat/renderer.js";
import { assembleWebChat } from "../../src/webchat/start.js";
import { WEBCHAT_CAPABILITIES, WebChatTransport } from "../../src/webchat/transport.js";
import { testChannelContext } from "../helpers/channel-context.js";
import { testDrops } from "../helpers/drops.js";
import type { ChannelHarness } from "./contract.js";
import type { DispatcherHarness } from "./dispatcher-contract.js";
import { liveChannel } from "./dispatcher-contract.js";

export const webchatHarness: ChannelHarness = {
  name: "webchat",
  capabilities: WEBCHAT_CAPABILITIES,
  unconfigured: (audit: AuditSink) =>
    new WebChatTransport({
      drops: testDrops(audit, "webchat"),
      audit,
    }) as unknown as MessagingTransport<unknown>,
  async configured(audit: AuditSink) {
    const transport = new WebChatTransport({ drops: testDrops(audit, "webchat"), audit });
    transport.admit("owner", () => {});
    const conversationId = "conformance";
    transport.open(conversationId);
    return {
      transport: transport as unknown as MessagingTransport<unknown>,
      conversationId,
      allowedUser: "owner",
      envelope: (user, text, opts) => ({
        principal: user,
        conversationId,
        text,
        author: opts?.bot ? "bot" : "user",
      }),
      newRenderer: () => new WebChatRenderer(transport, conversationId, { throttleMs: 0 }),
      outbound: () =>
        transport
          .bubbles(conversationId)
          .filter((b) => b.role !== "user")
          .map((b) => ({
            text: b.text,
            rendered: [b.html, b.status ?? "", ...(b.buttons ?? []).map((x) => x.label), ...(b.chips ?? [])],
            buttons: b.chips?.length ?? 0,
          })),
      close: async () => {},
    };
  },
};

/** The web chat's hub and surface over its transport (the server is only the socket around them). */
export const webchatDispatcher: DispatcherHarness = {
  name: "webchat",
  async lab() {
    const transports: WebChatTransport[] = [];
    const conversation = (user: string) => `c-${user}`;
    return {
      owner: OWNER_PRINCIPAL,
      // The token holder is the only principal: nobody else is admitted to be a guest.
      guest: undefined,
      async start(shared) {
        const { transport, hub, frames } = assembleWebChat(
          testChannelContext<WebChatSettings>(webchatChannel, { section: { port: 0 }, ...shared }),
        );
        transport.admit(OWNER_PRINCIPAL, () => {});
        transports.push(transport);
        return liveChannel({ hub, stop: () => hub.shutdown() }, conversation, async (user, text) => {
          transport.open(conversation(user));
          frames.handleFrame(
            { conversationId: conversation(user), principal: user, send: () => {} },
            { type: "message", text },
          );
        });
      },
      visible: () =>
        transports.flatMap((t) =>
          [conversation(OWNER_PRINCIPAL)].flatMap((c) =>
            t
              .bubbles(c)
              .filter((b) => b.role !== "user")
              // One bubble reads as one message: its body with its status line.
              .flatMap((b) => [
                [b.text, b.status ?? ""].join("\n"),
                ...(b.buttons ?? []).map((x) => x.label),
                ...(b.chips ?? []),
              ]),
          ),
        ),
      reactions: () => [],
      close: async () => {},
    };
  },
};

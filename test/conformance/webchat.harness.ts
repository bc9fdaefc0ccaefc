import type { MessagingTransport } from "../../src/messaging/channel/transport.js";
import type { AuditSink } from "../../src/messaging/security/audit.js";
import { WebChatRenderer } from "../../src/webchat/renderer.js";
import { WEBCHAT_CAPABILITIES, WebChatTransport } from "../../src/webchat/transport.js";
import type { ChannelHarness } from "./contract.js";

export const webchatHarness: ChannelHarness = {
  name: "webchat",
  capabilities: WEBCHAT_CAPABILITIES,
  unconfigured: (audit: AuditSink) =>
    new WebChatTransport({ audit }) as unknown as MessagingTransport<unknown>,
  async configured(audit: AuditSink) {
    const transport = new WebChatTransport({ audit });
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

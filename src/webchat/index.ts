/**
 * Registry entry for the web chat: always configured unless disabled (it needs no token), loaded
 * lazily like every channel.
 */
import type { ChannelEntry } from "../gateway/channel.js";

export const webchatChannel: ChannelEntry = {
  name: "webchat",
  docs: "docs/channels/webchat.md",
  configured(config) {
    return config.webchat.enabled ? { status: "configured" } : { status: "disabled" };
  },
  async load() {
    return import("./channel.js");
  },
};

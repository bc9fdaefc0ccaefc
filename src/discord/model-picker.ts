/**
 * Discord's model picker: `!model` posts the agent's model list as buttons on an ordinary channel
 * message (m:<i>), and a press resolves the INDEX against the exact list that message showed. It is
 * button-only and takes no reply sink: the buttons must live on an editable message, which an
 * ephemeral slash reply is not, so `/model` posts the same picker and acknowledges ephemerally.
 * The value is never in the custom_id (100-char cap; Discord replays old ids indefinitely): the
 * TTL-bounded PickerRegistry refuses an expired, evicted or already-used list instead of applying a
 * model from a stale advertisement.
 */

import { PICK_REFUSAL_TEXT, PickerRegistry } from "../messaging/channel/picker.js";
import type { ModelMenu } from "../messaging/session/agent-controls.js";
import { applyModelChoice, loadModelMenu } from "../messaging/session/agent-controls.js";
import type { SessionManager } from "../messaging/session/session-manager.js";
import type { PipelineProvider } from "../messaging/turn/pipeline.js";
import { discordSafe, fitPlatformCap } from "./format.js";
import type { DiscordRest } from "./transport.js";
import { modelRows } from "./widgets.js";

/** Discord renders at most 5 rows of 5 buttons. */
export const MODEL_PICKER_MAX = 25;

export interface ModelPickerOptions {
  rest: Pick<DiscordRest, "createMessage" | "editMessage">;
  sessions: SessionManager<PipelineProvider>;
  now?: () => number;
  ttlMs?: number;
  /** After a switch released the session: messages queued meanwhile must not be stranded. */
  afterSwitch?: (sessionKey: string) => Promise<void>;
}

export function modelPickerText(menu: ModelMenu): string {
  const current = menu.options.find((o) => o.id === menu.current);
  const lines = menu.options.slice(0, MODEL_PICKER_MAX).map((o) => {
    const mark = o.id === menu.current ? " ✓" : "";
    return `- **${o.name}**${mark}${o.description ? `: ${o.description}` : ""}`;
  });
  return [`**Model**: ${current ? current.name : "agent default"}`, ...lines, "-# Pick one below."].join(
    "\n",
  );
}

export class DiscordModelPicker {
  // Each entry remembers the session it was offered for: a resumed chat's picker sets ITS model.
  private readonly registry: PickerRegistry<{ optionId: string; sessionKey: string }>;

  constructor(private readonly o: ModelPickerOptions) {
    this.registry = new PickerRegistry<{ optionId: string; sessionKey: string }>({
      ...(o.ttlMs !== undefined ? { ttlMs: o.ttlMs } : {}),
      ...(o.now ? { now: o.now } : {}),
    });
  }

  /**
   * Post the picker into `channelId` for `owner`. Returns the text to tell the asker when no picker
   * could be posted (no selector, agent failed, send failed), or null when it was posted.
   */
  async post(channelId: string, owner: string, sessionKey: string): Promise<string | null> {
    const loaded = await loadModelMenu(this.o.sessions, sessionKey);
    if (!("menu" in loaded)) return loaded.reply;
    const menu = loaded.menu;
    const shown = menu.options.slice(0, MODEL_PICKER_MAX);
    const [content] = fitPlatformCap(discordSafe(modelPickerText(menu)));
    const res = await this.o.rest.createMessage(channelId, {
      content: content ?? "",
      components: modelRows(shown.map((o) => (o.id === menu.current ? `✓ ${o.name}` : o.name))),
    });
    if (!res.ok) return "Could not post the model picker; try again.";
    // Keyed by the posting itself: a press names its message, and the index is read against it.
    this.registry.offer(res.data.id, {
      owner,
      scope: channelId,
      items: shown.map((o) => ({ optionId: o.id, sessionKey })),
    });
    return null;
  }

  /**
   * A press on m:<index> of message `messageId`. Returns ephemeral text for the presser when the press
   * is refused; on success the picker message itself is edited to the outcome and null is returned.
   */
  async press(channelId: string, messageId: string, index: number, presser: string): Promise<string | null> {
    const pick = this.registry.take(messageId, index, { owner: presser, scope: channelId });
    if (!pick.ok) return PICK_REFUSAL_TEXT[pick.reason];
    const outcome = await applyModelChoice(this.o.sessions, pick.item.sessionKey, pick.item.optionId);
    await this.o.afterSwitch?.(pick.item.sessionKey);
    const [content] = fitPlatformCap(discordSafe(outcome));
    // The buttons go away with the outcome: the list they advertised has been used.
    const res = await this.o.rest.editMessage(channelId, messageId, {
      content: content ?? "",
      components: [],
    });
    return res.ok ? null : outcome;
  }
}

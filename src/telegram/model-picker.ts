/**
 * Telegram's model picker: `/model` posts the agent's model list as one inline button per entry
 * (`m:<i>`, see buttons.ts), and a press resolves the INDEX against the exact list that message
 * showed. The decisions are the shared handlers' (loadModelMenu, applyModelChoice); this file
 * supplies the posting, the registry handle and the edit that retires the buttons.
 *
 * The registry is keyed by chat AND message id (Telegram numbers messages per chat), scoped to the
 * conversation the list was posted in (the chat, or the chat's Topic), owned by the user who asked,
 * and remembers the session key at offer time: a press applies to the session the list was read
 * from.
 */

import type { Logger } from "../messaging/base/logger.js";
import type { PickRefusal } from "../messaging/channel/picker.js";
import { PICK_REFUSAL_TEXT, PickerRegistry } from "../messaging/channel/picker.js";
import type { ModelMenu, ModelOption } from "../messaging/session/agent-controls.js";
import { applyModelChoice, loadModelMenu } from "../messaging/session/agent-controls.js";
import type { SessionManager } from "../messaging/session/session-manager.js";
import { oneLine } from "../messaging/text/clip.js";
import { displaySafeFor } from "../messaging/text/options.js";
import type { PipelineProvider } from "../messaging/turn/pipeline.js";
import { modelKeyboard } from "./buttons.js";
import { escapeHtml, fitTelegramHtml } from "./html.js";
import { TELEGRAM_MAX_MESSAGE_UTF16 } from "./limits.js";
import type { Route } from "./routes.js";
import type { TelegramTransport } from "./transport.js";
import { TELEGRAM_CAPABILITIES } from "./transport.js";

/** Buttons offered (two per row); a longer menu says how many more it did not show. */
export const MODEL_PICKER_MAX = 24;
/** Names and descriptions come from the agent: one line each, bounded. */
const MAX_NAME_CHARS = 60;
const MAX_DESCRIPTION_CHARS = 120;
const MAX_LABEL_CHARS = 40;

export const MODEL_PICKER_POST_FAILED = "Could not post the model picker; try again.";

/** Refusals after which the list is dead for everyone: its buttons should stop inviting presses. */
const DEAD_LIST: ReadonlySet<PickRefusal> = new Set<PickRefusal>(["unknown", "expired", "consumed"]);

export interface TelegramModelPickerOptions {
  transport: Pick<TelegramTransport, "postHtml" | "editHtml" | "clearKeyboard" | "answerCallback">;
  sessions: SessionManager<PipelineProvider>;
  logger: Logger;
  /** Send markdown text into a route (the dispatcher's reply path). */
  reply: (r: Route, text: string) => Promise<void>;
  now?: () => number;
  ttlMs?: number;
  /** After a switch released the session: messages queued meanwhile must not be stranded. */
  afterSwitch?: (sessionKey: string) => Promise<void>;
}

interface Offered {
  optionId: string;
  sessionKey: string;
}

/** The press being answered: the query, and the message (and its route) the button sits on. */
export interface ModelPress {
  queryId: string;
  route: Route;
  messageId: number;
  index: number;
  presser: string;
}

/** The list as the picker shows it: Telegram-HTML, descriptions dropped if they would not fit. */
export function modelPickerHtml(menu: ModelMenu): string {
  const full = pickerHtml(menu, true);
  return full.length <= TELEGRAM_MAX_MESSAGE_UTF16 ? full : pickerHtml(menu, false);
}

function pickerHtml(menu: ModelMenu, withDescriptions: boolean): string {
  const current = menu.options.find((o) => o.id === menu.current);
  const shown = menu.options.slice(0, MODEL_PICKER_MAX);
  const lines = shown.map((o) => {
    const mark = o.id === menu.current ? " ✓" : "";
    const description =
      withDescriptions && o.description ? `: ${safe(o.description, MAX_DESCRIPTION_CHARS)}` : "";
    return `• <b>${nameOf(o)}</b>${mark}${description}`;
  });
  const more = menu.options.length - shown.length;
  return [
    `<b>Model</b>: ${current ? nameOf(current) : "agent default"}`,
    ...lines,
    ...(more > 0 ? [`…and ${more} more not shown`] : []),
    "<i>Pick one below.</i>",
  ].join("\n");
}

/** Button labels: plain text (no HTML on a button), display-safe, bounded; the current one ticked. */
export function modelButtonLabels(menu: ModelMenu): string[] {
  return menu.options.slice(0, MODEL_PICKER_MAX).map((o) => {
    const name = oneLine(displaySafeFor(o.name || o.id, TELEGRAM_CAPABILITIES), MAX_LABEL_CHARS);
    return o.id === menu.current ? `✓ ${name}` : name;
  });
}

export class TelegramModelPicker {
  private readonly registry: PickerRegistry<Offered>;

  constructor(private readonly o: TelegramModelPickerOptions) {
    this.registry = new PickerRegistry<Offered>({
      ...(o.ttlMs !== undefined ? { ttlMs: o.ttlMs } : {}),
      ...(o.now ? { now: o.now } : {}),
    });
  }

  /** Lists offered and not yet expired or evicted (used ones included, until they expire). */
  get offered(): number {
    return this.registry.size;
  }

  /** Post the picker into `r` for `owner`; a plain reply instead when there is nothing to pick. */
  async post(r: Route, owner: string, sessionKey: string): Promise<void> {
    const loaded = await loadModelMenu(this.o.sessions, sessionKey);
    if (!("menu" in loaded)) return this.o.reply(r, loaded.reply);
    const { menu } = loaded;
    let messageId: number;
    try {
      messageId = await this.o.transport.postHtml(r.chatId, modelPickerHtml(menu), {
        threadId: r.threadId,
        replyMarkup: modelKeyboard(modelButtonLabels(menu)),
      });
    } catch (error) {
      this.o.logger.warn("telegram: posting the model picker failed", { error: String(error) });
      return this.o.reply(r, MODEL_PICKER_POST_FAILED);
    }
    // Keyed by the posting itself: a press names its message, and the index is read against it.
    this.registry.offer(handleOf(r.chatId, messageId), {
      owner,
      scope: scopeOf(r),
      items: menu.options.slice(0, MODEL_PICKER_MAX).map((o) => ({ optionId: o.id, sessionKey })),
    });
  }

  /**
   * A press on `m:<index>`. Resolves once the presser is answered (a refusal is shown to them as the
   * callback answer, and nothing is applied), with the apply wrapped in an object so intake does not
   * wait on the agent: on success the picker message is edited to the outcome, without its buttons.
   */
  async press(p: ModelPress): Promise<{ applied: Promise<void> }> {
    // Taken before any await: two quick presses on one list resolve in the order they arrived.
    const pick = this.registry.take(handleOf(p.route.chatId, p.messageId), p.index, {
      owner: p.presser,
      scope: scopeOf(p.route),
    });
    if (!pick.ok) {
      await this.answer(p, PICK_REFUSAL_TEXT[pick.reason]);
      if (DEAD_LIST.has(pick.reason)) await this.clear(p);
      return { applied: Promise.resolve() };
    }
    // The choice is consumed: a failed answer (it only stops the button's spinner) must not lose it.
    await this.answer(p);
    return { applied: this.apply(p, pick.item) };
  }

  private async answer(p: ModelPress, text?: string): Promise<void> {
    await this.o.transport
      .answerCallback(p.queryId, text)
      .catch((error: unknown) =>
        this.o.logger.warn("telegram: answering a model picker press failed", { error: String(error) }),
      );
  }

  private async apply(p: ModelPress, item: Offered): Promise<void> {
    const outcome = await applyModelChoice(this.o.sessions, item.sessionKey, item.optionId);
    try {
      // The buttons go away with the outcome: the list they advertised has been used.
      await this.o.transport.editHtml(p.route.chatId, p.messageId, fitTelegramHtml(outcome)[0] ?? "", {
        inline_keyboard: [],
      });
    } catch (error) {
      this.o.logger.warn("telegram: editing the model picker failed", { error: String(error) });
      await this.clear(p);
      await this.o.reply(p.route, outcome);
    }
    await this.o.afterSwitch?.(item.sessionKey);
  }

  private async clear(p: ModelPress): Promise<void> {
    await this.o.transport
      .clearKeyboard(p.route.chatId, p.messageId)
      .catch((error: unknown) =>
        this.o.logger.debug("telegram: clearing a model picker's keyboard failed", { error: String(error) }),
      );
  }
}

/** Telegram message ids are per chat: the chat is part of the handle. */
function handleOf(chatId: string, messageId: number): string {
  return `${chatId}:${messageId}`;
}

/** Where a list lives: the chat, or for a forum Topic the Topic's route ("{chatId}:{threadId}"). */
function scopeOf(r: Route): string {
  return r.threadId === undefined ? r.chatId : r.route;
}

function nameOf(o: ModelOption): string {
  return safe(o.name || o.id, MAX_NAME_CHARS);
}

/** Agent text for the HTML body: redacted for display, one line, bounded, escaped. */
function safe(text: string, max: number): string {
  return escapeHtml(oneLine(displaySafeFor(text, TELEGRAM_CAPABILITIES), max));
}

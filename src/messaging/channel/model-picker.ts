/**
 * /model, one flow for every channel: `/model <number or name>` switches against the menu the agent
 * advertises NOW; `/model` alone lists it, as buttons where the channel has a picker surface (a
 * press resolves an INDEX against the exact list it was shown, through the PickerRegistry) and as a
 * numbered list otherwise. Every agent-supplied string is made display-safe and one line here, by
 * the core, so no channel can forget it.
 */
import type { Logger } from "../base/logger.js";
import type { ModelMenu, ModelOption } from "../session/agent-controls.js";
import { applyModelChoice, loadModelMenu } from "../session/agent-controls.js";
import type { SessionManager } from "../session/session-manager.js";
import { oneLine } from "../text/clip.js";
import { displaySafe } from "../text/options.js";
import type { PipelineProvider } from "../turn/pipeline.js";
import type { PickRefusal } from "./picker.js";
import { PICK_REFUSAL_TEXT, PickerRegistry } from "./picker.js";
import type { PickerSurface } from "./surface.js";

/** One size rule for every platform: 24 fills Telegram's two-per-row grid and fits Discord's 5x5. */
export const MODEL_PICKER_MAX = 24;
const MAX_NAME_CHARS = 60;
const MAX_DESCRIPTION_CHARS = 120;
const MAX_LABEL_CHARS = 40;
const MAX_ECHO_CHARS = 80;

export const MODEL_PICKER_POST_FAILED = "Could not post the model picker; try again.";

/** Refusals after which a list is dead for everyone: its buttons should stop inviting presses. */
const DEAD_LIST: ReadonlySet<PickRefusal> = new Set<PickRefusal>(["unknown", "expired", "consumed"]);

/** Agent text for chat: display-safe, one line, bounded. */
function safe(text: string, max: number): string {
  return oneLine(displaySafe(text), max);
}

const nameOf = (o: ModelOption) => safe(o.name || o.id, MAX_NAME_CHARS);

/**
 * The list: the current model, then every option numbered with the current one ticked. Descriptions
 * are dropped rather than let the list outgrow one message (`maxChars`, code points).
 */
export function modelListText(menu: ModelMenu, hint: string, maxChars = Number.POSITIVE_INFINITY): string {
  const full = listText(menu, hint, true);
  return Array.from(full).length <= maxChars ? full : listText(menu, hint, false);
}

function listText(menu: ModelMenu, hint: string, withDescriptions: boolean): string {
  const current = menu.options.find((o) => o.id === menu.current);
  const shown = menu.options.slice(0, MODEL_PICKER_MAX);
  const lines = shown.map((o, i) => {
    const mark = o.id === menu.current ? " ✓" : "";
    const about = withDescriptions && o.description ? ` — ${safe(o.description, MAX_DESCRIPTION_CHARS)}` : "";
    return `${i + 1}. **${nameOf(o)}**${mark}${about}`;
  });
  const more = menu.options.length - shown.length;
  return [
    `**Model**: ${current ? nameOf(current) : "agent default"}`,
    ...lines,
    ...(more > 0 ? [`…and ${more} more not shown`] : []),
    "",
    hint,
  ].join("\n");
}

/** Button labels: display-safe, one line, bounded; the current one ticked. */
export function modelButtonLabels(menu: ModelMenu): string[] {
  return menu.options.slice(0, MODEL_PICKER_MAX).map((o) => {
    const name = safe(o.name || o.id, MAX_LABEL_CHARS);
    return o.id === menu.current ? `✓ ${name}` : name;
  });
}

/**
 * `/model <arg>`: digits are a 1-based position in the list; anything else matches an id, then a
 * name, case- and space-insensitively. No single match is a refusal listing the choices.
 */
export function resolveModelArg(
  menu: ModelMenu,
  arg: string,
  hint: string,
): { option: ModelOption } | { reply: string } {
  const wanted = fold(arg);
  const found = /^\d+$/.test(wanted)
    ? menu.options[Number(wanted) - 1]
    : (single(menu.options.filter((o) => fold(o.id) === wanted)) ??
      single(menu.options.filter((o) => fold(o.name) === wanted)));
  if (found) return { option: found };
  return { reply: `No single model matches "${safe(arg, MAX_ECHO_CHARS)}".\n\n${modelListText(menu, hint)}` };
}

const single = <T>(list: readonly T[]): T | undefined => (list.length === 1 ? list[0] : undefined);
const fold = (text: string) => text.replace(/\s+/g, " ").trim().toLowerCase();

interface Offered {
  optionId: string;
  sessionKey: string;
}

export interface ModelPickerOptions {
  sessions: SessionManager<PipelineProvider>;
  logger: Logger;
  /** A switch held the session: messages queued meanwhile run now, not at the next turn. */
  afterSwitch: (sessionKey: string) => Promise<void>;
  now?: () => number;
  ttlMs?: number;
}

export interface ModelRequest {
  sessionKey: string;
  arg: string;
  /** Who may press (the asker) and where the list lives (the conversation's route). */
  owner: string;
  scope: string;
  /** How this channel writes `/model` (for the hint). */
  command: string;
  pickers?: PickerSurface | undefined;
}

export class ModelPicker {
  private readonly offered: PickerRegistry<Offered>;

  constructor(private readonly o: ModelPickerOptions) {
    this.offered = new PickerRegistry<Offered>({
      ...(o.ttlMs !== undefined ? { ttlMs: o.ttlMs } : {}),
      ...(o.now ? { now: o.now } : {}),
    });
  }

  /** Lists posted and not yet expired or evicted. */
  get size(): number {
    return this.offered.size;
  }

  /** Whether this gateway posted list `handle` (still kept, if used or expired): it judges the press. */
  offers(handle: string): boolean {
    return this.offered.has(handle);
  }

  /** `/model [arg]`: the reply text ("" when a picker was posted and is the answer). */
  async command(r: ModelRequest): Promise<string> {
    const loaded = await loadModelMenu(this.o.sessions, r.sessionKey);
    if (!("menu" in loaded)) return loaded.reply;
    const hint = `Send ${r.command.replace(/`$/, " <number or name>`")} to switch.`;
    if (r.arg) {
      const choice = resolveModelArg(loaded.menu, r.arg, hint);
      if (!("option" in choice)) return choice.reply;
      const outcome = await applyModelChoice(this.o.sessions, r.sessionKey, choice.option.id);
      await this.o.afterSwitch(r.sessionKey);
      return outcome;
    }
    if (!r.pickers) return modelListText(loaded.menu, hint);
    const handle = await r.pickers.post(
      modelListText(loaded.menu, "Pick one below.", r.pickers.maxChars),
      modelButtonLabels(loaded.menu),
    );
    if (handle === null) return MODEL_PICKER_POST_FAILED;
    this.offered.offer(handle, {
      owner: r.owner,
      scope: r.scope,
      items: loaded.menu.options
        .slice(0, MODEL_PICKER_MAX)
        .map((o) => ({ optionId: o.id, sessionKey: r.sessionKey })),
    });
    return "";
  }

  /**
   * A press on entry `index` of list `handle`. Resolves as soon as the press is judged: a refusal
   * for the presser (nothing applied), or the switch under way (it may wait on the agent), after
   * which the list is settled to the outcome and its buttons retired.
   */
  async press(
    handle: string,
    index: number,
    who: { presser: string; scope: string },
    pickers: PickerSurface & { retire?(handle: string): Promise<void> },
  ): Promise<{ refusal: string } | { applied: Promise<void> }> {
    // Taken before any await: two quick presses on one list resolve in the order they arrived.
    const pick = this.offered.take(handle, index, { owner: who.presser, scope: who.scope });
    if (!pick.ok) {
      if (DEAD_LIST.has(pick.reason))
        await pickers
          .retire?.(handle)
          .catch((error: unknown) =>
            this.o.logger.debug("retiring a dead list failed", { error: String(error) }),
          );
      return { refusal: PICK_REFUSAL_TEXT[pick.reason] };
    }
    const applied = (async () => {
      const outcome = await applyModelChoice(this.o.sessions, pick.item.sessionKey, pick.item.optionId);
      await this.o.afterSwitch(pick.item.sessionKey);
      await pickers.settle(handle, outcome);
    })();
    return { applied };
  }
}

/**
 * The web chat's `/model`, text-first: the list is a numbered reply, and `/model <number or name>`
 * is resolved against the menu the agent advertises NOW (loaded fresh for every command), so no
 * list the user saw earlier can go stale. Pure functions; the dispatcher does the I/O.
 */
import type { ModelMenu, ModelOption } from "../messaging/session/agent-controls.js";
import { oneLine } from "../messaging/text/clip.js";

/** Agent-supplied text is one line and bounded, so a menu entry cannot break or flood the list. */
const MAX_NAME_CHARS = 80;
const MAX_DESCRIPTION_CHARS = 160;
/** The user's own argument, echoed back in a refusal. */
const MAX_ECHO_CHARS = 80;

export const MODEL_HINT = "Send `/model <number or name>` to switch.";

export type ModelResolution = { option: ModelOption } | { reply: string };

/** "**Model**: X", then the options numbered from 1 with the current one marked, then the hint. */
export function modelListText(menu: ModelMenu): string {
  return `${modelHeader(menu)}\n${numberedOptions(menu)}\n\n${MODEL_HINT}`;
}

/**
 * Resolves `/model <arg>` against `menu`: digits are a 1-based position in the list; anything else
 * is matched case-insensitively against option ids, then names. No match (or an ambiguous name) is a
 * refusal that lists the valid choices.
 */
export function resolveModelArg(menu: ModelMenu, arg: string): ModelResolution {
  const wanted = fold(arg);
  if (/^\d+$/.test(wanted)) {
    const option = menu.options[Number(wanted) - 1];
    return option ? { option } : { reply: refusal(menu, arg) };
  }
  const byId = menu.options.filter((o) => fold(o.id) === wanted);
  if (byId.length === 1) return { option: byId[0] as ModelOption };
  const byName = menu.options.filter((o) => fold(o.name) === wanted);
  if (byName.length === 1) return { option: byName[0] as ModelOption };
  return { reply: refusal(menu, arg) };
}

function refusal(menu: ModelMenu, arg: string): string {
  return `No single model matches "${oneLine(arg, MAX_ECHO_CHARS)}". Choose one of:\n${numberedOptions(menu)}\n\n${MODEL_HINT}`;
}

function modelHeader(menu: ModelMenu): string {
  const current = menu.options.find((o) => o.id === menu.current);
  const name = current ? current.name : (menu.current ?? "agent default");
  return `**Model**: ${oneLine(name, MAX_NAME_CHARS)}`;
}

function numberedOptions(menu: ModelMenu): string {
  return menu.options
    .map((o, i) => {
      const mark = o.id === menu.current ? " ✓" : "";
      const about = o.description ? ` — ${oneLine(o.description, MAX_DESCRIPTION_CHARS)}` : "";
      return `${i + 1}. ${oneLine(o.name, MAX_NAME_CHARS) || oneLine(o.id, MAX_NAME_CHARS)}${mark}${about}`;
    })
    .join("\n");
}

/** Case- and whitespace-insensitive form for matching. */
function fold(text: string): string {
  return text.replace(/\s+/g, " ").trim().toLowerCase();
}

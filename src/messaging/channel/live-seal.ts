/**
 * What a live frame shows and what a semantic seal delivers, decided without I/O: the bodies (fitted to the wire), the footer
 * the last one carries, and the widgets. The end carries the turn-status line; a turn that produced
 * no answer ends with the kit's notice (and the failure's reason) instead of nothing; a seal with
 * nothing to show but the status line puts it where the turn ends. Layer: messaging.
 */
import { splitOptionsTrailer } from "../text/options.js";
import { renderTables } from "../text/tables/index.js";
import type { LiveSurface } from "./live-surface.js";
import { noAnswerNotice, turnStatusLine } from "./render-kit.js";

/** The turn's end, when this seal is it. */
export interface SealEnd {
  stopReason: string;
  error?: string | undefined;
  elapsedMs: number;
  contextUsagePct?: number | undefined;
  /** Closed before its end (no DONE): a notice for nothing said carries no status line of its own. */
  cut?: boolean | undefined;
}

export interface SealInput {
  /** The segment's text as the platform presents it (chip, tables); "" for none. */
  presented: string;
  choices: readonly string[];
  files: number;
  /** The files ride this seal's last message (a surface that uploads with it): there is one, text or not. */
  attach?: boolean | undefined;
  /** Answer text already reached the chat in this turn. */
  answered: boolean;
  /** A turn that shows no status line or notice (a muted or unprompted one). */
  quiet: boolean;
  /** A live message is open (the status line can land on it). */
  liveOpen: boolean;
  end?: SealEnd | undefined;
}

export type SealPlan<W> =
  | { kind: "deliver"; pieces: string[]; footer: string; widgets: W | undefined }
  /** Nothing to seal: the status line (if any) rides the last sealed message or comes alone. */
  | { kind: "status"; footer: string };

export function sealPlan<W>(surface: LiveSurface<W>, s: SealInput): SealPlan<W> {
  const { end } = s;
  const silent = end !== undefined && !s.answered && !s.presented.trim() && !s.choices.length && !s.files;
  const status =
    end && !s.quiet && !(end.cut && silent)
      ? turnStatusLine(end.stopReason, {
          elapsedMs: end.elapsedMs,
          ...(end.contextUsagePct === undefined ? {} : { contextUsagePct: end.contextUsagePct }),
          ...(end.error ? { error: end.error } : {}),
          reasonShown: silent,
        })
      : "";
  const footer = status ? surface.quiet(status) : "";
  let pieces: string[];
  if (!silent) pieces = surface.fit(s.presented, footer);
  else if (s.quiet || !end) pieces = [];
  else
    pieces = surface.fit(
      surface.plain(noAnswerNotice(end.stopReason === "error", surface.commands.new, end.error)),
    );
  // Options apart come after the text and its files (postOptionsApart), never on the text.
  const widgets = s.choices.length && !surface.optionsApart ? surface.options(s.choices) : undefined;
  if (pieces.length === 0) {
    // No text: the end's status line lands on the live message, or on its own after a prompt.
    // Mid-turn the live message is kept for the continuation; files riding it need a message.
    if (widgets) pieces.push(surface.plain("Choose one:"));
    else if ((footer && s.liveOpen) || (s.attach && s.files)) pieces.push("");
    else return { kind: "status", footer };
  }
  return { kind: "deliver", pieces, footer, widgets };
}

/**
 * A live frame: the buffer so far (a partial [OPTIONS trailer hidden, tables left raw until sealed,
 * local file references hidden so no path flashes on screen, then vanishes into an upload) under
 * the chip, and the footer (status line and stall mark). A frame longer than the wire once
 * converted is a preview: its first part is shown (the seal delivers all of it).
 */
export function liveFrame<W>(
  surface: LiveSurface<W>,
  tail: string,
  chip: string,
  footerText: string,
): { body: string; shown: string } {
  const visible = splitOptionsTrailer(tail, { hidePartial: true }).body;
  const hidden = surface.files ? surface.files.hide(visible) : visible;
  const source = hidden.trim() ? chip + hidden : "";
  const footer = footerText ? surface.quiet(footerText) : "";
  const body = source ? (surface.fit(source, footer, true)[0] ?? "") : "";
  return { body, shown: surface.join(body, footer) };
}

/** Canonical source as sealed: tables as the platform shows them (within its fit, when it has one). */
export function presented<W>(surface: LiveSurface<W>, source: string): string {
  return renderTables(source, {
    policy: surface.capabilities.tableMode,
    nativeTables: surface.capabilities.nativeTables,
    fits: surface.tableFits,
  });
}

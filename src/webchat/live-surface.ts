/**
 * The web chat as a LiveSurface: a bubble is markdown text (the transport renders it, redacted,
 * with raw HTML off), a separate plain status line, a prompt's buttons or [OPTIONS:] chips, a role
 * and a `final` flag. The kit's body is one string, so the status line rides in it behind a mark
 * (`quiet` puts it there, `join` keeps it there) and `post`/`edit` take the bubble's fields back
 * out. Post and edit are synchronous; each new bubble is named by the turn's next part key, so a
 * turn resumed after a restart replaces the bubbles its first run had made.
 */
import type { TurnParts } from "../messaging/channel/delivery.js";
import type { LiveMessage, LiveSurface } from "../messaging/channel/live-surface.js";
import { splitMarkdownSafe } from "../messaging/text/split.js";
import type { Bubble, BubbleButton } from "./protocol.js";
import type { BubblePatch, WebChatTransport } from "./transport.js";

/** What a bubble carries beside its text and status: a prompt's buttons, or [OPTIONS:] chips. */
export interface BubbleWidgets {
  buttons?: BubbleButton[];
  chips?: string[];
}

/**
 * Where the status line starts in a body. A control character no text may carry: every string
 * entering the surface is stripped of it, so the one in a body is always the one `quiet` put there.
 */
const STATUS_MARK = "\u001e";
const strip = (text: string) => text.replaceAll(STATUS_MARK, "");

/** Code points of source per bubble: under the 16,000 cap, with room for display redaction's markers. */
export const WEBCHAT_SOURCE_CAP = 15_800;

/** An edit of a bubble the transport no longer holds (it fell off the log): post it anew. */
export class BubbleGoneError extends Error {
  constructor(readonly bubbleId: string) {
    super(`web chat bubble ${bubbleId} no longer exists`);
    this.name = "BubbleGoneError";
  }
}

/** A body's two fields: its markdown text and its status line. */
function fieldsOf(body: string): { text: string; status: string } {
  const at = body.indexOf(STATUS_MARK);
  return at < 0 ? { text: body, status: "" } : { text: body.slice(0, at), status: body.slice(at + 1) };
}

/** A bubble's fields from a message. Open (not final) while it streams or waits on a press. */
function bubbleOf({ body, widgets, quiet, live }: LiveMessage<BubbleWidgets>) {
  const pressable = Boolean(widgets?.buttons?.length);
  // A prompt is an approval bubble and a notice a system one; anything else keeps what it was.
  const role: Bubble["role"] | undefined = pressable ? "approval" : quiet ? "system" : undefined;
  return { ...fieldsOf(body), final: !live && !pressable, role, widgets };
}

export function webchatLiveSurface(
  t: WebChatTransport,
  conversationId: string,
  parts: TurnParts,
): LiveSurface<BubbleWidgets> {
  const max = t.capabilities.maxMessageChars;
  return {
    capabilities: t.capabilities,
    sourceCap: WEBCHAT_SOURCE_CAP,
    commands: { new: "`/new`", stop: "/stop" },
    // Markdown is the page's markup: a notice is shown as written, as it always was.
    plain: strip,
    quiet: (text) => STATUS_MARK + strip(text),
    // The outcome is the prompt's status line; the typed-reply hint goes with the buttons.
    decided: (head, outcome) => head + STATUS_MARK + strip(outcome),
    promptHead: (title, purpose) =>
      `🔐 **Permission needed:** ${strip(title)}${purpose ? `\n\n${strip(purpose)}` : ""}`,
    promptBody: (head, hint) => `${head}\n\n${strip(hint)}`,
    // The status line is its own field: it takes no room from the text.
    fit: (source) => {
      const text = strip(source);
      if (!text) return [];
      return Array.from(text).length <= max ? [text] : splitMarkdownSafe(text, max);
    },
    // A footer is quiet()'s output, already behind its mark.
    join: (body, footer) => body + footer,
    fits: (body) => Array.from(fieldsOf(body).text).length <= max,
    post: async (message) => {
      const { role, widgets, ...fields } = bubbleOf(message);
      const bubble: Omit<Bubble, "id" | "html"> = {
        role: role ?? "assistant",
        ...fields,
        ...(widgets?.buttons?.length ? { buttons: widgets.buttons } : {}),
        ...(widgets?.chips?.length ? { chips: widgets.chips } : {}),
      };
      return t.post(conversationId, bubble, { id: parts.nextKey(), turn: parts.turnId });
    },
    edit: async (id, message) => {
      const { role, widgets, ...fields } = bubbleOf(message);
      const patch: BubblePatch = {
        ...fields,
        buttons: widgets?.buttons ?? [],
        chips: widgets?.chips ?? [],
        ...(role ? { role } : {}),
      };
      if (!t.edit(conversationId, id, patch)) throw new BubbleGoneError(id);
    },
    refused: (error) => error instanceof BubbleGoneError,
    options: (choices) => ({ chips: [...choices] }),
    approval: (requestId, nonce, options) => {
      const buttons = options
        .slice(0, Math.max(0, t.capabilities.maxButtons))
        .map((o) => ({ label: o.label, verdict: o.verdict, requestId, nonce }));
      return buttons.length
        ? { widgets: { buttons }, shown: buttons }
        : { widgets: undefined, shown: options };
    },
    noWidgets: { buttons: [], chips: [] },
  };
}

/**
 * The LiveSurface port: what one editing platform brings to the kit's LiveRenderer. Only the
 * operations a platform really differs in: post, edit, its widgets (keyboards, buttons, chips), its
 * markup (escaping, the quiet line, how a body and its footer join), its wire limit, typing, and
 * outbound files. The turn itself (segments, seals, throttle, stall marks, prompts, the footer)
 * is the kit's. Layer: messaging.
 */
import { oneLine } from "../text/clip.js";
import { displaySafeFor } from "../text/options.js";
import type { GridFits } from "../text/tables/index.js";
import type { PromptOption } from "../turn/renderer.js";
import type { TransportCapabilities } from "./capabilities.js";
import type { LiveReactions } from "./live-decor.js";
import type { LiveTyping } from "./live-pacing.js";
import type { LiveStream } from "./live-stream.js";
import { typedReplyHint } from "./render-kit.js";

/** Longest tool title (and purpose) a prompt repeats, in code points. */
const MAX_TITLE_CHARS = 200;
const MAX_PURPOSE_CHARS = 400;

/** One message as the platform carries it: its body (footer joined in) and its widgets. */
export interface LiveMessage<W> {
  body: string;
  /** The widgets on it. On a post: none when absent. On an edit: absent leaves none (cleared). */
  widgets?: W | undefined;
  /** A notice (fresh session, compaction receipt): no notification where possible, shown as a notice. */
  quiet?: boolean;
  /** A live frame (still streaming): a platform that marks a message finished leaves this one open. */
  live?: boolean;
  /**
   * The files this message carries (a LiveFiles without `send`), uploaded with it; `footer` is what
   * ends its body (the status line), so what a failed upload restores as text goes above it.
   */
  files?: { items: readonly unknown[]; footer: string } | undefined;
}

/** What a prompt asks about: the tool's title and purpose ("" for none), clipped and display-safe. */
export interface PromptAbout {
  title: string;
  /** "" when the agent gave none. */
  purpose: string;
}

/** The files a sealed segment names, as one platform sends them. */
export interface LiveFiles {
  /** Hide local file references in a live preview (so no path flashes on screen, then vanishes). */
  hide(source: string): string;
  /** Take the files out of a sealed segment's source; the text left, and what to send. */
  extract(source: string): Promise<{ text: string; files: readonly unknown[] }>;
  /**
   * Send them after the text (a failure says so in the chat itself): whether anything landed, and
   * whether something was lost (not even the failure's note landed). Absent: they ride the seal's
   * last message instead (LiveMessage.files), a platform that uploads a message's files with it.
   */
  send?(files: readonly unknown[]): Promise<{ landed: boolean; lost: boolean }>;
}

export interface LiveSurface<W> {
  readonly capabilities: TransportCapabilities;
  /** Code points of source per message: the streaming splitter's cap. */
  readonly sourceCap: number;
  /** The commands as this channel spells them (notices, the live status line). */
  readonly commands: { new: string; stop: string };
  /** Plain text as a body of this platform's markup (escaped). */
  plain(text: string): string;
  /** The quiet line (live status, turn status) in this platform's markup. */
  quiet(text: string): string;
  /**
   * A decided prompt: its head with the outcome written under it (its widgets then cleared); or,
   * for a surface whose prompt is one whole message (a card, see `approval`), that message decided.
   */
  decided(head: string, outcome: string, title: string, purpose: string): string | LiveMessage<W>;
  /** A prompt's head: the tool's title (and purpose, when given), both plain and display-safe. */
  promptHead(title: string, purpose: string): string;
  /** A prompt's whole body: its head and the typed-reply hint. */
  promptBody(head: string, hint: string): string;
  /**
   * Canonical markdown (tables already presented) as bodies that each fit the wire; with a `footer`
   * (even an empty one: the separator), the last leaves room for it joined under. [] for nothing.
   * `live`: a frame of an answer still arriving (an unfinished construct may be hidden).
   */
  fit(source: string, footer?: string, live?: boolean): string[];
  /** A body and its footer as one message (either may be empty). */
  join(body: string, footer: string): string;
  /** Whether one whole body fits the wire (in the platform's own unit). */
  fits(body: string): boolean;
  /**
   * Whether a table's grid fits one message: one that does not is shown as cards, or left raw when
   * no card can show it. Absent: grids are kept whatever their size.
   */
  tableFits?: GridFits | undefined;
  /** Create a message; its id, or null when it did not land. Throws on a failure worth a log line. */
  post(message: LiveMessage<W>): Promise<string | null>;
  /** Edit a message this turn holds. Throws when the platform did not take it. */
  edit(id: string, message: LiveMessage<W>): Promise<void>;
  /**
   * The platform itself refused an edit (the message is gone, or cannot be edited): only then is a
   * new message posted instead. A network failure (already retried) may have edited it: posting
   * again would show the answer twice.
   */
  refused(error: unknown): boolean;
  /** [OPTIONS:] choices as this platform's widgets. */
  options(choices: readonly string[]): W;
  /**
   * [OPTIONS:] go in a message of their own after the text and its files (its body empty), for a
   * platform whose message cannot carry text and widgets both. Absent: on the last sealed message.
   */
  readonly optionsApart?: boolean;
  /**
   * An approval prompt's widgets (none when it cannot carry them) and the choices they show;
   * `title` is the tool's, as the head shows it (a card that names the tool itself), and `purpose`
   * (or "") too, for widgets that carry the whole prompt (a card, which is then the message).
   */
  approval(
    requestId: string,
    nonce: string,
    options: readonly PromptOption[],
    title: string,
    purpose: string,
  ): { widgets: W | undefined; shown: readonly Pick<PromptOption, "verdict">[] };
  /** The widgets of a decided prompt (an empty set, so nothing on it looks pressable). */
  readonly noWidgets: W;
  /** "Typing…", re-sent this often while the agent works (it expires on the platform). */
  typing?: LiveTyping | undefined;
  /** Local images named by the answer, uploaded after the text. */
  files?: LiveFiles | undefined;
  /** The phase-reaction ladder on the message the turn answers (absent: none). */
  reactions?: LiveReactions | undefined;
  /** The reasoning preview (redacted, clipped plain text) as this platform's body. */
  thinking?(preview: string): string;
  /** A native stream for the live message (absent: the live message is edited; never on a resumed turn). */
  stream?: LiveStream<W> | undefined;
  /** The platform's own status line (a thread's "is thinking…"): each frame's footer, "" to clear it. */
  status?(line: string): Promise<void>;
  /**
   * The live message must be written now even unchanged: the platform closes it soon (a stream
   * with a lifetime), and the surface seals it and continues in a new one. Absent: never.
   */
  expiring?(): boolean;
}

/** An approval prompt as the surface shows it: its head (kept for the outcome), body and widgets. */
export function promptMessage<W>(
  surface: LiveSurface<W>,
  options: readonly PromptOption[],
  requestId: string,
  context: { toolTitle: string; toolPurpose: string; nonce: string },
): { head: string; about: PromptAbout; body: string; widgets: W | undefined } {
  const safe = (text: string, max: number) => displaySafeFor(oneLine(text, max), surface.capabilities);
  const about = {
    title: safe(context.toolTitle || "a tool", MAX_TITLE_CHARS),
    purpose: context.toolPurpose ? safe(context.toolPurpose, MAX_PURPOSE_CHARS) : "",
  };
  const head = surface.promptHead(about.title, about.purpose);
  const { widgets, shown } = surface.approval(requestId, context.nonce, options, about.title, about.purpose);
  const body = surface.promptBody(head, typedReplyHint(shown, widgets !== undefined));
  return { head, about, body, widgets };
}

/**
 * A decided prompt as the edit that writes its outcome onto it (nothing pressable left), and the
 * message posted instead should the prompt refuse that edit.
 */
export function decidedMessages<W>(
  surface: LiveSurface<W>,
  prompt: { head: string; about: PromptAbout },
  outcome: string,
): { edit: LiveMessage<W>; post: LiveMessage<W> } {
  const decided = surface.decided(prompt.head, outcome, prompt.about.title, prompt.about.purpose);
  if (typeof decided !== "string") return { edit: decided, post: decided };
  return { edit: { body: decided, widgets: surface.noWidgets }, post: { body: decided } };
}

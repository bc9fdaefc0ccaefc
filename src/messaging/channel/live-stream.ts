/**
 * The LiveRenderer's native-stream path, for a platform whose live message is a stream: text is
 * appended and can never be taken back (Slack's chat.startStream / appendStream / stopStream). So
 * only SETTLED text reaches it (whole lines the splitter will keep in this message, with an
 * [OPTIONS: trailer, a local file reference and a table still growing held back), tool calls ride
 * it as task rows, and a seal closes it in the stream's own form. A platform that refuses a stream
 * (before anything was shown) leaves the rest of the turn to the edit path. Layer: messaging.
 */
import { protectedRefSpans } from "../files/outbound-files.js";
import { splitOptionsTrailer } from "../text/options.js";
import type { ToolChange } from "../turn/renderer.js";
import type { LiveCalls } from "./live-calls.js";
import type { ReasoningPreview } from "./live-status.js";
import type { LiveMessage, LiveSurface } from "./live-surface.js";

/** A tool call as a row of the stream's timeline (its title as the agent gave it, redacted). */
export interface LiveTask {
  id: string;
  title: string;
  status: "in_progress" | "completed" | "failed";
}

/** One streamed message. Nothing is sent until it has something to show. */
export interface LiveStreamMessage<W> {
  /** Show `text` (this message's settled lines so far, chip included: it only grows) and `tasks`. */
  append(text: string, tasks: readonly LiveTask[]): Promise<boolean>;
  /** Close it as `body` (the stream form's, footer joined) with `widgets`: its id, or null. */
  seal(body: string, widgets: W | undefined, tasks: readonly LiveTask[]): Promise<string | null>;
  /** The platform refused to stream at all (nothing was shown): the turn goes on by editing. */
  readonly refused: boolean;
}

export interface LiveStream<W> {
  /** How a streamed message reads when sealed: its bodies, footer, notices and options, the stream's way. */
  readonly form: Pick<LiveSurface<W>, "fit" | "join" | "quiet" | "plain" | "optionsApart">;
  open(): LiveStreamMessage<W>;
}

/**
 * Where the settled text of `text` ends: at a line start before anything the seal may still change:
 * an [OPTIONS: trailer (complete or arriving: it becomes widgets), a local file reference and all
 * after it (it may be uploaded instead), and a trailing run of table rows (a table is presented whole).
 */
export function settledCut(text: string): number {
  let cut = text.lastIndexOf("\n") + 1;
  cut = Math.min(cut, splitOptionsTrailer(text, { hidePartial: true }).body.length);
  for (const [start] of protectedRefSpans(text)) cut = Math.min(cut, start);
  cut = Math.min(cut, pipeRunStart(text.slice(0, cut)));
  // Back to a line start: only whole lines are settled.
  return text.lastIndexOf("\n", cut - 1) + 1;
}

/**
 * What of the message being filled may be appended now, as whole lines (each with its line break):
 * the settled lines of what the splitter has `committed` to this message, with the blank lines
 * after it (they say its last line is finished: a table row followed by one has no row to come).
 */
export function settledText(tail: string, committed: string): string {
  if (!committed.trim()) return "";
  let end = committed.length;
  while (end < tail.length && tail.charAt(end).trim() === "") end++;
  return tail.slice(0, Math.min(settledCut(tail), tail.lastIndexOf("\n", end - 1) + 1));
}

/** Where a trailing run of pipe-bearing lines starts in `text` (which ends at a line break). */
function pipeRunStart(text: string): number {
  let start = text.length;
  while (start > 0) {
    const prev = text.lastIndexOf("\n", start - 2) + 1;
    if (!text.slice(prev, start).includes("|")) break;
    start = prev;
  }
  return start;
}

/** The stream's state for one turn: the open message, the task rows waiting, and a refusal. */
export class LiveStreamPath<W> {
  private readonly stream: LiveStream<W> | undefined;
  private message: LiveStreamMessage<W> | null = null;
  private readonly pending: LiveTask[] = [];
  private readonly tasks = new Map<string, LiveTask>();
  private refused = false;
  /** The surface read in the stream's form (absent a stream: the surface itself). */
  private readonly streamForm: LiveSurface<W>;

  constructor(
    private readonly surface: LiveSurface<W>,
    private readonly calls: LiveCalls<W>,
    /** Posted, once, before the first stream opens: the reasoning goes ahead of the answer. */
    private readonly reasoning: ReasoningPreview,
  ) {
    this.stream = surface.stream;
    this.streamForm = this.stream ? Object.assign(Object.create(surface), this.stream.form) : surface;
  }

  /** The turn streams (a stream is offered and was not refused). */
  get on(): boolean {
    return this.stream !== undefined && !this.refused;
  }

  /** A streamed message is open (the end's status line can close it). */
  get open(): boolean {
    return this.on && this.message !== null;
  }

  /** What seals read: the stream's form while the turn streams, else the surface's own. */
  get form(): LiveSurface<W> {
    return this.on ? this.streamForm : this.surface;
  }

  /** Each call completes the one before it (the uniform tool-call semantics). */
  toolCalled(id: string, title: string): void {
    if (!this.on) return;
    for (const t of this.tasks.values())
      if (t.status === "in_progress") this.task({ ...t, status: "completed" });
    this.task({ id, title, status: "in_progress" });
  }

  toolChanged(id: string, change: ToolChange): void {
    const known = this.tasks.get(id);
    if (!known || !this.on) return;
    const status = change.status === "completed" || change.status === "failed" ? change.status : known.status;
    this.task({ ...known, title: change.title || known.title, status });
  }

  /**
   * A live frame on the stream: what settled since the last one, and the task rows; whether answer
   * text was shown. Null when the turn does not stream (or the platform just refused it): the edit
   * path renders the frame.
   */
  async frame(tail: string, committed: string, chip: string): Promise<boolean | null> {
    if (!this.on) return null;
    const settled = settledText(tail, committed);
    const text = settled ? chip + settled : "";
    if (!text && !this.pending.length) return false;
    const message = await this.opened();
    const shown = await message.append(text, this.pending.splice(0));
    if (message.refused) return this.refuse();
    return shown && text !== "";
  }

  /**
   * A sealed message: on the stream while the turn streams, else by `edited` (the edit path). Its
   * id, or null. A stream the platform refused showed nothing: what it was to hold goes by the edit
   * path, re-fitted in the surface's own form (its markup and its display floor, never the stream's).
   */
  async send(
    message: LiveMessage<W>,
    edited: (message: LiveMessage<W>) => Promise<string | null>,
  ): Promise<string | null> {
    if (!this.on) return edited(message);
    const live = await this.opened();
    this.message = null;
    const id = await live.seal(message.body, message.widgets, this.pending.splice(0));
    if (live.refused) {
      this.refuse();
      const bodies = this.surface.fit(message.body);
      // Options the surface keeps apart follow the seal on their own (postOptionsApart).
      const widgets = this.surface.optionsApart ? undefined : message.widgets;
      let last: string | null = null;
      for (const [i, body] of bodies.entries())
        last = await edited({ body, widgets: i === bodies.length - 1 ? widgets : undefined });
      return last;
    }
    if (id === null && message.body) this.calls.failed();
    return id;
  }

  /** The end's status line with nothing left to seal, alone in a message of the stream; false when not streaming. */
  async sealAlone(footer: string): Promise<boolean> {
    if (!this.on) return false;
    await this.send({ body: footer }, (message) => this.calls.post(message));
    return true;
  }

  /** A semantic seal left the stream open (it showed only task rows): it closes here. */
  async end(): Promise<void> {
    if (this.open) await this.send({ body: "" }, async () => null);
  }

  /** The platform's own status line, when it has one ("" clears it). */
  async status(line: string): Promise<void> {
    await this.surface.status?.(line);
  }

  private task(task: LiveTask): void {
    this.tasks.set(task.id, task);
    this.pending.push(task);
  }

  /** The open message, or a new one (only while the turn streams). */
  private async opened(): Promise<LiveStreamMessage<W>> {
    if (this.message) return this.message;
    await this.calls.reasoning(this.reasoning.take());
    this.message = (this.stream as LiveStream<W>).open();
    return this.message;
  }

  /** Refused: the rest of the turn is edited (what waited for the stream goes with it). */
  private refuse(): null {
    this.refused = true;
    this.message = null;
    this.pending.length = 0;
    return null;
  }
}

/**
 * WebChatTransport: the web chat as a MessagingTransport. The page's socket is authenticated by the
 * per-start token, so the token holder is the one principal; an unconfigured transport (no server,
 * no token) authorizes nobody. Bubbles are kept per conversation so a reconnect restores the chat.
 */
import { defineCapabilities } from "../messaging/channel/capabilities.js";
import type {
  InboundAttachment,
  InboundMessage,
  ResolvedTarget,
  TransportOptions,
} from "../messaging/channel/transport.js";
import { inboundMessage, MessagingTransport, type SendOptions } from "../messaging/channel/transport.js";
import { redactForDisplay } from "../messaging/security/display-safety.js";
import type { TranscriptLine } from "../messaging/store/port.js";
import { oneLine } from "../messaging/text/clip.js";
import { renderMarkdown } from "./markdown.js";
import type { Bubble, ServerFrame } from "./protocol.js";

/** What the server hands the transport for one inbound frame. */
export interface WebChatEnvelope {
  principal: string;
  conversationId: string;
  text: string;
  /** Only "user" frames are turns; anything relayed back from our own output is "bot". */
  author: "user" | "bot";
  /**
   * Descriptors of the files the frame carried. The bytes came inline in the same frame, so `ref`
   * only names their position in it; the dispatcher hands the bytes themselves to the turn.
   */
  attachments?: InboundAttachment[];
}

export const WEBCHAT_CAPABILITIES = defineCapabilities({
  streaming: true,
  edit: true,
  reactions: false,
  filesInbound: true,
  filesOutbound: false,
  richBlocks: true,
  threads: false,
  tableMode: "native",
  nativeTables: true,
  maxMessageChars: 16_000,
  maxButtons: 5,
  // The page parses no broadcast-mention grammar; defanging would only mangle addresses.
  mentionGrammars: false,
  supportsProactiveSend: true,
  returnsMessageId: true,
});

/** A user-chosen file name as a bubble shows it: one line, bounded, redacted like any text. */
function displayFileName(name: string): string {
  return redactForDisplay(oneLine(name, 80) || "file").text;
}

/** Bubbles kept per conversation; older ones fall off (the transcript keeps the history). */
const MAX_BUBBLES = 500;

export type BubblePatch = Partial<Omit<Bubble, "id" | "html">>;

/** A bubble as this process keeps it: when it was made, and which turn made it (if any). */
interface Logged {
  bubble: Bubble;
  at: number;
  turn?: string;
}

/** How a new bubble is named: a stable id (a turn's part key) replaces the bubble it names. */
export interface PostOptions {
  id?: string;
  /** The turn it belongs to: the history shown after a reload leaves that turn's lines to it. */
  turn?: string;
}

export class WebChatTransport extends MessagingTransport<WebChatEnvelope> {
  readonly channelType = "webchat";
  override readonly capabilities = WEBCHAT_CAPABILITIES;
  private readonly principals = new Set<string>();
  private readonly logs = new Map<string, Logged[]>();
  /** When each conversation last had a bubble posted or a page opened. */
  private readonly touched = new Map<string, number>();
  private seq = 0;
  private push: (conversationId: string, frame: ServerFrame) => void = () => {};
  /** Stamps each bubble, so a reloaded page sees history and live bubbles in time order. */
  private readonly now: () => number;

  constructor(
    options: TransportOptions & {
      push?: (conversationId: string, frame: ServerFrame) => void;
      now?: () => number;
    },
  ) {
    super(options);
    if (options.push) this.push = options.push;
    this.now = options.now ?? Date.now;
  }

  /** The server calls this once it holds a token: the token holder becomes the one principal. */
  admit(principal: string, push: (conversationId: string, frame: ServerFrame) => void): void {
    this.principals.add(principal);
    this.push = push;
  }

  /** A page opened this conversation: it now exists as a destination. */
  open(conversationId: string): void {
    this.touched.set(conversationId, this.now());
    this.logOf(conversationId);
  }

  private logOf(conversationId: string): Logged[] {
    let log = this.logs.get(conversationId);
    if (!log) {
      log = [];
      this.logs.set(conversationId, log);
    }
    return log;
  }

  /**
   * What a page that (re)connects is shown: the conversation's history from before this process
   * (its transcript lines), then what this process posted, in time order. A turn this process
   * rendered shows as rendered, so its transcript lines are left out (no message twice).
   */
  snapshot(conversationId: string, history: readonly TranscriptLine[]): Bubble[] {
    const log = this.logOf(conversationId);
    const shown = new Set(log.flatMap((l) => (l.turn ? [`${l.turn}:${l.bubble.role}`] : [])));
    const earlier: Logged[] = [];
    for (const line of history) {
      const role = line.entry.kind === "user" ? "user" : line.entry.kind === "agent" ? "assistant" : null;
      if (role === null || (line.turnId && shown.has(`${line.turnId}:${role}`))) continue;
      const entry = line.entry as { text: string; attachments?: string[] };
      const bubble: Bubble = {
        id: `h${line.id}`,
        role,
        ...this.render(entry.text),
        final: true,
        ...(entry.attachments?.length ? { files: entry.attachments.map(displayFileName) } : {}),
      };
      earlier.push({ bubble, at: line.atMs });
    }
    return [...earlier, ...log].sort((a, b) => a.at - b.at).map((l) => l.bubble);
  }

  protected isBotAuthored(raw: WebChatEnvelope): boolean {
    return raw.author !== "user";
  }

  protected normalize(raw: WebChatEnvelope): InboundMessage | null {
    return inboundMessage({
      channelType: this.channelType,
      userId: raw.principal,
      conversationId: raw.conversationId,
      text: raw.text,
      ...(raw.attachments?.length ? { attachments: raw.attachments } : {}),
    });
  }

  authorize(message: InboundMessage): boolean {
    return this.principals.has(message.userId);
  }

  override maySendTo(
    conversationId: string,
    _threadId: string | undefined,
    _opts: { principal: string },
  ): boolean {
    return this.principals.size > 0 && this.logs.has(conversationId);
  }

  /** The token holder is the one principal: the owner is reached in the conversation touched last. */
  override ownerTarget(): ResolvedTarget | null {
    if (this.principals.size === 0) return null;
    let latest: [string, number] | null = null;
    for (const entry of this.touched) if (!latest || entry[1] >= latest[1]) latest = entry;
    return latest ? { conversationId: latest[0] } : null;
  }

  async sendMessage(
    conversationId: string,
    content: string,
    _threadId?: string,
    options: SendOptions = {},
  ): Promise<string> {
    if (!this.logs.has(conversationId)) return "";
    // parley's own notice is a system bubble: the page never shows it as the agent speaking.
    const role = options.notice ? "system" : "assistant";
    return this.post(conversationId, { role, text: content, final: true });
  }

  /** Display-form redaction, then markdown-it with raw HTML off: the one render path of every bubble. */
  private render(text: string): { text: string; html: string } {
    const safe = redactForDisplay(text).text;
    return { text: safe, html: renderMarkdown(safe) };
  }

  /** Create a bubble (or replace the one its stable id names); returns its id. */
  post(conversationId: string, bubble: Omit<Bubble, "id" | "html">, opts: PostOptions = {}): string {
    const log = this.logOf(conversationId);
    this.touched.set(conversationId, this.now());
    const id = opts.id ?? `b${++this.seq}`;
    const rendered = this.render(bubble.text);
    const full: Bubble = {
      ...bubble,
      ...rendered,
      id,
      ...(bubble.status ? { status: redactForDisplay(bubble.status).text } : {}),
      ...(bubble.files ? { files: bubble.files.map(displayFileName) } : {}),
    };
    const entry: Logged = { bubble: full, at: this.now(), ...(opts.turn ? { turn: opts.turn } : {}) };
    const existing = opts.id === undefined ? -1 : log.findIndex((l) => l.bubble.id === id);
    if (existing >= 0) log[existing] = { ...entry, at: (log[existing] as Logged).at };
    else log.push(entry);
    if (log.length > MAX_BUBBLES) log.splice(0, log.length - MAX_BUBBLES);
    this.push(conversationId, { type: "upsert", bubble: full });
    return id;
  }

  /** Edit a bubble in place; false when it no longer exists. */
  edit(conversationId: string, id: string, patch: BubblePatch): boolean {
    const log = this.logs.get(conversationId);
    const index = log?.findIndex((l) => l.bubble.id === id) ?? -1;
    if (!log || index < 0) return false;
    const current = log[index] as Logged;
    const next: Bubble = { ...current.bubble, ...patch };
    if (patch.text !== undefined) Object.assign(next, this.render(patch.text));
    if (patch.status !== undefined) next.status = redactForDisplay(patch.status).text;
    log[index] = { ...current, bubble: next };
    this.push(conversationId, { type: "upsert", bubble: next });
    return true;
  }

  /** Show a conversation's name on its pages: one line, bounded, redacted like any text. */
  retitle(conversationId: string, title: string): string {
    const shown = redactForDisplay(oneLine(title, 80)).text;
    this.push(conversationId, { type: "title", title: shown });
    return shown;
  }

  /**
   * Forget conversations no page has open and nothing has touched for `idleMs`: memory is bounded by
   * what people use, not by every id a page ever made up. Returns how many were dropped.
   */
  pruneIdle(isOpen: (conversationId: string) => boolean, now: number, idleMs: number): number {
    let dropped = 0;
    for (const [conversationId, at] of [...this.touched]) {
      if (isOpen(conversationId) || now - at < idleMs) continue;
      this.logs.delete(conversationId);
      this.touched.delete(conversationId);
      dropped += 1;
    }
    return dropped;
  }

  bubbles(conversationId: string): readonly Bubble[] {
    return (this.logs.get(conversationId) ?? []).map((l) => l.bubble);
  }
}

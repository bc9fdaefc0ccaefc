/**
 * Channel-server mode, the hub's side (hub.ts; the contract is turn-sink.ts): an authorized message
 * goes to the agent host instead of an agent turn, and the host reaches back into the conversation
 * through the channel's own renderer: its words relayed as they are, its approval prompts asked with
 * the same widget, nonce, typed floor and timeout as a turn's. It owns the prompts a host has open;
 * the hub keeps routing, presses and shutdown, and asks it which renderer shows a host's prompt.
 */
import type { ApprovalVerdict, ChannelApprovals } from "../approval/approvals.js";
import type { JsonValue } from "../store/port.js";
import type { Renderer } from "../turn/renderer.js";
import { DONE, PROMPT_CHOICE, TEXT_CHUNK } from "../turn/renderer.js";
import { PromptNotShownError, presentPrompt, tellPromptNotShown } from "../turn/unshown.js";
import type { ChannelContext } from "./contract.js";
import type { ConversationKeys } from "./conversation-keys.js";
import { TurnParts } from "./delivery.js";
import type { TicketWork } from "./journal.js";
import type { ApprovalOutcome } from "./press-forwarding.js";
import { approvalOutcomeLabel } from "./render-kit.js";
import type { ChannelSurface, Dispatched, IncomingMessage, OutboundFilePolicy } from "./surface.js";
import type { SinkApproval, SinkConversation, TurnSink } from "./turn-sink.js";

export interface SinkBridgeOptions<A, P> {
  sink: TurnSink;
  surface: ChannelSurface<A, P>;
  ctx: Pick<ChannelContext, "name" | "audit" | "logger" | "clock" | "durable">;
  keys: ConversationKeys<A>;
  tickets: TicketWork;
  approvals: ChannelApprovals;
  /** The upload policy of a session's turns, held to for the host's files too. */
  outboundFiles(key: string): OutboundFilePolicy;
  /** The hub's press (a host answering its own prompt is judged like a person's press). */
  press(
    address: A,
    p: { requestId: string; nonce: string | null; verdict: ApprovalVerdict },
  ): Promise<ApprovalOutcome>;
  /** The hub's in-flight work (a shutdown waits for it). */
  track<T>(p: Promise<T>): Promise<T | undefined>;
}

export class SinkBridge<A, P> {
  private readonly channel: string;
  /** Approval prompts asked for an agent host, by `<key>:<requestId>`: their renderer and nonce. */
  private readonly prompts = new Map<string, { renderer: Renderer; nonce: string }>();

  constructor(private readonly o: SinkBridgeOptions<A, P>) {
    this.channel = o.ctx.name;
    o.sink.attach(this.channel, (address) => this.conversation(address as unknown as A));
  }

  /** The channel's commands the agent host answers (the rest are refused in this mode). */
  hasCommand(name: string): boolean {
    return this.o.sink.commands.has(name);
  }

  /** The renderer showing a host's open prompt, if this is one. */
  promptRenderer(key: string, requestId: string): Renderer | undefined {
    return this.prompts.get(`${key}:${requestId}`)?.renderer;
  }

  /** The sessions with a host's prompt open (a shutdown denies them). */
  promptSessions(): string[] {
    return [...this.prompts.keys()].map((id) => id.slice(0, id.lastIndexOf(":")));
  }

  /**
   * An authorized message to the agent host. Its tickets are completed once the sink holds it
   * durably; when it cannot, they stay unfinished and a restart offers the message again.
   */
  async take(key: string, message: IncomingMessage<A, P>, text: string): Promise<Dispatched> {
    const { logger } = this.o.ctx;
    const taken: Parameters<TurnSink["take"]>[0] = {
      channel: this.channel,
      conversation: this.o.surface.conversation(message.address),
      address: message.address as unknown as JsonValue,
      sessionKey: key,
      userId: message.userId,
      text,
      attachments: message.attachments ?? [],
      atMs: this.o.ctx.clock.now(),
      ...(message.messageId !== undefined ? { messageId: message.messageId } : {}),
    };
    const tickets = message.tickets ?? [];
    await this.o.tickets.claim(tickets);
    let pushed: Promise<boolean>;
    try {
      if (await this.o.sink.intercept?.(taken)) pushed = Promise.resolve(true);
      else pushed = (await this.o.sink.take(taken)).pushed;
    } catch (error) {
      logger.error(`${this.channel}: the agent host could not take a message`, { error: String(error) });
      return { turn: Promise.resolve(), took: true };
    }
    const settled = pushed.then(
      async (ok) => {
        if (ok) await this.o.tickets.finish(tickets, "answered");
      },
      (error: unknown) =>
        logger.error(`${this.channel}: pushing a message to the agent host failed`, {
          error: String(error),
        }),
    );
    return { turn: this.o.track(settled), took: true };
  }

  /** One conversation as the sink reaches back into it. */
  private conversation(address: A): SinkConversation {
    const conversation = this.o.surface.conversation(address);
    const key = this.o.keys.keyOf(address);
    const fresh = (parts: TurnParts, files = this.o.outboundFiles(key)): Renderer => {
      const renderer = this.o.surface.newRenderer(address, { sessionKey: key, files, extras: [], parts });
      // A relay: the host's words, not a turn of ours (no status line, no "no answer" notice).
      renderer.quiet = true;
      return renderer;
    };
    return {
      conversation,
      sessionKey: key,
      capabilities: fresh(TurnParts.unrecorded()).capabilities,
      render: async (text, opts) => {
        const { durable } = this.o.ctx;
        const parts = durable
          ? await TurnParts.open(durable.state.deliveries, opts.turnId, {
              channel: this.channel,
              logger: this.o.ctx.logger,
              audit: this.o.ctx.audit,
            })
          : TurnParts.unrecorded(opts.turnId);
        const renderer = fresh(parts, opts.files);
        try {
          await renderer.dispatch({ kind: TEXT_CHUNK, text });
          await renderer.dispatch({ kind: DONE, stopReason: "end_turn" });
        } finally {
          await renderer.close();
        }
        return !renderer.deliveryFailed;
      },
      ask: (request, signal) => this.ask(address, key, request, signal, fresh),
      answer: async (requestId, verdict) => {
        const open = this.prompts.get(`${key}:${requestId}`);
        if (!open) return false;
        const pressed = await this.o.press(address, { requestId, nonce: open.nonce, verdict });
        return pressed.ok;
      },
      react: async (messageId, emoji) => (await this.o.surface.react?.(address, messageId, emoji)) ?? false,
    };
  }

  /**
   * A host's approval prompt in a conversation: the same widget, nonce, typed floor and timeout as a
   * turn's, and the same rule for one that could not be shown: closed at once, the person told, and
   * a PromptNotShownError to the asker (which answers the host deny and audits why).
   */
  private async ask(
    address: A,
    key: string,
    request: SinkApproval,
    signal: AbortSignal,
    fresh: (parts: TurnParts) => Renderer,
  ): Promise<ApprovalVerdict> {
    this.o.keys.renderAt(key, address);
    const renderer = fresh(TurnParts.unrecorded());
    const ticket = this.o.approvals.widget.open(
      { sessionKey: key, toolCallId: request.requestId, toolKind: "other", ...request },
      signal,
    );
    const id = `${key}:${request.requestId}`;
    this.prompts.set(id, { renderer, nonce: ticket.nonce });
    try {
      const event = { kind: PROMPT_CHOICE, ...request, nonce: ticket.nonce } as const;
      if (!(await presentPrompt(renderer, event, this.o.ctx.logger, key))) {
        // Settled deny under its own nonce: a late press on whatever did land approves nothing.
        this.o.approvals.widget.press(key, request.requestId, ticket.nonce, "deny");
        await tellPromptNotShown(
          renderer,
          (text) => this.o.surface.reply(address, text),
          this.o.ctx.logger,
          key,
        );
        throw new PromptNotShownError(request.requestId);
      }
      const verdict = await ticket.verdict;
      // Withdrawn by the host (or a shutdown) before anyone answered: the prompt must not look live.
      if (signal.aborted)
        await renderer.markApproval?.(
          request.requestId,
          approvalOutcomeLabel(signal.reason === "timeout" ? "timeout" : "abandoned"),
        );
      return verdict;
    } finally {
      this.prompts.delete(id);
      await renderer.close();
    }
  }
}

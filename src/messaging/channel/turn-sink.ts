/**
 * The turn sink: where the hub sends an authorized message instead of an agent turn when parley runs
 * as a channel server for an agent host (Claude Code, pi with channels.tools). Everything before
 * that point is the same hub as in gateway mode (accept-before-ack, the typed approval floor, the
 * commands that still make sense, routing, privacy); only the last step differs, so the channels
 * are not forked. The sink reaches back into a conversation through the `SinkConversation` the
 * hub opens for it: the channel's own renderer (the gateway's render path) and approval prompts.
 * Layer: messaging.
 */
import type { ApprovalVerdict } from "../approval/approvals.js";
import type { JsonValue } from "../store/port.js";
import type { PromptOption } from "../turn/renderer.js";
import type { TransportCapabilities } from "./capabilities.js";
import type { Conversation, OutboundFilePolicy } from "./surface.js";
import type { InboundAttachment } from "./transport.js";

/** An authorized message, as the sink takes it. */
export interface SinkMessage {
  channel: string;
  conversation: Conversation;
  /** The conversation's address as its hub spells it (journal form): how the sink opens it again. */
  address: JsonValue;
  sessionKey: string;
  userId: string;
  text: string;
  messageId?: string;
  attachments: readonly InboundAttachment[];
  /** When the platform received it (epoch ms). */
  atMs: number;
}

/** One approval asked in a conversation on the host's behalf. */
export interface SinkApproval {
  requestId: string;
  toolTitle: string;
  toolPurpose: string;
  options: PromptOption[];
}

/** What the hub offers the sink for one of its conversations. */
export interface SinkConversation {
  readonly conversation: Conversation;
  readonly sessionKey: string;
  readonly capabilities: TransportCapabilities;
  /**
   * Markdown through the channel's renderer (tables, display-form redaction, fence-safe splitting,
   * caps, local images as uploads under `files`), every message it creates recorded as a part of
   * `turnId`: rendering the same turn id again edits what it landed instead of posting anew.
   * Resolves whether every part landed.
   */
  render(text: string, opts: { turnId: string; files?: OutboundFilePolicy }): Promise<boolean>;
  /**
   * An approval prompt (the channel's buttons with a per-prompt nonce, and the typed 1/2/3 floor),
   * resolved by a press, a typed answer, `answer`, the signal (deny) or the timeout (deny).
   * Rejects with PromptNotShownError when the prompt could not be shown (it is already closed, the
   * person told): the asker answers deny at once.
   */
  ask(request: SinkApproval, signal: AbortSignal): Promise<ApprovalVerdict>;
  /** Settle an open prompt of this conversation by its request id (a typed `yes <id>`). */
  answer(requestId: string, verdict: ApprovalVerdict): Promise<boolean>;
  /** React to a message of this conversation; false where the platform has no reactions. */
  react(messageId: string, emoji: string): Promise<boolean>;
}

export interface TurnSink {
  /** Commands that still mean something when the agent is the host's (the rest say so). */
  readonly commands: ReadonlySet<string>;
  /** A channel's hub offers its conversations (called once per hub, at construction). */
  attach(channel: string, open: (address: JsonValue) => SinkConversation): void;
  /**
   * Take an authorized message. Resolves once it is kept, with `pushed`: whether it reached the
   * host (messages arriving together are pushed as one, a moment later). The hub completes the
   * message's journal ticket only once it was pushed; otherwise (a rejection, false, a shutdown
   * first) the ticket stays unfinished and a restart offers the message again.
   */
  take(message: SinkMessage): Promise<{ pushed: Promise<boolean> }>;
  /**
   * A message that may answer an approval the sink asked (a typed `yes <id>`): true when it was one
   * (the hub then does nothing else with it).
   */
  intercept?(message: SinkMessage): Promise<boolean>;
}

/**
 * The web chat's wire protocol (JSON over one WebSocket per open page). Client frames are validated
 * with zod: a malformed frame gets an error frame and an audited drop, and the connection lives on.
 */
import { z } from "zod";

export const clientFrameSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("message"), text: z.string().min(1).max(20_000) }),
  z.strictObject({
    type: z.literal("press"),
    requestId: z.string().min(1).max(200),
    nonce: z.string().max(200),
    verdict: z.enum(["approve", "approve_always", "deny"]),
  }),
  /** An [OPTIONS:] chip: re-dispatched as content, never as a command. */
  z.strictObject({ type: z.literal("chip"), text: z.string().min(1).max(2_000) }),
]);
export type ClientFrame = z.infer<typeof clientFrameSchema>;

export interface BubbleButton {
  label: string;
  verdict: "approve" | "approve_always" | "deny";
  requestId: string;
  nonce: string;
}

export interface Bubble {
  id: string;
  role: "user" | "assistant" | "system" | "receipt" | "approval";
  /** Rendered, sanitized HTML (markdown-it with raw HTML disabled). */
  html: string;
  /** Plain-text source, for history and tests. */
  text: string;
  /** A small status line (tool progress, turn status). Plain text. */
  status?: string;
  buttons?: BubbleButton[];
  chips?: string[];
  final: boolean;
}

export type ServerFrame =
  | { type: "snapshot"; conversationId: string; bubbles: Bubble[] }
  | { type: "upsert"; bubble: Bubble }
  | { type: "error"; message: string };

/** Conversation ids are chosen by the page; constrained so they are safe in keys and logs. */
export const CONVERSATION_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Why a turn failed, in the form a chat shows it: one line, bounded, redacted. An agent's error
 * can quote a key, a token-bearing URL or a stack trace; a user needs the gist ("API Error: Unable
 * to connect to API (ECONNREFUSED)"), and the whole text stays in the log. Layer: messaging.
 */
import { redactAll } from "../security/index.js";
import { oneLine } from "../text/clip.js";

/** Longest failure reason a chat is shown (code points): room for an error and a stderr line. */
export const MAX_FAILURE_CHARS = 300;

/** The reason of a failed turn as a chat may show it; never empty. */
export function failureReason(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  // Redacted before the cut, so a clip can never leave the recognisable head of a secret behind.
  return oneLine(redactAll(text), MAX_FAILURE_CHARS) || "unknown error";
}

/** An agent that could not be started (spawned, initialized, or given a session) says so first. */
export function startFailureReason(error: unknown): string {
  return `the agent could not be started: ${failureReason(error)}`;
}

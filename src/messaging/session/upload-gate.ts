/**
 * The restricted-session ceiling on outbound file uploads: a temporary or incognito session promised
 * not to persist, and a file handed to a platform is persisted where we cannot take it back. Keyed by
 * session key with no namespace test (a narrower test silently exempts every other channel), and
 * every decision is audited with the channel it was made for. Layer: messaging.
 */

import type { Logger } from "../base/logger.js";
import { silentLogger } from "../base/logger.js";
import type { AuditSink } from "../security/audit.js";
import { isPrivacyMode, PRIVACY_MODES } from "./privacy-mode.js";
import type { SessionStore } from "./session-store.js";

/** Transcript memory modes that carry no restriction. */
const UNRESTRICTED_TRANSCRIPT_MODES = new Set(["", "normal", "default"]);

export interface UploadGateOptions {
  audit: AuditSink;
  /** The live in-process tracker (PrivacyModes); consulted first because it is marked before any await. */
  privacy?: { isRestricted(sessionKey: string): boolean };
  /**
   * The transcript's recorded memory mode, when a transcript log keeps one. null = no transcript yet.
   * A throw or an unrecognised value means the mode is unreadable, which DENIES.
   */
  transcriptMode?: (sessionKey: string) => string | null;
  logger?: Logger;
}

type Verdict = { restricted: boolean; reason: string };

function decide(
  store: Pick<SessionStore, "flag">,
  sessionKey: string,
  opts: UploadGateOptions,
  log: Logger,
): Verdict {
  try {
    if (opts.privacy?.isRestricted(sessionKey)) return { restricted: true, reason: "restricted_session" };
    for (const mode of PRIVACY_MODES) {
      if (store.flag(sessionKey, mode)) return { restricted: true, reason: `persisted_${mode}` };
    }
    if (opts.transcriptMode) {
      const mode = opts.transcriptMode(sessionKey);
      if (mode === null || UNRESTRICTED_TRANSCRIPT_MODES.has(mode))
        return { restricted: false, reason: "unrestricted" };
      return isPrivacyMode(mode)
        ? { restricted: true, reason: `transcript_${mode}` }
        : { restricted: true, reason: "transcript_mode_unknown" };
    }
    return { restricted: false, reason: "unrestricted" };
  } catch (error) {
    // A ceiling we cannot read is a ceiling we must assume: an upload cannot be recalled.
    log.warn("upload gate: privacy state unreadable; denying upload", {
      session: sessionKey,
      error: String(error),
    });
    return { restricted: true, reason: "mode_unreadable" };
  }
}

/** True when outbound uploads for `sessionKey` must be refused. Audited per channel either way. */
export function uploadsRestricted(
  store: Pick<SessionStore, "flag">,
  sessionKey: string,
  channelType: string,
  opts: UploadGateOptions,
): boolean {
  const verdict = decide(store, sessionKey, opts, opts.logger ?? silentLogger);
  opts.audit.log("upload_gate", verdict.restricted ? "denied" : "allowed", {
    channel: channelType,
    session: sessionKey,
    reason: verdict.reason,
  });
  return verdict.restricted;
}

/**
 * Channel-neutral approval styles behind one decider interface, both deny-by-default and keyed
 * sessionKey:requestId. PendingApprovals mints the per-prompt nonce and validates it inside resolve,
 * so a channel can never forget the check. Typed replies (1/2/3) serve a channel with no widget;
 * widget presses carry the nonce round trip.
 */

import type { Timers } from "../base/clock.js";
import { realClock } from "../base/clock.js";
import type { AuditSink } from "../security/audit.js";
import type { PromptOption } from "../turn/renderer.js";
import { newApprovalNonce, nonceMatches } from "../turn/renderer.js";

export type ApprovalVerdict = "approve" | "approve_always" | "deny";

export interface ApprovalRequest {
  sessionKey: string;
  requestId: string;
  toolCallId: string;
  toolTitle: string;
  toolPurpose: string;
  toolKind: string;
  options: PromptOption[];
}

/** An open prompt: the nonce travels with PROMPT_CHOICE; the verdict settles exactly once. */
export interface ApprovalTicket {
  nonce: string;
  verdict: Promise<ApprovalVerdict>;
}

export interface ApprovalDecider {
  open(request: ApprovalRequest, signal: AbortSignal): ApprovalTicket;
}

/** Spoken on timeout so the prompt still on screen is resolved, not left live-looking. */
export const TIMEOUT_NOTICE = "⌛ No answer in time: the tool request was denied.";
/** Neutral on purpose: "answered" and "timed out" are not distinguished to the presser. */
export const RECEIPT_EXPIRED = "That approval was already answered or has timed out.";
export const DEFAULT_APPROVAL_TIMEOUT_MS = 5 * 60_000;

interface Entry {
  sessionKey: string;
  nonce: string;
  settle: (verdict: ApprovalVerdict) => void;
  handle: unknown;
  openedSeq: number;
}

export interface OpenOptions {
  timeoutMs?: number;
  /** Awaited when the window closes, before DENY is returned. May not turn into an approval. */
  onTimeout?: () => Promise<void> | void;
  signal?: AbortSignal;
}

export class PendingApprovals {
  private readonly entries = new Map<string, Entry>();
  private seq = 0;
  private readonly timers: Timers;
  private readonly audit: AuditSink | undefined;
  private readonly random: ((size: number) => Uint8Array) | undefined;
  private readonly defaultTimeoutMs: number;
  private readonly onError: (error: unknown) => void;

  constructor(
    options: {
      timers?: Timers;
      audit?: AuditSink;
      random?: (size: number) => Uint8Array;
      timeoutMs?: number;
      onError?: (error: unknown) => void;
    } = {},
  ) {
    this.timers = options.timers ?? realClock;
    this.audit = options.audit;
    this.random = options.random;
    this.defaultTimeoutMs = options.timeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;
    this.onError =
      options.onError ?? ((error) => process.stderr.write(`parley: approval notice failed: ${error}\n`));
  }

  private static key(sessionKey: string, requestId: string): string {
    return `${sessionKey}:${requestId}`;
  }

  open(sessionKey: string, requestId: string, options: OpenOptions = {}): ApprovalTicket {
    const key = PendingApprovals.key(sessionKey, requestId);
    // A re-opened id supersedes the old prompt; the old one denies rather than lingering.
    this.entries.get(key)?.settle("deny");
    const nonce = this.random ? newApprovalNonce(this.random) : newApprovalNonce();
    let settle!: (verdict: ApprovalVerdict) => void;
    const verdict = new Promise<ApprovalVerdict>((resolve) => {
      settle = resolve;
    });
    const entry: Entry = {
      sessionKey,
      nonce,
      openedSeq: ++this.seq,
      handle: undefined,
      settle: (v) => {
        if (this.entries.get(key) !== entry) return;
        this.entries.delete(key);
        this.timers.clearTimeout(entry.handle);
        settle(v);
      },
    };
    this.entries.set(key, entry);
    entry.handle = this.timers.setTimeout(() => {
      if (this.entries.get(key) !== entry) return;
      this.entries.delete(key);
      this.audit?.log("tool_permission", "denied", {
        session: sessionKey,
        request: requestId,
        reason: "timeout",
      });
      void this.announceTimeout(options.onTimeout).then(() => settle("deny"));
    }, options.timeoutMs ?? this.defaultTimeoutMs);
    options.signal?.addEventListener("abort", () => entry.settle("deny"), { once: true });
    return { nonce, verdict };
  }

  /** The notice is best effort: whatever it does, the verdict stays DENY. */
  private async announceTimeout(onTimeout: OpenOptions["onTimeout"]): Promise<void> {
    if (!onTimeout) return;
    try {
      await onTimeout();
    } catch (error) {
      this.onError(error);
    }
  }

  /** Resolve a widget press. Stale, missing or mismatched nonces never approve. */
  resolve(sessionKey: string, requestId: string, nonce: string | null | undefined, verdict: ApprovalVerdict) {
    const entry = this.entries.get(PendingApprovals.key(sessionKey, requestId));
    if (!entry || !nonceMatches(entry.nonce, nonce)) {
      this.audit?.log("tool_permission", "refused", {
        session: sessionKey,
        request: requestId,
        reason: "stale_nonce",
      });
      return "stale" as const;
    }
    entry.settle(verdict);
    return "resolved" as const;
  }

  /** Resolve the newest open prompt of a session (typed replies carry no nonce or id); its request id. */
  resolveLatest(sessionKey: string, verdict: ApprovalVerdict): string | null {
    let latest: [string, Entry] | undefined;
    for (const pair of this.entries) {
      if (pair[0].startsWith(`${sessionKey}:`) && (!latest || pair[1].openedSeq > latest[1].openedSeq))
        latest = pair;
    }
    if (!latest) return null;
    latest[1].settle(verdict);
    return latest[0].slice(sessionKey.length + 1);
  }

  /** Whether any prompt is open at all (a cheap guard before per-session lookups). */
  get anyOpen(): boolean {
    return this.entries.size > 0;
  }

  /** Whether this prompt is open AND `nonce` is its own (no audit, nothing settled: a check before acting). */
  matches(sessionKey: string, requestId: string, nonce: string | null | undefined): boolean {
    const entry = this.entries.get(PendingApprovals.key(sessionKey, requestId));
    return entry !== undefined && nonceMatches(entry.nonce, nonce);
  }

  /** Whether this exact prompt is still open under this session (no audit: a lookup, not a press). */
  isOpen(sessionKey: string, requestId: string): boolean {
    return this.entries.has(PendingApprovals.key(sessionKey, requestId));
  }

  /** How many sessions have a prompt open (a count for health and `parley status`). */
  openSessions(): number {
    const sessions = new Set<string>();
    for (const entry of this.entries.values()) sessions.add(entry.sessionKey);
    return sessions.size;
  }

  hasOpen(sessionKey: string): boolean {
    for (const key of this.entries.keys()) if (key.startsWith(`${sessionKey}:`)) return true;
    return false;
  }

  /** Deny everything open for a session (cancel, shutdown). */
  denyAll(sessionKey: string): void {
    for (const [key, entry] of [...this.entries]) if (key.startsWith(`${sessionKey}:`)) entry.settle("deny");
  }
}

const TYPED_VERDICTS: Readonly<Record<string, ApprovalVerdict>> = {
  "1": "approve",
  "2": "deny",
  "3": "approve_always",
};

/** The verdict a message expresses, or null. Only a message that is ENTIRELY a verdict counts. */
export function parseTypedVerdict(text: string): ApprovalVerdict | null {
  return TYPED_VERDICTS[text.trim()] ?? null;
}

interface RegistryDeciderOptions {
  timeoutMs?: number;
  onTimeout?: (request: ApprovalRequest) => Promise<void> | void;
}

/** Shared half of both styles: a prompt is an entry in the registry, denied on timeout or abort. */
abstract class RegistryApprovalDecider implements ApprovalDecider {
  constructor(
    protected readonly registry: PendingApprovals,
    protected readonly options: RegistryDeciderOptions = {},
  ) {}

  open(request: ApprovalRequest, signal: AbortSignal): ApprovalTicket {
    const onTimeout = this.options.onTimeout;
    const openOptions: OpenOptions = { signal };
    if (this.options.timeoutMs !== undefined) openOptions.timeoutMs = this.options.timeoutMs;
    if (onTimeout) openOptions.onTimeout = () => onTimeout(request);
    return this.registry.open(request.sessionKey, request.requestId, openOptions);
  }
}

/** A typed reply that settled a prompt: which one, and how. */
export interface TypedAnswer {
  requestId: string;
  verdict: ApprovalVerdict;
}

/** Typed-reply decider (1 / 2 / 3): the floor every channel has, buttons or not. */
export class TextReplyApprovalDecider extends RegistryApprovalDecider {
  /**
   * Offer an inbound message. Null when it is not a verdict (dispatch it normally); the expiry
   * receipt when no prompt was open; else the prompt it settled, so its outcome can be shown on it.
   */
  handleReply(sessionKey: string, text: string): TypedAnswer | typeof RECEIPT_EXPIRED | null {
    const verdict = parseTypedVerdict(text);
    if (verdict === null) return null;
    const requestId = this.registry.resolveLatest(sessionKey, verdict);
    return requestId === null ? RECEIPT_EXPIRED : { requestId, verdict };
  }
}

/** Widget decider: presses arrive with (requestId, nonce) through `press`. */
export class WidgetApprovalDecider extends RegistryApprovalDecider {
  /** A press; returns the neutral expiry receipt when it did not land. */
  press(
    sessionKey: string,
    requestId: string,
    nonce: string | null | undefined,
    verdict: ApprovalVerdict,
  ): string {
    return this.registry.resolve(sessionKey, requestId, nonce, verdict) === "stale" ? RECEIPT_EXPIRED : "";
  }
}

export interface ChannelApprovalsOptions {
  /** Names the channel in log lines. */
  channel: string;
  timers?: Timers;
  audit?: AuditSink;
  timeoutMs?: number;
  logger: { warn(message: string, fields?: Record<string, unknown>): void };
  /** Resolve the prompt still on screen when its window closes (the verdict is already DENY). */
  onTimeout: (request: ApprovalRequest, notice: string) => void;
}

/**
 * One channel's approval set: the registry plus both answer styles over it, so a press and a typed
 * reply settle the same entry, and every channel wires the timeout notice the same way.
 */
export class ChannelApprovals {
  readonly registry: PendingApprovals;
  readonly widget: WidgetApprovalDecider;
  readonly typed: TextReplyApprovalDecider;

  constructor(o: ChannelApprovalsOptions) {
    this.registry = new PendingApprovals({
      ...(o.timers ? { timers: o.timers } : {}),
      ...(o.audit ? { audit: o.audit } : {}),
      ...(o.timeoutMs ? { timeoutMs: o.timeoutMs } : {}),
      onError: (error) => o.logger.warn(`${o.channel}: approval notice failed`, { error: String(error) }),
    });
    const options: RegistryDeciderOptions = { onTimeout: (request) => o.onTimeout(request, TIMEOUT_NOTICE) };
    this.widget = new WidgetApprovalDecider(this.registry, options);
    this.typed = new TextReplyApprovalDecider(this.registry, options);
  }
}

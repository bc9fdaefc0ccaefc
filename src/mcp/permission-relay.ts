/**
 * Permission relay: when the agent host wants a human to approve a tool, it sends
 * `notifications/claude/channel/permission_request`; parley asks in a chat conversation and sends
 * the verdict back as `notifications/claude/channel/permission`. Where it asks: the configured
 * `channelServer.permissionTarget`, else the conversation that spoke last. A conversation parley
 * can render into gets the channel's own approval prompt (buttons bound to a per-prompt nonce, and
 * the typed 1/2 floor); a target nobody has written from yet gets a text prompt. Either way a typed
 * `yes <id>` / `no <id>` from THAT conversation answers it, the owner's /yolo grant approves it,
 * and no answer in time denies it. Every decision is audited. Layer: mcp.
 */
import type { ApprovalVerdict } from "../messaging/approval/approvals.js";
import type { Clock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { GrantControl } from "../messaging/channel/contract.js";
import type { Egress } from "../messaging/channel/egress.js";
import { describeEgress } from "../messaging/channel/egress.js";
import type { SinkMessage } from "../messaging/channel/turn-sink.js";
import type { AuditSink } from "../messaging/security/audit.js";
import { sameLocation } from "../messaging/session/keys.js";
import { oneLine } from "../messaging/text/clip.js";
import { PROMPT_NOT_SHOWN, PromptNotShownError } from "../messaging/turn/unshown.js";
import type { HostSink, KnownConversation } from "./host-sink.js";

export const PERMISSION_REQUEST_METHOD = "notifications/claude/channel/permission_request";
export const PERMISSION_VERDICT_METHOD = "notifications/claude/channel/permission";
/** Five letters, a-z without l (the host's alphabet: never read as a 1). */
const REQUEST_ID = /^[a-km-z]{5}$/;
const TYPED_ANSWER = /^\s*(y|yes|n|no)\s+([a-km-z]{5})\s*$/i;

export interface PermissionRequest {
  request_id: string;
  tool_name: string;
  description: string;
  input_preview: string;
}

export interface PermissionRelayOptions {
  sink: HostSink;
  egress: Pick<Egress, "resolve" | "send">;
  grant: Pick<GrantControl, "isActive">;
  audit: AuditSink;
  logger: Logger;
  clock: Clock;
  timeoutMs: number;
  /** A name from `targets`: where requests go first. */
  target?: string | undefined;
  /** Send the verdict to the host. */
  answer(requestId: string, behavior: "allow" | "deny"): Promise<void>;
}

interface Open {
  /** Where the prompt was posted: only an answer from there counts. */
  where: KnownConversation | { link: KnownConversation["link"]; conversationKey: null };
  settle(verdict: ApprovalVerdict): void;
  abort: AbortController;
}

export class PermissionRelay {
  private readonly open = new Map<string, Open>();

  constructor(private readonly o: PermissionRelayOptions) {}

  /** One request from the host; resolves once it is answered (or denied, or could not be asked). */
  async request(params: PermissionRequest): Promise<void> {
    const id = params.request_id;
    if (typeof id !== "string" || !REQUEST_ID.test(id) || this.open.has(id)) {
      this.o.audit.log("channel_server.permission", "dropped", { reason: "bad_request_id" });
      return;
    }
    const title = oneLine(String(params.tool_name ?? "a tool"), 120);
    if (this.o.grant.isActive()) {
      this.o.audit.log("tool_permission", "auto_approved", {
        source: "channel_server",
        reason: "grant",
        request: id,
      });
      return this.o.answer(id, "allow");
    }
    const where = this.where();
    if (!where) {
      // Nobody to ask: the host's own prompt stays the only one (answering deny would pre-empt it).
      this.o.audit.log("channel_server.permission", "refused", { reason: "no_conversation", request: id });
      return;
    }
    const abort = new AbortController();
    const timer = this.o.clock.setTimeout(() => abort.abort("timeout"), this.o.timeoutMs);
    const purpose = oneLine(
      [String(params.description ?? ""), String(params.input_preview ?? "")]
        .filter((s) => s.trim())
        .join(" — "),
      400,
    );
    let verdict: ApprovalVerdict;
    let reason: string | undefined;
    try {
      verdict = await this.ask(id, title, purpose, where, abort);
    } catch (error) {
      // The driver's rule for a prompt nobody saw: denied at once, and the audit row says why.
      if (error instanceof PromptNotShownError) reason = PROMPT_NOT_SHOWN;
      else this.o.logger.error("channel server: asking for a permission failed", { error: String(error) });
      verdict = "deny";
    } finally {
      this.o.clock.clearTimeout(timer);
      this.open.delete(id);
    }
    const behavior = verdict === "deny" ? "deny" : "allow";
    this.o.audit.log("tool_permission", behavior === "allow" ? "approved" : "denied", {
      source: "channel_server",
      request: id,
      ...(reason !== undefined
        ? { reason }
        : abort.signal.aborted
          ? { reason: String(abort.signal.reason) }
          : {}),
    });
    await this.o.answer(id, behavior);
  }

  /** A message that is `yes <id>` / `no <id>` for a prompt posted in its own conversation. */
  async intercept(message: SinkMessage, from: KnownConversation): Promise<boolean> {
    const m = TYPED_ANSWER.exec(message.text);
    if (!m) return false;
    const id = (m[2] ?? "").toLowerCase();
    const open = this.open.get(id);
    if (!open || !sameLocation(open.where.link, from.link)) return false;
    const verdict: ApprovalVerdict = (m[1] ?? "").toLowerCase().startsWith("y") ? "approve" : "deny";
    if (open.where.conversationKey !== null) {
      const port = this.o.sink.open(from.channel, from.address);
      if (port && (await port.answer(id, verdict))) return true;
    }
    open.settle(verdict);
    return true;
  }

  /** Deny everything still open (a shutdown). */
  stop(): void {
    for (const open of this.open.values()) open.abort.abort("shutdown");
  }

  private where(): Open["where"] | undefined {
    if (this.o.target) {
      const found = this.o.egress.resolve({ kind: "target", name: this.o.target }, "host");
      if (found.ok)
        return (
          this.o.sink.knownAt(found.resolved.link) ?? { link: found.resolved.link, conversationKey: null }
        );
      this.o.logger.warn("channel server: the permission target is not reachable", {
        outcome: describeEgress(found.result),
      });
    }
    return this.o.sink.last;
  }

  private async ask(
    id: string,
    title: string,
    purpose: string,
    where: Open["where"],
    abort: AbortController,
  ): Promise<ApprovalVerdict> {
    let settle: (verdict: ApprovalVerdict) => void = () => {};
    const typed = new Promise<ApprovalVerdict>((resolve) => {
      settle = resolve;
    });
    const aborted = new Promise<ApprovalVerdict>((resolve) =>
      abort.signal.addEventListener("abort", () => resolve("deny"), { once: true }),
    );
    this.open.set(id, { where, settle, abort });
    const hint = `Reply \`yes ${id}\` to allow or \`no ${id}\` to deny.`;
    const port = where.conversationKey !== null ? this.o.sink.open(where.channel, where.address) : undefined;
    if (port) {
      const asked = port.ask(
        {
          requestId: id,
          toolTitle: title,
          toolPurpose: `${purpose ? `${purpose}\n` : ""}${hint}`,
          options: [
            { id: "allow", label: "Allow", verdict: "approve" },
            { id: "deny", label: "Deny", verdict: "deny" },
          ],
        },
        abort.signal,
      );
      return Promise.race([asked, typed, aborted]);
    }
    const sent = await this.o.egress.send({
      purpose: "host",
      destination: { kind: "link", link: where.link, sessionKey: "" },
      text: `🔐 **Permission needed:** ${title}${purpose ? `\n${purpose}` : ""}\n\n${hint}`,
    });
    // Not posted: nobody can answer it, so the same rule as a renderer's unshown prompt.
    if (sent.status !== "sent") throw new PromptNotShownError(id);
    return Promise.race([typed, aborted]);
  }
}

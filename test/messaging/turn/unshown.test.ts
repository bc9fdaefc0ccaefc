/**
 * The one rule for an approval prompt a renderer could not show (src/messaging/turn/unshown.ts):
 * denied at once, not after the approval window; the audit row says prompt_not_shown; the person is
 * told out of band when a line can still be posted; a late press approves nothing. The same for a
 * turn's prompt (the TurnDriver) and an agent host's (the channel-server bridge and relay).
 */
import { describe, expect, it } from "vitest";
import type { HostSink, KnownConversation } from "../../../src/mcp/host-sink.js";
import { PermissionRelay } from "../../../src/mcp/permission-relay.js";
import {
  ChannelApprovals,
  PendingApprovals,
  WidgetApprovalDecider,
} from "../../../src/messaging/approval/approvals.js";
import { MemoryLogger } from "../../../src/messaging/base/logger.js";
import type { ConversationKeys } from "../../../src/messaging/channel/conversation-keys.js";
import { ticketWork } from "../../../src/messaging/channel/journal.js";
import { SinkBridge } from "../../../src/messaging/channel/sink-bridge.js";
import type { ChannelSurface } from "../../../src/messaging/channel/surface.js";
import type { SinkConversation, TurnSink } from "../../../src/messaging/channel/turn-sink.js";
import { MemoryAuditSink } from "../../../src/messaging/security/audit.js";
import { TurnDriver } from "../../../src/messaging/turn/driver.js";
import type { ProviderEvent } from "../../../src/messaging/turn/provider-events.js";
import { RecordingRenderer } from "../../../src/messaging/turn/recording-renderer.js";
import { PROMPT_NOT_SHOWN_NOTICE } from "../../../src/messaging/turn/renderer.js";
import { PROMPT_NOT_SHOWN, PromptNotShownError } from "../../../src/messaging/turn/unshown.js";
import { ScriptedProvider } from "../../../src/providers/scripted.js";
import { ManualClock } from "../../helpers/manual-clock.js";

const permission: ProviderEvent = {
  type: "permission_request",
  requestId: "r1",
  toolCallId: "t1",
  title: "Run rm",
  kind: "execute",
  options: [
    { optionId: "a", name: "Allow", kind: "allow_once" },
    { optionId: "d", name: "Deny", kind: "reject_once" },
  ],
};
const toolTurn: ProviderEvent[] = [
  { type: "tool_call", toolCallId: "t1", title: "Run rm", kind: "execute" },
  permission,
  { type: "text", text: "kept it" },
  { type: "complete", stopReason: "end_turn" },
];

/** A turn whose one prompt the renderer handles as `show` says; what it did, recorded. */
async function turnWith(
  show: (renderer: RecordingRenderer, decider: WidgetApprovalDecider) => void,
  notify = true,
) {
  const registry = new PendingApprovals();
  const decider = new WidgetApprovalDecider(registry);
  const provider = new ScriptedProvider([toolTurn]);
  const renderer = new RecordingRenderer();
  show(renderer, decider);
  let nonce = "";
  const prior = renderer.onPrompt;
  renderer.onPrompt = (requestId, n) => {
    nonce = n;
    prior?.(requestId, n);
  };
  const audit = new MemoryAuditSink();
  const logger = new MemoryLogger();
  const said: string[] = [];
  const driver = new TurnDriver({
    provider,
    renderer,
    audit,
    logger,
    sessionKey: "k",
    policy: { decider },
    ...(notify ? { notify: async (line: string) => void said.push(line) } : {}),
  });
  // No timer is advanced anywhere: a prompt left waiting would hold this run for minutes.
  await driver.run("go");
  return { provider, renderer, audit, logger, said, registry, decider, nonce: () => nonce };
}

describe("an approval prompt the renderer could not show: the driver's rule", () => {
  it("reported not shown: denied at once, audited with the reason, the person told", async () => {
    const t = await turnWith((r) => {
      r.promptShown = false;
    });
    expect(t.provider.answers).toEqual([{ requestId: "r1", verdict: "deny" }]);
    expect(t.audit.records).toHaveLength(1);
    expect(t.audit.records[0]).toMatchObject({
      operation: "tool_permission",
      outcome: "denied",
      fields: { request: "r1", reason: PROMPT_NOT_SHOWN },
    });
    expect(t.said).toEqual([PROMPT_NOT_SHOWN_NOTICE]);
    // Closed in the registry: a late press with the prompt's own nonce approves nothing.
    expect(t.registry.isOpen("k", "r1")).toBe(false);
    expect(t.decider.press("k", "r1", t.nonce(), "approve")).not.toBe("");
    // The turn goes on: what the agent says after the deny still renders.
    expect(t.renderer.coalesced()).toContainEqual({ call: "onTextChunk", text: "kept it" });
  });

  it("a renderer that threw is the same: denied at once, a delivery failure, the person told", async () => {
    const t = await turnWith((r) => {
      r.onPromptChoice = async () => {
        throw new Error("the platform refused the post");
      };
    });
    expect(t.provider.answers).toEqual([{ requestId: "r1", verdict: "deny" }]);
    expect(t.audit.records[0]?.fields.reason).toBe(PROMPT_NOT_SHOWN);
    expect(t.renderer.deliveryFailed).toBe(true);
    expect(t.said).toEqual([PROMPT_NOT_SHOWN_NOTICE]);
    expect(t.logger.entries.some((r) => r.message.includes("failed to show an approval prompt"))).toBe(true);
  });

  it("the notice is the channel's own words for its prompt, and a notice that fails leaves the deny", async () => {
    class CardRenderer extends RecordingRenderer {
      override readonly promptNotShownNotice = "the card could not be shown";
    }
    const registry = new PendingApprovals();
    const renderer = new CardRenderer();
    renderer.promptShown = false;
    const provider = new ScriptedProvider([toolTurn]);
    const audit = new MemoryAuditSink();
    const tried: string[] = [];
    await new TurnDriver({
      provider,
      renderer,
      audit,
      sessionKey: "k",
      policy: { decider: new WidgetApprovalDecider(registry) },
      notify: async (line) => {
        tried.push(line);
        throw new Error("the conversation is gone");
      },
    }).run("go");
    expect(tried).toEqual(["the card could not be shown"]);
    expect(provider.answers).toEqual([{ requestId: "r1", verdict: "deny" }]);
  });

  it("with no line to the conversation (muted) the deny still stands and nothing is said", async () => {
    const t = await turnWith((r) => {
      r.promptShown = false;
    }, false);
    expect(t.provider.answers).toEqual([{ requestId: "r1", verdict: "deny" }]);
    expect(t.said).toEqual([]);
  });

  it("a shown prompt waits for its answer and says nothing extra", async () => {
    let pressed = "";
    const t = await turnWith((r, decider) => {
      // Pressed once the prompt was shown: it was open, and the press decides.
      r.onPrompt = (requestId, nonce) => {
        pressed = nonce;
        queueMicrotask(() => void decider.press("k", requestId, nonce, "approve"));
      };
    });
    expect(pressed).not.toBe("");
    expect(t.provider.answers).toEqual([{ requestId: "r1", verdict: "approve" }]);
    expect(t.audit.records[0]?.fields.reason).toBe("decider");
    expect(t.said).toEqual([]);
  });
});

/** A channel's hub side of channel-server mode, its one conversation rendered by `renderer`. */
function bridgeWith(renderer: RecordingRenderer) {
  const clock = new ManualClock();
  const audit = new MemoryAuditSink();
  const logger = new MemoryLogger();
  const approvals = new ChannelApprovals({
    channel: "test",
    timers: clock,
    audit,
    logger,
    onTimeout: () => {},
  });
  const replies: string[] = [];
  let open: ((address: unknown) => SinkConversation) | undefined;
  const sink: TurnSink = {
    commands: new Set(),
    attach: (_channel, o) => {
      open = o as (address: unknown) => SinkConversation;
    },
    take: async () => ({ pushed: Promise.resolve(true) }),
  };
  const surface = {
    conversation: () => ({
      route: "dm:a1",
      direct: true,
      link: { channelType: "test", conversationId: "a1" },
    }),
    sessionKey: () => "k",
    reply: async (_a: string, text: string) => {
      replies.push(text);
      return true;
    },
    newRenderer: () => renderer,
  } as unknown as ChannelSurface<string>;
  const keys = { keyOf: () => "k", renderAt: () => {} } as unknown as ConversationKeys<string>;
  new SinkBridge<string, undefined>({
    sink,
    surface,
    ctx: { name: "test", audit, logger, clock, durable: undefined },
    keys,
    tickets: ticketWork(undefined),
    approvals,
    outboundFiles: () => ({ root: async () => undefined, allowed: () => false }),
    press: async () => ({ ok: false, text: "" }),
    track: (p) => p,
  });
  const port = () => {
    if (!open) throw new Error("the bridge never attached");
    return open("a1");
  };
  return { port, approvals, audit, logger, replies, clock };
}

describe("an agent host's prompt the renderer could not show: the same rule", () => {
  it("the bridge closes it at once, tells the person, and says so to its asker", async () => {
    const renderer = new RecordingRenderer();
    renderer.promptShown = false;
    const b = bridgeWith(renderer);
    const asked = b.port().ask(
      {
        requestId: "abcde",
        toolTitle: "Bash",
        toolPurpose: "",
        options: [
          { id: "allow", label: "Allow", verdict: "approve" },
          { id: "deny", label: "Deny", verdict: "deny" },
        ],
      },
      new AbortController().signal,
    );
    await expect(asked).rejects.toBeInstanceOf(PromptNotShownError);
    expect(b.approvals.registry.isOpen("k", "abcde")).toBe(false);
    expect(b.replies).toEqual([PROMPT_NOT_SHOWN_NOTICE]);
  });

  it("the relay answers the host deny at once and audits prompt_not_shown", async () => {
    const renderer = new RecordingRenderer();
    renderer.promptShown = false;
    const b = bridgeWith(renderer);
    const where: KnownConversation = {
      channel: "test",
      conversationKey: "k",
      address: "a1",
      link: { channelType: "test", conversationId: "a1" },
      direct: true,
    };
    const hostSink = { last: where, open: () => b.port(), knownAt: () => where } as unknown as HostSink;
    const answers: [string, string][] = [];
    const relay = new PermissionRelay({
      sink: hostSink,
      egress: {
        resolve: () => {
          throw new Error("no target is configured");
        },
        send: async () => {
          throw new Error("a port was open: no text prompt");
        },
      },
      grant: { isActive: () => false },
      audit: b.audit,
      logger: b.logger,
      clock: b.clock,
      timeoutMs: 60_000,
      answer: async (id, behavior) => void answers.push([id, behavior]),
    });
    // The window is never advanced: the deny comes from the rule, not the timeout.
    await relay.request({ request_id: "abcde", tool_name: "Bash", description: "ls", input_preview: "" });
    expect(answers).toEqual([["abcde", "deny"]]);
    const rows = b.audit.records.filter((r) => r.operation === "tool_permission");
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      outcome: "denied",
      fields: { source: "channel_server", request: "abcde", reason: PROMPT_NOT_SHOWN },
    });
    expect(b.replies).toEqual([PROMPT_NOT_SHOWN_NOTICE]);
    // An expected deny, not a failure: nothing is logged as an error.
    expect(b.logger.entries.filter((r) => r.level === "error")).toEqual([]);
  });
});

/**
 * The channel contract: every transport + renderer pair runs this suite through a small harness.
 * It pins the security floor and the capability declarations, so a new channel learns here what
 * it still gets wrong. Results feed docs/conformance.md (one row per channel).
 */
import { describe, expect, it } from "vitest";
import {
  PendingApprovals,
  RECEIPT_EXPIRED,
  WidgetApprovalDecider,
} from "../../src/messaging/approval/approvals.js";
import type { TransportCapabilities } from "../../src/messaging/channel/capabilities.js";
import { deliveryConfirmed } from "../../src/messaging/channel/capabilities.js";
import type { MessagingTransport } from "../../src/messaging/channel/transport.js";
import type { AuditSink } from "../../src/messaging/security/audit.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { SessionManager } from "../../src/messaging/session/session-manager.js";
import type { TurnStore } from "../../src/messaging/turn/pipeline.js";
import { runTurnPipeline } from "../../src/messaging/turn/pipeline.js";
import type { ProviderEvent } from "../../src/messaging/turn/provider-events.js";
import type { Renderer } from "../../src/messaging/turn/renderer.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import { APPLICABLE_PAIRS, disguisedCredential, survivesIn } from "../helpers/credential-disguises.js";
import { permissionRequest } from "../helpers/events.js";

export interface ConfiguredHarness {
  transport: MessagingTransport<unknown>;
  conversationId: string;
  allowedUser: string;
  /** A raw platform envelope from `user`; `bot` marks it bot-authored the platform's way. */
  envelope(user: string, text: string, opts?: { bot?: boolean }): unknown;
  newRenderer(): Renderer;
  /** Every outbound payload so far, in the forms the platform shows (text, markup, labels). */
  outbound(): OutboundMessage[];
  close(): Promise<void>;
}

export interface OutboundMessage {
  /** The message body as sent (source form). */
  text: string;
  /** Everything else the platform displays for it: rendered markup, status lines, labels. */
  rendered: string[];
  buttons: number;
}

export interface ChannelHarness {
  name: string;
  capabilities: TransportCapabilities;
  unconfigured(audit: AuditSink): MessagingTransport<unknown>;
  configured(audit: AuditSink): Promise<ConfiguredHarness>;
}

/** A check passed, failed, or does not apply to what the channel declares (and says why in its test). */
export type CheckResult = boolean | "n/a";

export const CONTRACT_CHECKS = [
  "authorize is deny-by-default and audits refusals",
  "bot-authored messages are dropped",
  "no outbound message over the declared cap",
  "choices capped at maxButtons, overflow numbered",
  "filesOutbound=false keeps the path visible",
  "returnsMessageId matches sendMessage",
  "a planted credential never reaches any outbound payload",
  "a credential in any disguise never shows in what the platform displays",
  "a stale approval nonce never approves",
  "a muted conversation sends nothing",
] as const;

const KEY = "AKIAIOSFODNN7EXAMPLE";
/** The key as a model might smuggle it past a literal scan: emphasis markers the platform hides. */
const SMUGGLED = ["AKIA**IOSFODNN7EXAMPLE**", "AKIA`IOSFODNN7EXAMPLE`", "AKIA\u200bIOSFODNN7EXAMPLE", KEY];

/** Strip markup and invisible characters: what a reader would see and could copy. */
function visible(s: string): string {
  return s
    .replace(/<[^>]*>/g, "")
    .replace(/&#?\w+;/g, "")
    .replace(/[*_`~\u200b-\u200d\u2060\ufeff]/g, "");
}

/** What a reader sees of one form: tags gone, character references decoded, markup markers gone. */
function displayed(s: string): string {
  return s
    .replace(/<[^>]*>/g, "")
    .replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCodePoint(Number.parseInt(h, 16)))
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(
      /&(lt|gt|amp|quot|apos|#39);/g,
      (_, n: string) => ({ lt: "<", gt: ">", amp: "&", quot: '"', apos: "'", "#39": "'" })[n] ?? "",
    )
    .replace(/\\([!-/:-@[-`{-~])/g, "$1")
    .replace(/[*_`~|]/g, "");
}

/** Disguised credentials per turn: enough to keep the suite quick, few enough to split normally. */
const DISGUISE_BATCH = 40;

const text = (t: string): ProviderEvent => ({ type: "text", text: t });
const done: ProviderEvent = { type: "complete", stopReason: "end_turn" };

async function runTurn(
  h: ConfiguredHarness,
  events: ProviderEvent[],
  opts: { store?: TurnStore; press?: (r: string, n: string, d: WidgetApprovalDecider) => void } = {},
) {
  const provider = new ScriptedProvider([events]);
  const sessions = new SessionManager({ createProvider: () => provider });
  const renderer = h.newRenderer();
  const registry = new PendingApprovals({ timeoutMs: 200 });
  const decider = new WidgetApprovalDecider(registry);
  const release = sessions.tryAcquire("conformance");
  if (!release) throw new Error("lock");
  let prompted: { requestId: string; nonce: string } | undefined;
  const spy = {
    open: (req: Parameters<typeof decider.open>[0], signal: AbortSignal) => {
      const ticket = decider.open(req, signal);
      prompted = { requestId: req.requestId, nonce: ticket.nonce };
      queueMicrotask(() => opts.press?.(req.requestId, ticket.nonce, decider));
      return ticket;
    },
  };
  await runTurnPipeline(
    { sessions, audit: new MemoryAuditSink(), ...(opts.store ? { store: opts.store } : {}) },
    {
      sessionKey: "conformance",
      channelType: h.transport.channelType,
      text: "go",
      renderer,
      release,
      policy: { decider: spy },
    },
  );
  return { provider, registry, decider, prompted };
}

export function channelContract(harness: ChannelHarness, results: Map<string, CheckResult>): void {
  const caps = harness.capabilities;
  const check = (name: (typeof CONTRACT_CHECKS)[number], fn: () => Promise<void>, timeoutMs = 30_000) =>
    it(
      name,
      async () => {
        results.set(name, false);
        await fn();
        results.set(name, true);
      },
      timeoutMs,
    );

  describe(`channel contract: ${harness.name}`, () => {
    check("authorize is deny-by-default and audits refusals", async () => {
      const audit = new MemoryAuditSink();
      const t = harness.unconfigured(audit);
      const h = await harness.configured(new MemoryAuditSink());
      try {
        const outcome = await t.receive(h.envelope(h.allowedUser, "hi"));
        expect(outcome.status).toBe("denied");
        expect(audit.find("inbound", "denied")).toHaveLength(1);
        const stranger = await h.transport.receive(h.envelope("someone-else", "hi"));
        expect(stranger.status).toBe("denied");
        expect((await h.transport.receive(h.envelope(h.allowedUser, "hi"))).status).toBe("dispatched");
      } finally {
        await h.close();
      }
    });

    check("bot-authored messages are dropped", async () => {
      const h = await harness.configured(new MemoryAuditSink());
      try {
        expect(await h.transport.receive(h.envelope(h.allowedUser, "hi", { bot: true }))).toEqual({
          status: "dropped",
          reason: "bot_authored",
        });
      } finally {
        await h.close();
      }
    });

    check("no outbound message over the declared cap", async () => {
      const h = await harness.configured(new MemoryAuditSink());
      try {
        const para = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(8);
        const long = Array.from({ length: Math.ceil((caps.maxMessageChars * 2.5) / para.length) }, (_, i) =>
          i % 5 === 4 ? `\`\`\`ts\nconst x${i} = ${i};\n\`\`\`\n` : `${para}\n\n`,
        );
        await runTurn(h, [...long.map(text), done]);
        const sent = h.outbound();
        expect(sent.length).toBeGreaterThan(2);
        for (const m of sent) {
          expect(Array.from(m.text).length).toBeLessThanOrEqual(caps.maxMessageChars);
          if (caps.maxMessageBytes > 0)
            expect(Buffer.byteLength(m.text)).toBeLessThanOrEqual(caps.maxMessageBytes);
        }
      } finally {
        await h.close();
      }
    });

    check("choices capped at maxButtons, overflow numbered", async () => {
      const h = await harness.configured(new MemoryAuditSink());
      try {
        const n = Math.max(0, caps.maxButtons) + 2;
        const choices = Array.from({ length: n }, (_, i) => `Choice ${i + 1}`);
        await runTurn(h, [text(`Pick one:\n[OPTIONS: ${choices.join(" | ")}]`), done]);
        const sent = h.outbound();
        for (const m of sent) expect(m.buttons).toBeLessThanOrEqual(Math.max(0, caps.maxButtons));
        const all = sent.map((m) => m.text).join("\n");
        expect(all).toContain(`${n}. Choice ${n}`);
        expect(all).not.toContain("[OPTIONS:");
      } finally {
        await h.close();
      }
    });

    check("filesOutbound=false keeps the path visible", async () => {
      const h = await harness.configured(new MemoryAuditSink());
      try {
        await runTurn(h, [text("Here is the chart: ![chart](./out/chart.png)"), done]);
        const all = h
          .outbound()
          .map((m) => m.text)
          .join("\n");
        if (!caps.filesOutbound) expect(all).toContain("./out/chart.png");
      } finally {
        await h.close();
      }
    });

    check("returnsMessageId matches sendMessage", async () => {
      const h = await harness.configured(new MemoryAuditSink());
      try {
        const id = await h.transport.sendMessage(h.conversationId, "ping");
        expect(deliveryConfirmed(caps, id)).toBe(true);
        if (caps.returnsMessageId) expect(id.length).toBeGreaterThan(0);
        else expect(id).toBe("");
      } finally {
        await h.close();
      }
    });

    check("a planted credential never reaches any outbound payload", async () => {
      const h = await harness.configured(new MemoryAuditSink());
      try {
        await runTurn(h, [
          ...SMUGGLED.map((k) => text(`key ${k} here\n\n`)),
          { type: "thinking", text: `thinking about ${KEY}` },
          { type: "tool_call", toolCallId: "t", title: `curl -H "x: ${KEY}"`, kind: "fetch" },
          text(`[OPTIONS: use ${KEY} | no]`),
          done,
        ]);
        await h.transport.sendMessage(h.conversationId, `proactive ${SMUGGLED[0]}`);
        for (const m of h.outbound()) {
          for (const form of [m.text, ...m.rendered]) {
            expect(form).not.toContain(KEY);
            expect(visible(form)).not.toContain(KEY);
          }
        }
      } finally {
        await h.close();
      }
    });

    check(
      "a credential in any disguise never shows in what the platform displays",
      async () => {
        // Every kind in every disguise it applies to (escapes, entities, zero-width, ANSI, split across
        // chunks and link syntax, emphasis halves), streamed the way each disguise arrives, in batches.
        const samples = APPLICABLE_PAIRS.map(([kind, disguise], i) =>
          disguisedCredential(kind, disguise, 1000 + i),
        );
        for (let start = 0; start < samples.length; start += DISGUISE_BATCH) {
          const batch = samples.slice(start, start + DISGUISE_BATCH);
          const h = await harness.configured(new MemoryAuditSink());
          try {
            await runTurn(h, [...batch.flatMap((s) => [...s.chunks.map(text), text("\n\n")]), done]);
            const forms = h.outbound().flatMap((m) => [displayed(m.text), ...m.rendered.map(displayed)]);
            for (const sample of batch)
              for (const form of forms)
                expect(
                  survivesIn(form, sample),
                  `${sample.kind} / ${sample.disguise}: ${form.slice(0, 200)}`,
                ).toBe(false);
          } finally {
            await h.close();
          }
        }
      },
      // Nineteen whole turns through each real renderer; Slack paces its appends on a real clock.
      300_000,
    );

    check("a stale approval nonce never approves", async () => {
      const h = await harness.configured(new MemoryAuditSink());
      try {
        const permission = permissionRequest();
        let stale = "";
        const { provider } = await runTurn(h, [permission, done], {
          press: (requestId, nonce, d) => {
            stale = `${nonce}x`;
            // A forged or stale nonce must not approve; the prompt then times out to DENY.
            expect(d.press("conformance", requestId, stale, "approve")).toBe(RECEIPT_EXPIRED);
            expect(d.press("conformance", requestId, "", "approve")).toBe(RECEIPT_EXPIRED);
          },
        });
        expect(stale).not.toBe("");
        expect(provider.answers).toEqual([{ requestId: "r1", verdict: "deny" }]);
      } finally {
        await h.close();
      }
    });

    check("a muted conversation sends nothing", async () => {
      const h = await harness.configured(new MemoryAuditSink());
      try {
        const before = h.outbound().length;
        const store: TurnStore = {
          isMuted: () => true,
          setOriginLink: () => {},
          batch: async (fn) => fn(),
          getMirrorLink: () => null,
          setMirrorLink: () => {},
          clearMirrorLink: () => false,
          clearMirrorLinksAt: () => [],
          mirrorOptOut: () => true,
          setMirrorOptOut: () => {},
        };
        await runTurn(h, [text("secret answer"), done], { store });
        expect(h.outbound().length).toBe(before);
      } finally {
        await h.close();
      }
    });
  });
}

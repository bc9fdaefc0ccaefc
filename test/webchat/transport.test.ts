import { describe, expect, it } from "vitest";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { webchatCommands } from "../../src/webchat/commands.js";

const kit = webchatCommands();
const parseCommand = (text: string) => {
  const p = kit.parse(text);
  return p?.kind === "command" ? p : null;
};
const helpText = () => kit.help();

import type { ServerFrame } from "../../src/webchat/protocol.js";
import { clientFrameSchema } from "../../src/webchat/protocol.js";
import { WebChatTransport } from "../../src/webchat/transport.js";
import { testDrops } from "../helpers/drops.js";

function admitted() {
  const frames: ServerFrame[] = [];
  const t = new WebChatTransport({
    drops: testDrops(new MemoryAuditSink(), "webchat"),
    audit: new MemoryAuditSink(),
  });
  t.admit("owner", (_c, f) => frames.push(f));
  t.open("c1");
  return { t, frames };
}

describe("WebChatTransport rendering", () => {
  it("model output can never inject markup or script", () => {
    const { t } = admitted();
    const id = t.post("c1", {
      role: "assistant",
      text: '<script>alert(1)</script> <img src=x onerror="alert(2)"> [click](javascript:alert(3)) <b>bold</b>',
      final: true,
    });
    const html = t.bubbles("c1").find((b) => b.id === id)?.html ?? "";
    expect(html).not.toMatch(/<script|<img|<b>/i);
    expect(html).not.toContain('href="javascript:');
    expect(html).toContain("&lt;script&gt;");
  });

  it("renders fenced code and tables, links open safely", () => {
    const { t } = admitted();
    const id = t.post("c1", {
      role: "assistant",
      text: "```ts\nconst x = 1;\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n[docs](https://example.com)",
      final: true,
    });
    const html = t.bubbles("c1").find((b) => b.id === id)?.html ?? "";
    expect(html).toContain('<pre><code class="language-ts">');
    expect(html).toContain("<table>");
    expect(html).toContain('rel="noopener noreferrer nofollow"');
  });

  it("redacts in display form before rendering, in text and status", () => {
    const { t, frames } = admitted();
    t.post("c1", {
      role: "assistant",
      text: "key AKIA**IOSFODNN7EXAMPLE**",
      status: "🔧 curl AKIAIOSFODNN7EXAMPLE",
      final: true,
    });
    const wire = JSON.stringify(frames);
    expect(wire).not.toContain("IOSFODNN7EXAMPLE");
  });

  it("edits in place and keeps a bounded history", () => {
    const { t } = admitted();
    const id = t.post("c1", { role: "assistant", text: "a", final: false });
    expect(t.edit("c1", id, { text: "ab", final: true })).toBe(true);
    expect(t.bubbles("c1").find((b) => b.id === id)?.text).toBe("ab");
    expect(t.edit("c1", "missing", { text: "x" })).toBe(false);
    for (let i = 0; i < 600; i++) t.post("c1", { role: "system", text: `${i}`, final: true });
    expect(t.bubbles("c1").length).toBe(500);
  });

  it("proactive sends reach only a conversation a page opened, and only once admitted", async () => {
    const unadmitted = new WebChatTransport({
      drops: testDrops(new MemoryAuditSink(), "webchat"),
      audit: new MemoryAuditSink(),
    });
    unadmitted.open("c1");
    expect(unadmitted.maySendTo("c1", undefined, { principal: "" })).toBe(false);
    const { t } = admitted();
    expect(t.maySendTo("c1", undefined, { principal: "" })).toBe(true);
    expect(t.maySendTo("never-opened", undefined, { principal: "" })).toBe(false);
    expect(await t.sendMessage("never-opened", "x")).toBe("");
  });

  it("parley's own notice is a system bubble, a proactive send otherwise the agent's", async () => {
    const { t } = admitted();
    const alert = await t.sendMessage("c1", "⚠️ parley restarted after an unclean stop", undefined, {
      notice: true,
    });
    const said = await t.sendMessage("c1", "the report is ready");
    const roles = new Map(t.bubbles("c1").map((b) => [b.id, b.role]));
    expect([roles.get(alert), roles.get(said)]).toEqual(["system", "assistant"]);
  });
});

describe("web chat protocol and commands", () => {
  it("validates client frames strictly", () => {
    expect(clientFrameSchema.safeParse({ type: "message", text: "hi" }).success).toBe(true);
    expect(clientFrameSchema.safeParse({ type: "message", text: "" }).success).toBe(false);
    expect(clientFrameSchema.safeParse({ type: "message", text: "hi", extra: 1 }).success).toBe(false);
    expect(
      clientFrameSchema.safeParse({ type: "press", requestId: "r", nonce: "n", verdict: "maybe" }).success,
    ).toBe(false);
    expect(clientFrameSchema.safeParse({ type: "nuke" }).success).toBe(false);
  });

  it("one table drives parsing and help", () => {
    expect(parseCommand("/stop")?.spec.name).toBe("stop");
    expect(parseCommand("/cancel")?.spec.name).toBe("stop");
    expect(parseCommand("/queue /new")).toMatchObject({ spec: { name: "queue" }, arg: "/new" });
    expect(parseCommand("/etc/hosts")).toBeNull();
    expect(parseCommand("/unknown")).toBeNull();
    expect(parseCommand("/model Demo Deep")).toMatchObject({ spec: { name: "model" }, arg: "Demo Deep" });
    expect(parseCommand("/compact")?.spec.name).toBe("compact");
    for (const name of ["/new", "/stop", "/yolo", "/queue", "/steer", "/compact", "/model", "/help"])
      expect(helpText()).toContain(name);
  });
});

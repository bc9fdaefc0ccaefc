/**
 * AcpProvider against deliberately broken agents (test/fakes/acp): every failure ends the turn
 * with a clear ParleyError or a cancelled complete within its budget, never a hang, never a zombie.
 * Plus the pure mapping rules (option choice by kind, update mapping).
 */
import type { PermissionOption as AcpOption, SessionUpdate } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { ParleyError } from "../../src/messaging/base/errors.js";
import type { PermissionVerdict } from "../../src/messaging/turn/provider-events.js";
import { chooseOutcome, UpdateMapper } from "../../src/providers/acp-mapping.js";
import { AcpProvider, type AcpProviderOptions } from "../../src/providers/index.js";
import {
  collect,
  collectError,
  expectGone,
  fakeAgentProvider,
  type LogLine,
  textOf,
  zombieChildren,
} from "./helpers.js";

const providers: AcpProvider[] = [];

function fake(name: string, extra: Partial<AcpProviderOptions> & { argv?: string[] } = {}) {
  const spawned = fakeAgentProvider(name, extra);
  providers.push(spawned.provider);
  return spawned;
}

afterEach(async () => {
  const closing = providers.splice(0);
  await Promise.all(closing.map((p) => p.close()));
  for (const p of closing) if (p.pid !== undefined) expectGone(p.pid);
  expect(zombieChildren()).toEqual([]);
});

function expectParleyError(error: unknown, code: ParleyError["code"], message: RegExp): void {
  expect(error).toBeInstanceOf(ParleyError);
  expect((error as ParleyError).code).toBe(code);
  expect((error as ParleyError).message).toMatch(message);
}

const logged = (logs: LogLine[], pattern: RegExp) => logs.some((l) => pattern.test(l.msg));

describe("AcpProvider with broken agents", () => {
  it("a missing binary is PROVIDER_SPAWN_FAILED from start() and from the prompt iterable", async () => {
    const p = new AcpProvider({ command: "/nonexistent/parley-no-such-agent", logger: () => {} });
    providers.push(p);
    const { error, seen } = await collectError(p.prompt("hi"));
    expect(seen).toEqual([]);
    expectParleyError(error, "PROVIDER_SPAWN_FAILED", /parley-no-such-agent.*ENOENT/);
    // Every attempt tries again (the binary may have been installed since), and says why it failed.
    await expect(p.start()).rejects.toMatchObject({
      code: "PROVIDER_SPAWN_FAILED",
      message: (error as Error).message,
    });
    expect(p.pid).toBeUndefined();
    expect(p.hasActiveTurn()).toBe(false);
  });

  it("non-JSON on stdout mid-turn is PROVIDER_PROTOCOL, after the output that preceded it", async () => {
    const { provider, logs } = fake("garbage-stdout");
    const { seen, error } = await collectError(provider.prompt("hi"));
    expectParleyError(error, "PROVIDER_PROTOCOL", /non-JSON output on stdout/);
    expect(textOf(seen)).toBe("partial answer");
    expect(provider.hasActiveTurn()).toBe(false);
    // The line itself goes to the log only: it may contain anything.
    expect((error as Error).message).not.toContain("Traceback");
    expect(logs.some((l) => String(l.fields?.preview).startsWith("Traceback"))).toBe(true);
  });

  it("non-JSON on stdout before the handshake fails start()", async () => {
    const { provider } = fake("garbage-stdout", { argv: ["start"] });
    const { error } = await collectError(provider.prompt("hi"));
    expectParleyError(error, "PROVIDER_PROTOCOL", /non-JSON/);
    await expect(provider.start()).rejects.toMatchObject({ code: "PROVIDER_PROTOCOL" });
  });

  it("an agent exiting mid-turn is PROVIDER_EXITED with its exit code; the next turn gets a new agent", async () => {
    const { provider } = fake("exit-mid-turn");
    const { seen, error } = await collectError(provider.prompt("hi"));
    expectParleyError(error, "PROVIDER_EXITED", /exited \(code 3\)/);
    expect(textOf(seen)).toBe("about to crash");
    expect(provider.hasActiveTurn()).toBe(false);
    const dead = provider.pid;
    expectGone(dead);
    // The dead agent is replaced by the next turn (this fake crashes again, on a new process).
    const next = await collectError(provider.prompt("again"));
    expect(textOf(next.seen)).toBe("about to crash");
    expectParleyError(next.error, "PROVIDER_EXITED", /exited \(code 3\)/);
    expect(next.error).not.toBe(error);
    expect(provider.pid).not.toBe(dead);
  });

  it("a JSON-RPC error for session/prompt fails that turn only", async () => {
    const { provider } = fake("prompt-error");
    const { error } = await collectError(provider.prompt("hi"));
    expectParleyError(error, "PROVIDER_PROTOCOL", /^agent failed the turn: model overloaded$/);
    const next = await collect(provider.prompt("again"));
    expect(textOf(next)).toBe("second try works");
    expect(next.at(-1)).toEqual({ type: "complete", stopReason: "end_turn" });
  });

  it("a missing working directory is reported as such, not as a missing command", async () => {
    const { provider } = fake("permission-wait", { cwd: "/nonexistent/parley-cwd" });
    await expect(provider.start()).rejects.toMatchObject({
      code: "PROVIDER_SPAWN_FAILED",
      message: "agent working directory does not exist: /nonexistent/parley-cwd",
    });
    expect(provider.pid).toBeUndefined();
  });

  it("refuses an agent that answers initialize with another protocol version", async () => {
    const { provider } = fake("wrong-version");
    await expect(provider.start()).rejects.toThrow(/protocol version 2; parley speaks only version 1/);
    await expect(provider.start()).rejects.toMatchObject({ code: "PROVIDER_PROTOCOL" });
  });

  it("an unanswered permission request is rejected by parley's own timeout", async () => {
    const { provider, logs } = fake("permission-wait", { permissionTimeoutMs: 200 });
    const started = Date.now();
    const events = await collect(provider.prompt("delete it"));
    expect(events.find((e) => e.type === "permission_request")).toMatchObject({
      toolCallId: "t1",
      title: "Delete build/",
      kind: "delete",
    });
    expect(textOf(events)).toBe("fake received: opt-z (reject_once)");
    expect(events.at(-1)).toEqual({ type: "complete", stopReason: "end_turn" });
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(logged(logs, /unanswered; rejecting/)).toBe(true);
  });

  it.each<[PermissionVerdict, string]>([
    ["approve", "opt-x (allow_once)"],
    ["approve_always", "opt-w (allow_always)"],
    ["deny", "opt-z (reject_once)"],
    ["cancelled", "cancelled"],
  ])("answers %s by option kind, never by id or position", async (verdict, expected) => {
    const { provider } = fake("permission-wait");
    const events = await collect(provider.prompt("delete it"), (e) => {
      if (e.type === "permission_request") provider.answerPermission(e.requestId, verdict);
    });
    expect(textOf(events)).toBe(`fake received: ${expected}`);
  });

  it("an agent that ignores session/cancel is hard-stopped after the budget", async () => {
    const { provider, logs } = fake("ignore-cancel");
    let cancelled: Promise<boolean> | undefined;
    let cancelAt = 0;
    const events = await collect(provider.prompt("go"), (e, seen) => {
      if (e.type === "text" && seen.length >= 3 && !cancelled) {
        cancelAt = Date.now();
        cancelled = provider.cancel();
      }
    });
    expect(events.at(-1)).toEqual({ type: "complete", stopReason: "cancelled" });
    expect(await cancelled).toBe(false);
    // 300 ms cancel budget + 300 ms SIGTERM grace, then SIGKILL and reap.
    expect(Date.now() - cancelAt).toBeLessThan(3_000);
    expectGone(provider.pid);
    expect(logged(logs, /did not end the turn within 300 ms of session\/cancel; hard-stopping/)).toBe(true);
    expect(logged(logs, /ignored SIGTERM; sending SIGKILL/)).toBe(true);
    expect(provider.hasActiveTurn()).toBe(false);
    // The next turn runs on a fresh agent process (this one ignores cancel too: stopped the same way).
    const stopped = provider.pid;
    let again: Promise<boolean> | undefined;
    const next = await collect(provider.prompt("again"), (e, seen) => {
      if (e.type === "text" && seen.length === 2) again = provider.cancel();
    });
    expect(textOf(next)).toMatch(/^tick /);
    expect(next.at(-1)).toEqual({ type: "complete", stopReason: "cancelled" });
    expect(await again).toBe(false);
    expect(provider.pid).not.toBe(stopped);
    expectGone(provider.pid);
  });

  it("close() is idempotent and works before start", async () => {
    const { provider } = fake("permission-wait");
    await Promise.all([provider.close(), provider.close()]);
    await expect(provider.start()).rejects.toMatchObject({ code: "PROVIDER_EXITED" });
    expect(await provider.cancel()).toBe(true);
  });
});

describe("permission option choice", () => {
  const opt = (kind: AcpOption["kind"], optionId = `id-${kind}`): AcpOption => ({
    optionId,
    name: kind,
    kind,
  });
  const all = [opt("reject_always"), opt("allow_always"), opt("reject_once"), opt("allow_once")];

  it.each<[PermissionVerdict, AcpOption[], string]>([
    ["approve", all, "id-allow_once"],
    ["approve_always", all, "id-allow_always"],
    ["approve_always", [opt("allow_once"), opt("reject_once")], "id-allow_once"],
    ["deny", all, "id-reject_once"],
    ["deny", [opt("allow_once"), opt("reject_always")], "id-reject_always"],
    // Approval never widens: no allow_once means a reject, not allow_always.
    ["approve", [opt("allow_always"), opt("reject_once")], "id-reject_once"],
  ])("%s with %j picks %s", (verdict, options, optionId) => {
    expect(chooseOutcome(options, verdict)).toEqual({ outcome: "selected", optionId });
  });

  it("falls back to cancelled when no reject option exists, and for a cancelled verdict", () => {
    expect(chooseOutcome([opt("allow_once")], "deny")).toEqual({ outcome: "cancelled" });
    expect(chooseOutcome(all, "cancelled")).toEqual({ outcome: "cancelled" });
  });
});

describe("session/update mapping", () => {
  it("maps usage to a percentage, clamped", () => {
    const m = new UpdateMapper();
    expect(m.map({ sessionUpdate: "usage_update", used: 50_000, size: 200_000 })).toEqual({
      events: [{ type: "usage", used: 50_000, size: 200_000 }],
      contextUsagePct: 25,
    });
    expect(m.map({ sessionUpdate: "usage_update", used: 9, size: 0 }).contextUsagePct).toBeUndefined();
    expect(m.map({ sessionUpdate: "usage_update", used: 300, size: 200 }).contextUsagePct).toBe(100);
  });

  it("collects compaction summary chunks into the completed compaction event", () => {
    const m = new UpdateMapper();
    m.map({ sessionUpdate: "usage_update", used: 10_000, size: 100_000 });
    const chunk = (text: string): SessionUpdate => ({
      sessionUpdate: "compaction_summary_chunk",
      compactionId: "c1",
      content: { type: "text", text },
    });
    expect(m.map({ sessionUpdate: "compaction_update", compactionId: "c1", status: "in_progress" })).toEqual({
      events: [{ type: "compaction", contextUsagePct: 10 }],
    });
    expect(m.map(chunk("We fixed ")).events).toEqual([]);
    m.map(chunk("the build."));
    expect(m.map({ sessionUpdate: "compaction_update", compactionId: "c1", status: "completed" })).toEqual({
      events: [{ type: "compaction", contextUsagePct: 10, summary: "We fixed the build." }],
    });
  });

  it("takes a tool's purpose from rawInput.description, else from its text content", () => {
    const m = new UpdateMapper();
    const fromContent = m.map({
      sessionUpdate: "tool_call",
      toolCallId: "a",
      title: "Run tests",
      kind: "execute",
      content: [{ type: "content", content: { type: "text", text: " Check the fix " } }],
      _meta: { mcp: { server: "x" } },
    });
    expect(fromContent.events).toEqual([
      {
        type: "tool_call",
        toolCallId: "a",
        title: "Run tests",
        kind: "execute",
        purpose: "Check the fix",
        meta: { mcp: { server: "x" } },
      },
    ]);
    expect(m.toolInfo({ toolCallId: "a" })).toEqual({ title: "Run tests", kind: "execute" });
    const done = m.map({ sessionUpdate: "tool_call", toolCallId: "b", title: "Read", status: "completed" });
    expect(done.events).toEqual([
      { type: "tool_call", toolCallId: "b", title: "Read", kind: "other" },
      { type: "tool_result", toolCallId: "b", status: "completed", final: true },
    ]);
  });

  it("ignores updates parley has no event for, and non-text chunks", () => {
    const m = new UpdateMapper();
    expect(m.map({ sessionUpdate: "current_mode_update", currentModeId: "code" })).toEqual({
      events: [],
      ignored: "current_mode_update",
    });
    expect(
      m.map({
        sessionUpdate: "agent_message_chunk",
        content: { type: "image", data: "", mimeType: "image/png" },
      }).events,
    ).toEqual([]);
  });
});

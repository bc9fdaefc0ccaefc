/**
 * The real AcpProvider against the demo agent as a real subprocess: every scenario, permissions,
 * cancel, steer and close, with no process left behind.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ProviderEvent } from "../../src/messaging/turn/provider-events.js";
import { pickScenario, receivedNote } from "../../src/providers/demo-agent-script.js";
import type { AcpProvider } from "../../src/providers/index.js";
import { collect, demoProvider, expectGone, textOf, zombieChildren } from "./helpers.js";

const providers: AcpProvider[] = [];

function demo(speed = "0"): AcpProvider {
  const provider = demoProvider(speed);
  providers.push(provider);
  return provider;
}

afterEach(async () => {
  const closing = providers.splice(0);
  await Promise.all(closing.map((p) => p.close()));
  for (const p of closing) expectGone(p.pid);
  expect(zombieChildren()).toEqual([]);
});

const last = (events: ProviderEvent[]): ProviderEvent | undefined => events[events.length - 1];

describe("demo agent scenarios", () => {
  it("streams a full turn: thinking, markdown with a table, usage, complete end_turn", async () => {
    const p = demo();
    await p.start();
    expect(p.supportsSteer).toBe(true);
    expect(p.cwd).toBe(process.cwd());
    const events = await collect(p.prompt("show me a table please"));
    expect(last(events)).toEqual({ type: "complete", stopReason: "end_turn" });
    expect(events.filter((e) => e.type === "complete")).toHaveLength(1);
    // Commands announced right after session/new arrive with the first turn.
    expect(events.find((e) => e.type === "available_commands")).toMatchObject({
      commands: expect.arrayContaining([{ name: "help", description: "List the demo scenarios" }]),
    });
    expect(textOf(events, "thinking")).toContain("reads best as a table");
    const text = textOf(events);
    expect(text).toContain("| Platform | Max message | Edits | Choice widgets |");
    expect(text).toContain("| Discord | 2,000 chars | yes | buttons, 5 per row |");
    expect(events.filter((e) => e.type === "text").length).toBeGreaterThan(10); // small chunks
    const usage = events.find((e) => e.type === "usage");
    expect(usage).toMatchObject({ type: "usage", size: 200_000 });
    expect(p.contextUsagePct).toBeGreaterThan(0);
    expect(p.contextUsagePct).toBeLessThan(100);
    expect(p.hasActiveTurn()).toBe(false);
  });

  it("names the files that came with a prompt before answering, and says nothing of files otherwise", async () => {
    const p = demo();
    const withFiles = textOf(
      await collect(
        p.prompt([
          { type: "text", text: "what is in these?" },
          { type: "resource_link", uri: "file:///tmp/parley-demo/notes.md", name: "notes.md" },
          { type: "resource_link", uri: "file:///tmp/parley-demo/chart.png", name: "chart.png" },
        ]),
      ),
    );
    expect(withFiles.startsWith("📎 I received 2 files: notes.md, chart.png.\n\n")).toBe(true);
    expect(textOf(await collect(p.prompt("hello")))).not.toContain("📎");
    expect(receivedNote([{ type: "image" }])).toBe("📎 I received one file: an image.");
    expect(receivedNote([{ type: "text" }])).toBe("");
  });

  it("greets with a fenced code block, and runs several turns in one session", async () => {
    const p = demo();
    const hello = textOf(await collect(p.prompt("hello")));
    expect(hello).toMatch(/```bash\n[^`]+\n```/);
    for (const word of ["table", "long", "tool", "options", "slow", "secret"]) expect(hello).toContain(word);
    const second = await collect(p.prompt([{ type: "text", text: "what can you do?" }]));
    expect(last(second)).toEqual({ type: "complete", stopReason: "end_turn" });
    expect(second.some((e) => e.type === "available_commands")).toBe(false);
  });

  it("long: about 12k characters of headings, lists and balanced code fences", async () => {
    const events = await collect(demo().prompt("give me the long version"));
    const text = textOf(events);
    expect(text.length).toBeGreaterThan(11_000);
    expect(text.length).toBeLessThan(14_000);
    expect(text.match(/^## /gm)?.length).toBeGreaterThanOrEqual(8);
    expect(text.match(/^```/gm)?.length ?? 0).toBeGreaterThanOrEqual(16);
    expect((text.match(/^```/gm)?.length ?? 0) % 2).toBe(0);
    expect(text).toMatch(/^- \[ \] /m);
    expect(text).toMatch(/^1\. /m);
  });

  it("options: the answer ends with the spec's [OPTIONS: ...] trailer", async () => {
    const text = textOf(await collect(demo().prompt("options")));
    expect(text.endsWith("\n\n[OPTIONS: Yes | No | Maybe]")).toBe(true);
  });

  it("secret: the output carries a fake AWS key for the redaction demo", async () => {
    const text = textOf(await collect(demo().prompt("secret")));
    expect(text).toContain("AKIAIOSFODNN7EXAMPLE");
    expect(text).toContain("```ini");
  });

  it("picks the first scenario word in the prompt", () => {
    expect(pickScenario("a slow table")).toBe("slow");
    expect(pickScenario("Tables?")).toBe("hello");
    expect(pickScenario("TOOL time")).toBe("tool");
    expect(pickScenario("")).toBe("hello");
  });
});

describe("permissions through the demo agent", () => {
  it("approved: the agent reports the verdict and the tool completes", async () => {
    const p = demo();
    const events = await collect(p.prompt("use the tool"), (e) => {
      if (e.type === "permission_request") p.answerPermission(e.requestId, "approve");
    });
    const request = events.find((e) => e.type === "permission_request");
    expect(request).toMatchObject({
      toolCallId: "call-write-notes",
      title: "Write notes.md",
      kind: "edit",
      options: [
        { optionId: "allow", name: "Allow once", kind: "allow_once" },
        { optionId: "always", name: "Always allow", kind: "allow_always" },
        { optionId: "reject", name: "Reject", kind: "reject_once" },
      ],
    });
    const types = events.map((e) => e.type);
    expect(types.indexOf("tool_call")).toBeLessThan(types.indexOf("permission_request"));
    expect(events.find((e) => e.type === "tool_call")).toMatchObject({
      purpose: "Save a summary of this conversation to notes.md",
    });
    expect(events.find((e) => e.type === "plan")).toMatchObject({ entries: expect.any(Array) });
    expect(events.filter((e) => e.type === "tool_result").at(-1)).toEqual({
      type: "tool_result",
      toolCallId: "call-write-notes",
      status: "completed",
      final: true,
    });
    expect(textOf(events)).toContain("Permission approved (allow_once)");
    expect(last(events)).toEqual({ type: "complete", stopReason: "end_turn" });
  });

  it("denied: the agent reports the denial and the tool fails", async () => {
    const p = demo();
    const events = await collect(p.prompt("tool"), (e) => {
      if (e.type === "permission_request") p.answerPermission(e.requestId, "deny");
    });
    expect(textOf(events)).toContain("Permission denied (reject_once)");
    expect(events.filter((e) => e.type === "tool_result").at(-1)).toMatchObject({
      status: "failed",
      final: true,
    });
  });

  it("approve_always selects the allow_always option", async () => {
    const p = demo();
    const events = await collect(p.prompt("tool"), (e) => {
      if (e.type === "permission_request") p.answerPermission(e.requestId, "approve_always");
    });
    expect(textOf(events)).toContain("Permission approved (allow_always)");
  });
});

describe("cancel, steer and close", () => {
  it("cancels a slow turn mid-stream: acknowledged, stopReason cancelled", async () => {
    const p = demo();
    await p.start();
    let acked: Promise<boolean> | undefined;
    const started = Date.now();
    const events = await collect(p.prompt("slow"), (e, seen) => {
      if (e.type === "text" && !acked && seen.filter((x) => x.type === "text").length >= 3) {
        expect(p.hasActiveTurn()).toBe(true);
        acked = p.cancel();
      }
    });
    expect(await acked).toBe(true);
    expect(last(events)).toEqual({ type: "complete", stopReason: "cancelled" });
    expect(Date.now() - started).toBeLessThan(5_000); // the full stream takes ~10 s
    expect(textOf(events)).not.toContain("All forty modules checked.");
    expect(p.hasActiveTurn()).toBe(false);
    // The agent survives a cooperative cancel and takes the next turn.
    expect(last(await collect(p.prompt("hello")))).toEqual({ type: "complete", stopReason: "end_turn" });
  });

  it("cancel answers a pending permission request with cancelled", async () => {
    const p = demo();
    let acked: Promise<boolean> | undefined;
    let requestId = "";
    const events = await collect(p.prompt("tool"), (e) => {
      if (e.type === "permission_request") {
        requestId = e.requestId;
        acked = p.cancel();
      }
    });
    expect(await acked).toBe(true);
    expect(last(events)).toEqual({ type: "complete", stopReason: "cancelled" });
    expect(textOf(events)).not.toContain("Permission");
    p.answerPermission(requestId, "approve"); // already settled: ignored
    expect(p.hasActiveTurn()).toBe(false);
  });

  it("steers a running turn: injected, acknowledged in the stream, steer_consumed emitted", async () => {
    const p = demo();
    await p.start();
    expect(await p.steer("before any turn")).toBe(false); // the idle guard
    let steered: Promise<boolean> | undefined;
    const events = await collect(p.prompt("slow"), async (e, seen) => {
      if (e.type === "text" && !steered && seen.filter((x) => x.type === "text").length >= 2) {
        steered = p.steer("please  also check\nthe tests");
        expect(await steered).toBe(true);
      }
      if (e.type === "text" && textOf(seen).includes("Steer received:")) await p.cancel();
    });
    expect(textOf(events)).toContain("> **Steer received:** please also check the tests");
    expect(events.find((e) => e.type === "steer_consumed")).toEqual({
      type: "steer_consumed",
      id: expect.stringMatching(/^steer-/),
      summary: "please also check the tests",
    });
    expect(last(events)).toEqual({ type: "complete", stopReason: "cancelled" });
    expect(await p.steer("after the turn")).toBe(false);
  });

  it("close() mid-turn ends the turn as cancelled and reaps the agent", async () => {
    const p = demo();
    let closing: Promise<void> | undefined;
    const events = await collect(p.prompt("slow"), (e) => {
      if (e.type === "text") closing ??= p.close();
    });
    await closing;
    expect(last(events)).toEqual({ type: "complete", stopReason: "cancelled" });
    expectGone(p.pid);
    await p.close(); // idempotent
  });

  it("a consumer that stops reading cancels the turn", async () => {
    const p = demo();
    for await (const e of p.prompt("slow")) {
      if (e.type === "text") break;
    }
    expect(p.hasActiveTurn()).toBe(false);
    expect(last(await collect(p.prompt("options")))).toEqual({ type: "complete", stopReason: "end_turn" });
  });
});

/**
 * probeAgent, doctor's ACP handshake (initialize, session/new, close) against real subprocesses:
 * what a working agent reports, and the first error line (redacted, with stderr) of one that is
 * missing, cannot open a session, or dies at start. No process is left behind.
 */
import { afterEach, describe, expect, it } from "vitest";
import { demoAgentCommand, probeAgent } from "../../src/providers/index.js";
import { fakeAgent, zombieChildren } from "./helpers.js";

afterEach(() => {
  expect(zombieChildren()).toEqual([]);
});

const multi = (...argv: string[]) => ({
  command: process.execPath,
  args: [fakeAgent("multi"), ...argv],
  env: { FAKE_STORE: "/nonexistent" },
  cwd: process.cwd(),
});

describe("probeAgent", () => {
  it("reports the demo agent's name, version, capabilities, models and commands", async () => {
    const result = await probeAgent({ ...demoAgentCommand(), cwd: process.cwd() }, { timeoutMs: 20_000 });
    expect(result).toMatchObject({
      ok: true,
      agent: { name: "parley-demo-agent", version: "0.1.0" },
      capabilities: { loadSession: false, closeSession: true, steering: true, image: false },
      commands: ["help", "compact"],
    });
    expect(result.ok && result.models.length).toBeGreaterThan(1);
  });

  it("a missing binary fails at start with ENOENT", async () => {
    const result = await probeAgent({ command: "/nonexistent/parley-agent", args: [], cwd: process.cwd() });
    expect(result).toMatchObject({ ok: false, stage: "start", stderr: [] });
    expect(!result.ok && result.error).toMatch(/parley-agent.*ENOENT/);
  });

  it("an agent whose session/new fails is unhealthy, with its reason", async () => {
    const result = await probeAgent(multi("auth"), { timeoutMs: 10_000 });
    expect(result).toMatchObject({
      ok: false,
      stage: "session",
      error: "agent requires authentication: log in with its own CLI",
    });
  });

  it("an agent that dies at start: its exit and first stderr lines, redacted", async () => {
    const result = await probeAgent(multi("stderr"), { timeoutMs: 10_000 });
    expect(result).toMatchObject({ ok: false, stage: "start" });
    if (result.ok) return;
    expect(result.error).toMatch(/exited \(code 1\)/);
    expect(result.stderr[0]).toMatch(/^fatal: config invalid, token=\[REDACTED/);
    expect(result.stderr[1]).toBe("second line");
    expect(JSON.stringify(result)).not.toContain("sk-ant-api03");
  });
});

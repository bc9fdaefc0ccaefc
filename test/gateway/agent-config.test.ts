/** The agent pool's configuration keys: their defaults, their bounds, and the demo agent's share. */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/gateway/config.js";
import { resolveAgent } from "../../src/gateway/gateway.js";

describe("agent pool configuration", () => {
  it("defaults: 4 processes x 16 sessions, 10 minutes idle, a notice after 30 s of silence", () => {
    const config = parseConfig({ agent: { command: "my-agent" } }, {});
    expect(config.agent).toMatchObject({
      maxProcesses: 4,
      maxSessionsPerProcess: 16,
      idleTimeoutSeconds: 600,
      silenceNoticeSeconds: 30,
    });
    // The bundled demo agent gets the same pool defaults.
    expect(resolveAgent(parseConfig({}, {}))).toMatchObject({ maxProcesses: 4, idleTimeoutSeconds: 600 });
    // Pool settings without a command tune the demo agent.
    expect(resolveAgent(parseConfig({ agent: { maxProcesses: 2 } }, {}))).toMatchObject({ maxProcesses: 2 });
  });

  it("refuses out-of-range values, naming the key", () => {
    const refuse = () =>
      parseConfig(
        { agent: { command: "a", maxProcesses: 0, maxSessionsPerProcess: 1.5, idleTimeoutSeconds: -1 } },
        {},
      );
    expect(refuse).toThrow();
    const lines = (() => {
      try {
        refuse();
        return [];
      } catch (error) {
        return (error as Error).message.split("\n").map((l) => l.trim());
      }
    })();
    expect(lines.map((l) => l.split(":")[0])).toEqual([
      '"agent.maxProcesses"',
      '"agent.maxSessionsPerProcess"',
      '"agent.idleTimeoutSeconds"',
    ]);
  });

  it("context thresholds: 80 % soft, 90 % hard by default; soft must stay below hard; 0 turns one off", () => {
    expect(resolveAgent(parseConfig({}, {}))).toMatchObject({ contextSoftPct: 80, contextHardPct: 90 });
    expect(resolveAgent(parseConfig({ agent: { contextSoftPct: 60, contextHardPct: 0 } }, {}))).toMatchObject(
      { contextSoftPct: 60, contextHardPct: 0 },
    );
    expect(() => parseConfig({ agent: { contextSoftPct: 95 } }, {})).toThrow(
      /"agent.contextSoftPct": contextSoftPct must be below contextHardPct/,
    );
    expect(() => parseConfig({ agent: { contextHardPct: 101 } }, {})).toThrow(/"agent.contextHardPct"/);
  });
});

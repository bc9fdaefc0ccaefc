/** `idleResetMinutes` / `dailyResetHour`: off by default, read as numbers, a bad hour named. */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/gateway/config.js";

function load(home: unknown) {
  const dir = mkdtempSync(join(tmpdir(), "parley-rotation-"));
  const cwd = join(dir, "project");
  mkdirSync(cwd);
  writeFileSync(join(dir, "config.json"), JSON.stringify(home));
  return loadConfig({ cwd, processEnv: { PARLEY_HOME: dir } }).config;
}

describe("session rotation settings", () => {
  it("are off unless set", () => {
    const config = load({});
    expect(config.idleResetMinutes).toBe(0);
    expect(config.dailyResetHour).toBeNull();
  });

  it("take an idle gap in minutes and a local hour", () => {
    const config = load({ idleResetMinutes: 90, dailyResetHour: 4 });
    expect(config.idleResetMinutes).toBe(90);
    expect(config.dailyResetHour).toBe(4);
  });

  it("an hour outside 0..23 is named", () => {
    expect(() => load({ dailyResetHour: 24 })).toThrow(/dailyResetHour/);
    expect(() => load({ idleResetMinutes: -5 })).toThrow(/idleResetMinutes/);
  });
});

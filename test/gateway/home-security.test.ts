/**
 * The data home is this user's alone: doctor names what other accounts can read (never a value),
 * a start tightens it, and doctor warns when the agent runs as parley's own user.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CliIo } from "../../src/gateway/cli.js";
import { runCli } from "../../src/gateway/cli.js";
import { parseConfig } from "../../src/gateway/config.js";
import { Gateway } from "../../src/gateway/gateway.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { webchatChannel } from "../../src/webchat/index.js";

const SECRET = "7731009001:AAHomeSecurityTestTokenValue_ABCDEFG";

function looseHome(): string {
  const home = mkdtempSync(join(tmpdir(), "parley-perm-"));
  writeFileSync(join(home, ".env"), `TELEGRAM_BOT_TOKEN=${SECRET}\n`);
  mkdirSync(join(home, "trust"));
  writeFileSync(join(home, "trust", "x.json"), "{}");
  writeFileSync(join(home, "trust", "hook.sh"), "#!/bin/sh\n");
  chmodSync(join(home, "trust", "hook.sh"), 0o775);
  chmodSync(join(home, ".env"), 0o644);
  chmodSync(join(home, "trust"), 0o755);
  chmodSync(home, 0o755);
  return home;
}

async function doctor(home: string, config?: unknown): Promise<string> {
  if (config !== undefined) {
    writeFileSync(join(home, "config.json"), JSON.stringify(config));
    chmodSync(join(home, "config.json"), 0o600);
  }
  const out: string[] = [];
  const io: CliIo = {
    out: (l) => out.push(l),
    err: (l) => out.push(l),
    env: { PARLEY_HOME: home, PATH: process.env.PATH ?? "" },
    cwd: home,
    stopSignal: () => new Promise(() => {}),
  };
  await runCli(["doctor"], io);
  return out.join("\n");
}

const mode = (p: string) => (statSync(p).mode & 0o777).toString(8);

describe("the data home's permissions", () => {
  it("doctor names every loose path and its mode, never a value", async () => {
    const home = looseHome();
    const report = await doctor(home);
    expect(report).toContain(`⚠ ${home} is 0755: other accounts can read it (the next start makes it 0700)`);
    expect(report).toContain(`⚠ ${join(home, ".env")} is 0644`);
    expect(report).toContain(`⚠ ${join(home, "trust")} is 0755`);
    expect(report).toContain(
      `⚠ ${join(home, "trust", "hook.sh")} is 0775: other accounts can read it (the next start makes it 0700)`,
    );
    expect(report).not.toContain(SECRET);
    // doctor changes nothing.
    expect(mode(join(home, ".env"))).toBe("644");
  });

  it("a start tightens them and says so", async () => {
    const home = looseHome();
    const logger = new MemoryLogger();
    const gateway = await Gateway.start({
      config: parseConfig({ webchat: { port: 0 } }, {}),
      env: {},
      home,
      logger,
      announce: () => {},
      channels: [webchatChannel],
    });
    await gateway.shutdown();
    expect([
      mode(home),
      mode(join(home, ".env")),
      mode(join(home, "trust")),
      mode(join(home, "trust", "x.json")),
      // The owner's execute bit stays: only group and other bits are cleared.
      mode(join(home, "trust", "hook.sh")),
    ]).toEqual(["700", "600", "700", "600", "700"]);
    expect(logger.entries.filter((e) => e.message.startsWith("tightened ")).length).toBeGreaterThanOrEqual(3);
    expect(readFileSync(join(home, ".env"), "utf8")).toContain(SECRET);
    expect(await doctor(home)).not.toMatch(/⚠ .* is 0/);
  });

  it("doctor warns when the agent runs as parley's own user, not behind sudo or a sandbox, not for the demo", async () => {
    const home = mkdtempSync(join(tmpdir(), "parley-perm-"));
    expect(await doctor(home)).not.toContain("the agent runs as your user");
    expect(await doctor(home, { agent: { command: "node", args: ["agent.js"] } })).toContain(
      "⚠ the agent runs as your user: it can read $PARLEY_HOME/.env",
    );
    expect(
      await doctor(home, { agent: { command: "sudo", args: ["-u", "agent", "claude-agent-acp"] } }),
    ).not.toContain("the agent runs as your user");
  });
});

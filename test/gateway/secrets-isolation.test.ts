/**
 * Tokens stay in parley: a secret read from $PARLEY_HOME/.env lives in parley's own configuration,
 * never in its process environment (so not in /proc/<pid>/environ either), and no channel secret,
 * from the file or the environment, reaches the agent it starts.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { RunningParley } from "../helpers/spawn-parley.js";
import { freshHome, startParley } from "../helpers/spawn-parley.js";

const DUMP = fileURLToPath(new URL("../fakes/acp/env-dump.mjs", import.meta.url));
const FILE_TOKEN = "7731009001:AAFromTheDotEnvFileOnly_0123456789abc";
const PROCESS_TOKEN = "123456789012345678.GhYzAb.FromTheProcessEnvironment_xyz";

let running: RunningParley | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

describe("tokens stay in parley", () => {
  it("a .env secret is not in parley's environ; no channel secret reaches the agent", async () => {
    const home = freshHome();
    const dump = join(home, "agent-env.json");
    writeFileSync(join(home, ".env"), `TELEGRAM_BOT_TOKEN=${FILE_TOKEN}\n`);
    writeFileSync(
      join(home, "config.json"),
      JSON.stringify({
        agent: { command: process.execPath, args: [DUMP, dump], maxProcesses: 1 },
        telegram: { allowedUserIds: [42], apiRoot: "http://127.0.0.1:9" },
      }),
    );
    running = await startParley([], { home, env: { DISCORD_BOT_TOKEN: PROCESS_TOKEN } });
    const environ = readFileSync(`/proc/${running.child.pid}/environ`, "utf8");
    expect(environ).not.toContain(FILE_TOKEN);
    // The agent pool starts its process ahead of the first message.
    await vi.waitFor(() => expect(existsSync(dump)).toBe(true), { timeout: 10_000 });
    const agentEnv = readFileSync(dump, "utf8");
    expect(agentEnv).not.toContain(FILE_TOKEN);
    expect(agentEnv).not.toContain(PROCESS_TOKEN);
    expect(Object.keys(JSON.parse(agentEnv) as object)).not.toContain("DISCORD_BOT_TOKEN");
  }, 30_000);
});

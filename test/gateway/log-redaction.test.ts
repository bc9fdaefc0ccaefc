/**
 * Logs carry agent and user text, so every line is redacted: credentials planted on every error
 * path (an agent's stderr, a non-protocol line on its stdout, the error it fails a turn with, a
 * channel's token in a connection error) never reach parley's log output, at debug level.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { createLogger, logScrubber } from "../../src/gateway/logging.js";
import type { RunningParley } from "../helpers/spawn-parley.js";
import { freshHome, startParley } from "../helpers/spawn-parley.js";

const LEAKY = fileURLToPath(new URL("../fakes/acp/leaky-agent.mjs", import.meta.url));
const STDERR_KEY = "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB";
const STDOUT_KEY = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH";
const ERROR_KEY = "AKIAQ7ZR3M5TXW2KP9VB";
const BOT_TOKEN = "7731009001:AAFakeTokenValueThatIsLongEnough_12345";

let running: RunningParley | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

describe("log redaction", () => {
  it("no planted credential reaches the log, whatever path it came by", async () => {
    const home = freshHome();
    writeFileSync(
      join(home, "config.json"),
      JSON.stringify({
        logLevel: "debug",
        agent: { command: process.execPath, args: [LEAKY, STDERR_KEY, STDOUT_KEY, ERROR_KEY] },
        // A Bot API server that is not there: its connection errors are logged.
        telegram: { allowedUserIds: [42], apiRoot: "http://127.0.0.1:9" },
      }),
    );
    running = await startParley([], { home, env: { TELEGRAM_BOT_TOKEN: BOT_TOKEN } });
    const url = new URL(running.url);
    const ws = new WebSocket(`ws://${url.host}/ws?token=${url.searchParams.get("token")}&c=leaks`);
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    ws.send(JSON.stringify({ type: "message", text: `please use ${ERROR_KEY}` }));
    // Every path has been taken once the failed turn and the non-protocol line are logged.
    await vi.waitFor(
      () => {
        const err = running?.stderr() ?? "";
        expect(err).toMatch(/turn failed/);
        expect(err).toMatch(/non-protocol|not JSON|protocol/i);
        expect(err).toMatch(/telegram/);
      },
      { timeout: 15_000, interval: 50 },
    );
    ws.close();
    const log = running.stderr();
    for (const secret of [STDERR_KEY, STDOUT_KEY, ERROR_KEY, BOT_TOKEN, BOT_TOKEN.split(":")[1] as string])
      expect(log, secret).not.toContain(secret);
    // The lines are there, redacted, not dropped.
    expect(log).toContain("booting with GITHUB_TOKEN=");
  }, 30_000);

  it("the scrubber cuts known secret values verbatim, then redacts, in every nested string", () => {
    const scrub = logScrubber(["s3cr3t-value-long"]);
    expect(
      scrub({
        a: "x s3cr3t-value-long y",
        b: [`key ${ERROR_KEY}`],
        c: { d: new Error(`boom ${STDERR_KEY}`) },
      }),
    ).toEqual({
      a: "x [redacted] y",
      b: [expect.not.stringContaining(ERROR_KEY)],
      c: { d: expect.not.stringContaining(STDERR_KEY) },
    });
    const lines: string[] = [];
    const logger = createLogger("debug", { write: (l: string) => lines.push(l) } as never, {
      secrets: [BOT_TOKEN],
    });
    logger.error(`failed ${BOT_TOKEN}`, { preview: `${STDOUT_KEY}` });
    expect(lines.join("")).not.toContain(BOT_TOKEN);
    expect(lines.join("")).not.toContain(STDOUT_KEY);
  });
});

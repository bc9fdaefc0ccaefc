/**
 * The imsg child itself: spawned by argv with the database path, given a minimal environment (no
 * secret of the gateway's), its stderr logged redacted, stopped by closing its stdin.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { childEnv, imsgArgv } from "../../src/imessage/client.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { FakeImsgFolder, waitFor } from "../fakes/imsg/control.js";
import { imsgClientOn } from "./channel-harness.js";

describe("the imsg child", () => {
  it("is spawned by argv, logs stderr redacted, and exits when its stdin closes", async () => {
    expect(imsgArgv("/opt/imsg", "/x/chat.db")).toEqual({
      file: "/opt/imsg",
      args: ["rpc", "--db", "/x/chat.db"],
    });
    expect(imsgArgv("imsg")).toEqual({ file: "imsg", args: ["rpc"] });
    process.env.PARLEY_TEST_SECRET_FOR_CHILD = "must-not-leak";
    expect(childEnv().PARLEY_TEST_SECRET_FOR_CHILD).toBeUndefined();
    delete process.env.PARLEY_TEST_SECRET_FOR_CHILD;

    const folder = new FakeImsgFolder();
    const logger = new MemoryLogger();
    const client = imsgClientOn(folder, logger);
    const status = await client.start();
    // The version comes from `imsg status --json`; the rpc handshake is chats.list (rpc has no status).
    expect(status.version).toBe("0.9.0");
    expect(status.advancedFeatures).toBe(true);
    expect(status.methods).toContain("watch.subscribe");
    expect(
      folder
        .requests()
        .filter((r) => r.answered === undefined)
        .map((r) => [r.method, r.params]),
    ).toEqual([["chats.list", { limit: 1 }]]);
    await folder.command({ op: "stderr", text: "warning: key AKIAQ7ZR3M5TXW2KP9VB in a log line" });
    await waitFor(() => logger.entries.some((e) => e.message === "imsg stderr"), "the stderr line");
    const line = String(logger.entries.find((e) => e.message === "imsg stderr")?.fields.line);
    expect(line).toContain("warning: key");
    expect(line).not.toContain("Q7ZR3M5TXW2KP9VB");
    await client.stop();
    expect(folder.running()).toBe(false);
    // A quiescent exit: the fake ended on its stdin closing, not killed, and was not restarted.
    expect(readFileSync(`${folder.dir}/starts.jsonl`, "utf8").trim().split("\n")).toHaveLength(1);
  });
});

/**
 * Where iMessage may run, and what `parley doctor` says about it. Off macOS (this test host, with the
 * production probe: no bypass; the test hosts are Linux) the channel refuses to start and doctor says why, with
 * `supported: false`; on a Mac (the probe injected) doctor shows the executable, its version and
 * methods, the macOS version and whether the Messages database is readable. An executable that is
 * not there is named with what to do.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../../src/gateway/cli.js";
import { checkIMessage } from "../../src/imessage/check.js";
import type { IMessageSettings } from "../../src/imessage/index.js";
import { imessageChannel, imessageSettingsSchema } from "../../src/imessage/index.js";
import { start } from "../../src/imessage/start.js";
import { SessionManager } from "../../src/messaging/session/session-manager.js";
import type { PipelineProvider } from "../../src/messaging/turn/pipeline.js";
import { FakeImsgFolder } from "../fakes/imsg/control.js";
import { testChannelContext } from "../helpers/channel-context.js";
import { macHost, OWNER } from "./channel-harness.js";

const settingsFor = (folder: FakeImsgFolder, extra: Record<string, unknown> = {}) =>
  imessageSettingsSchema.parse({
    allowedHandles: [OWNER],
    cliPath: folder.cliPath,
    dbPath: folder.dbPath,
    ...extra,
  });

describe("off macOS", () => {
  it("the channel refuses to start, and says why", async () => {
    const folder = new FakeImsgFolder();
    const ctx = testChannelContext<IMessageSettings>(imessageChannel, {
      section: { allowedHandles: [OWNER], cliPath: folder.cliPath, dbPath: folder.dbPath },
      sessions: new SessionManager<PipelineProvider>({
        createProvider: () => {
          throw new Error("no agent");
        },
      }),
    });
    await expect(start(ctx)).rejects.toThrow(
      /iMessage runs only on the Mac signed in to Messages \(macOS 14\+\)/,
    );
    // It never got as far as the executable.
    expect(folder.starts()).toBe(0);
  });

  it("`parley doctor` reports supported: false and fails", async () => {
    const folder = new FakeImsgFolder();
    const home = mkdtempSync(join(tmpdir(), "parley-imessage-doctor-"));
    const cwd = join(home, "project");
    mkdirSync(cwd);
    writeFileSync(join(home, "config.json"), JSON.stringify({ imessage: { allowedHandles: [OWNER] } }));
    const out: string[] = [];
    const code = await runCli(["doctor"], {
      out: (l) => out.push(l),
      err: (l) => out.push(l),
      env: { PARLEY_HOME: home, IMESSAGE_CLI_PATH: folder.cliPath, IMESSAGE_DB_PATH: folder.dbPath },
      cwd,
      stopSignal: () => new Promise(() => {}),
    });
    const printed = out.join("\n");
    expect(printed).toContain("✓ imessage: configured");
    expect(printed).toMatch(/✗ supported: false \(iMessage runs only on the Mac signed in to Messages/);
    // The executable is still asked, so the operator sees everything that is wrong at once.
    expect(printed).toContain(`✓ executable: ${folder.cliPath} (imsg 0.9.0)`);
    expect(code).not.toBe(0);
  });
});

describe("doctor on a Mac", () => {
  it("shows the executable, its version and methods, the macOS version and the database", async () => {
    const folder = new FakeImsgFolder({
      version: "0.5.1",
      advancedFeatures: true,
      methods: ["chats.list", "watch.subscribe", "watch.unsubscribe", "send", "typing", "read"],
    });
    const report = await checkIMessage(settingsFor(folder), { platform: macHost });
    expect(report.healthy).toBe(true);
    expect(report.lines).toEqual([
      "✓ supported: true (macOS 14)",
      `✓ Messages database: ${folder.dbPath} (readable)`,
      `✓ executable: ${folder.cliPath} (imsg 0.5.1)`,
      "- methods: chats.list, watch.subscribe, watch.unsubscribe, send, typing, read; advanced features (typing, read receipts): yes",
      "- allowed handles: 1; service: auto",
    ]);
    // Doctor's child was stopped by closing its stdin.
    expect(folder.running()).toBe(false);
  });

  it("an unreadable database (no Full Disk Access) and a missing executable are named, unhealthy", async () => {
    const folder = new FakeImsgFolder();
    const report = await checkIMessage(settingsFor(folder, { cliPath: join(folder.dir, "no-such-imsg") }), {
      platform: async (dbPath) => ({
        supported: false,
        os: "macOS 15",
        dbPath: dbPath ?? "",
        dbReadable: false,
        reason: "the Messages database is not readable: grant Full Disk Access to the process running parley",
      }),
    });
    expect(report.healthy).toBe(false);
    expect(report.lines.join("\n")).toContain("not readable: grant Full Disk Access");
    expect(report.lines.join("\n")).toMatch(
      /✗ executable: .*no-such-imsg did not answer .*install imsg or set imessage.cliPath/,
    );
  });
});

import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { CliIo } from "../../src/gateway/cli.js";
import { runCli } from "../../src/gateway/cli.js";
import { fakeAgent } from "../providers/helpers.js";

const START_SCRIPT = fileURLToPath(new URL("../../scripts/start.mjs", import.meta.url));

import { openStore } from "../../src/store/index.js";

async function run(
  argv: string[],
  opts: {
    /** The operator's trusted file: $PARLEY_HOME/config.json. */
    config?: unknown;
    /** A parley.config.json in the working directory (untrusted for security keys). */
    cwdConfig?: unknown;
    env?: Record<string, string>;
    homeEnv?: string;
    /** Files to place in the data home first (relative path -> content). */
    files?: Record<string, string>;
  } = {},
) {
  const dir = mkdtempSync(join(tmpdir(), "parley-doctor-"));
  for (const [rel, content] of Object.entries(opts.files ?? {})) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), content);
  }
  const cwd = join(dir, "project");
  mkdirSync(cwd);
  if (opts.config !== undefined) writeFileSync(join(dir, "config.json"), JSON.stringify(opts.config));
  if (opts.cwdConfig !== undefined)
    writeFileSync(join(cwd, "parley.config.json"), JSON.stringify(opts.cwdConfig));
  if (opts.homeEnv !== undefined) writeFileSync(join(dir, ".env"), opts.homeEnv);
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    env: { PARLEY_HOME: dir, ...opts.env },
    cwd,
    stopSignal: () => new Promise(() => {}),
  };
  const code = await runCli(argv, io);
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("parley doctor", () => {
  it("a healthy zero-config setup: web chat configured, demo agent, exit 0", async () => {
    const r = await run(["doctor"]);
    expect(r.code).toBe(0);
    expect(r.out).toContain("✓ webchat: configured");
    expect(r.out).toContain("agent: bundled demo agent");
    expect(r.out).toContain("- telegram: disabled (set TELEGRAM_BOT_TOKEN to enable)");
  });

  it("names the exact missing token and never prints a secret", async () => {
    const r = await run(["doctor"], {
      config: { telegram: { allowedUserIds: [42] }, discord: { allowedUserIds: [] } },
      env: { DISCORD_BOT_TOKEN: "super-secret-discord-token-value" },
    });
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      "✗ telegram: incomplete, missing TELEGRAM_BOT_TOKEN (see docs/channels/telegram.md)",
    );
    expect(r.out).toContain("✗ discord: incomplete, missing discord.allowedUserIds");
    expect(r.out).not.toContain("super-secret");
  });

  it("reads secrets from $PARLEY_HOME/.env", async () => {
    const r = await run(["doctor"], {
      config: { telegram: { allowedUserIds: ["42"] } },
      homeEnv: "TELEGRAM_BOT_TOKEN=123:abc\n",
    });
    expect(r.out).toContain("✓ telegram: configured");
    expect(r.out).not.toContain("123:abc");
  });

  it("an invalid config key is named with what was expected", async () => {
    const r = await run(["doctor"], { config: { webchat: { prot: 8080 }, approvalMode: "sometimes" } });
    expect(r.code).toBe(2);
    expect(r.err).toContain('unknown key "webchat.prot"');
    expect(r.err).toMatch(/"approvalMode": .*("interactive"|interactive)/);
  });

  it("--help and unknown commands", async () => {
    expect((await run(["--help"])).out).toContain("parley start");
    const bad = await run(["launch"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('unknown command "launch"');
  });

  it("reports the data home: a gateway holding it, and readable durable files", async () => {
    const r = await run(["doctor"], {
      files: {
        "parley.lock": `${process.pid}\n`,
        "sessions.json": JSON.stringify({ version: 1, sessions: { "webchat:default:direct:a": {} } }),
        "trust/discord_resume_expectations.json": JSON.stringify({
          "300": { key: "webchat:default:direct:a", title: "t", version: 1, retired: false },
          "301": { key: "webchat:default:direct:b", title: "u", version: 2, retired: true },
        }),
      },
    });
    expect(r.code).toBe(0);
    expect(r.out).toContain(`running: a parley (pid ${process.pid}) is using this data home`);
    // An older install's files, read before the next start imports them (issue 16: the store).
    expect(r.out).toContain("✓ sessions.json (older install): 1 session(s), imported at the next start");
    expect(r.out).toContain(
      "✓ discord resume file (older install): 1 attached conversation(s), imported at the next start",
    );
    expect(r.out).toContain("- store: ");
  });

  it("a corrupt store or resume record fails the check with the repair, never quoting the file", async () => {
    const r = await run(["doctor"], {
      files: {
        "parley.lock": "999999999\n",
        "sessions.json": '{"version": 1, "sessions": {"k": SECRET-TITLE',
        "trust/discord_resume_expectations.json": JSON.stringify({
          "300": { key: "k", title: "t", version: 1.5 },
        }),
      },
    });
    expect(r.code).toBe(1);
    expect(r.out).toContain("stale lock:");
    expect(r.out).toMatch(
      /✗ sessions\.json \(older install\): .*sessions\.json: is not valid JSON; start refuses/,
    );
    expect(r.out).not.toContain("SECRET-TITLE");
    expect(r.out).toContain(
      '✗ discord resume file (older install): trust/discord_resume_expectations.json row "300".version is not a non-negative integer',
    );
    expect(r.out).toContain("Never truncate or delete it");
  });

  it("a configured agent command that cannot be started fails the check; one on PATH passes", async () => {
    const missing = await run(["doctor"], {
      config: { agent: { command: "no-such-agent-xyz", args: ["--acp"] } },
    });
    expect(missing.code).toBe(1);
    expect(missing.out).toContain('✗ agent: "no-such-agent-xyz" is not an executable file nor found on PATH');
    // Found on PATH, the agent then has to answer the handshake too (a real scripted ACP agent).
    const store = mkdtempSync(join(tmpdir(), "parley-doctor-store-"));
    const onPath = await run(["doctor"], {
      config: { agent: { command: "node", args: [fakeAgent("multi")], env: { FAKE_STORE: store } } },
      env: { PATH: dirname(process.execPath) },
    });
    expect(onPath.code).toBe(0);
    expect(onPath.out).toContain(`agent: node ${fakeAgent("multi")}`);
    expect(onPath.out).not.toContain("✗ agent");
  });
});

describe("parley doctor: the agent's ACP handshake", () => {
  it("the demo agent: its name, version, capabilities, models and commands", async () => {
    const r = await run(["doctor"]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/✓ agent handshake: .*0\.1\.0 \(initialize, session\/new, close in \d+ ms\)/);
    expect(r.out).toMatch(/capabilities: loadSession no .*, close yes, steering yes, images no/);
    expect(r.out).toMatch(/models: Demo \w+, Demo \w+/);
    expect(r.out).toContain("commands: help, compact");
  });

  it("an agent whose every session/new fails is unhealthy, with its first error line", async () => {
    const r = await run(["doctor"], {
      config: { agent: { command: process.execPath, args: [fakeAgent("multi"), "auth"] } },
    });
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      "✗ agent handshake: started but could not open a session: agent requires authentication: log in with its own CLI",
    );
  });

  it("an agent that dies at start: its exit and first stderr lines, redacted", async () => {
    const r = await run(["doctor"], {
      config: { agent: { command: process.execPath, args: [fakeAgent("multi"), "stderr"] } },
    });
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/✗ agent handshake: did not start: .*exited \(code 1\)/);
    expect(r.out).toMatch(/agent stderr: fatal: config invalid, token=\[REDACTED/);
    expect(r.out).not.toContain("sk-ant-api03");
  });

  it("`parley start doctor` is refused rather than starting the gateway", async () => {
    const r = await run(["start", "doctor"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('unexpected argument "doctor" after start');
  });

  it("`npm start -- doctor` runs doctor (scripts/start.mjs, as npm runs it)", async () => {
    const home = mkdtempSync(join(tmpdir(), "parley-npm-doctor-"));
    const child = spawn(process.execPath, [START_SCRIPT, "doctor"], {
      cwd: home,
      env: { PATH: process.env.PATH ?? "", HOME: home, PARLEY_HOME: home },
    });
    let out = "";
    child.stdout.on("data", (d) => {
      out += String(d);
    });
    const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
    expect(out).toContain("✓ agent handshake:");
    expect(out).toContain("✓ webchat: configured");
    expect(out).not.toMatch(/http:\/\/\S+\?token=/);
    expect(code).toBe(0);
  }, 120_000);
});

describe("parley doctor: the store", () => {
  it("reports the store (path, schema, size, integrity) and a message accepted but not yet answered", async () => {
    const dir = mkdtempSync(join(tmpdir(), "parley-doctor-store-"));
    const store = await openStore(dir);
    await store.intake.accept({
      channel: "telegram",
      platformMessageId: "update:7",
      conversationKey: "telegram:42",
      payload: { text: "are you there" },
      receivedAtMs: Date.now(),
    });
    await store.close();
    const out: string[] = [];
    const code = await runCli(["doctor"], {
      out: (l) => out.push(l),
      err: () => {},
      env: { PARLEY_HOME: dir },
      cwd: dir,
      stopSignal: () => new Promise(() => {}),
    });
    expect(code).toBe(0);
    expect(out.join("\n")).toMatch(/✓ store: .*parley\.db \(schema v\d+, [\d.]+ (B|KiB|MiB), integrity ok\)/);
    expect(out.join("\n")).toContain(
      "! store: 1 accepted message(s) not answered yet, oldest under a minute ago",
    );
    expect(out.join("\n")).not.toContain("are you there");
  });
});

describe("parley doctor: Teams", () => {
  it("names a missing password and shows where each credential may go, never a secret", async () => {
    const r = await run(["doctor"], {
      config: { teams: { allowedUsers: ["ann@contoso.example"] } },
      env: { MICROSOFT_APP_ID: "11111111-2222-3333-4444-555555555555" },
    });
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      "✗ teams: incomplete, missing MICROSOFT_APP_PASSWORD (see docs/channels/teams.md)",
    );
    expect(r.out).toContain("    messaging endpoint: http://127.0.0.1:3978/api/messages");
    expect(r.out).toContain(
      "    app password sent only to: https://login.microsoftonline.com/botframework.com/oauth2/v2.0/token",
    );
    expect(r.out).toContain(
      "    inbound tokens: keys from https://login.botframework.com/v1/.well-known/openidconfiguration, issuer https://api.botframework.com",
    );
    expect(r.out).toContain("    Connector tokens sent only to serviceUrl hosts: smba.trafficmanager.net");
  });

  it("a configured section shows the origins it was given, the environment's over the file's", async () => {
    const r = await run(["doctor"], {
      config: {
        teams: {
          appType: "SingleTenant",
          allowedUsers: ["ann@contoso.example"],
          connectorHosts: ["smba.trafficmanager.net"],
        },
      },
      env: {
        MICROSOFT_APP_ID: "11111111-2222-3333-4444-555555555555",
        MICROSOFT_APP_PASSWORD: "a-very-secret-app-password",
        MICROSOFT_APP_TENANT_ID: "99999999-8888-7777-6666-555555555555",
        TEAMS_LOGIN_URL: "https://login.microsoftonline.us",
        TEAMS_CONNECTOR_HOSTS: "smba.infra.gov.teams.microsoft.us, smba.trafficmanager.net",
      },
    });
    expect(r.out).toContain("✓ teams: configured");
    expect(r.out).toContain(
      "    app password sent only to: https://login.microsoftonline.us/99999999-8888-7777-6666-555555555555/oauth2/v2.0/token",
    );
    expect(r.out).toContain(
      "    Connector tokens sent only to serviceUrl hosts: smba.infra.gov.teams.microsoft.us, smba.trafficmanager.net",
    );
    expect(r.out).not.toContain("a-very-secret-app-password");
  });

  it("an http origin is refused: no credential travels in clear", async () => {
    const r = await run(["doctor"], {
      config: { teams: { loginUrl: "http://login.example", allowedUsers: ["ann@contoso.example"] } },
    });
    expect(r.code).toBe(2);
    expect(r.err).toContain("teams.loginUrl");
    expect(r.err).toContain("not an https URL");
  });

  it("`parley teams manifest` prints a personal-scope manifest with the command list", async () => {
    const r = await run(["teams", "manifest"], {
      env: { MICROSOFT_APP_ID: "11111111-2222-3333-4444-555555555555" },
    });
    expect(r.code).toBe(0);
    const manifest = JSON.parse(r.out) as {
      id: string;
      bots: {
        botId: string;
        scopes: string[];
        supportsFiles: boolean;
        commandLists: { commands: { title: string }[] }[];
      }[];
    };
    expect(manifest.id).toBe("11111111-2222-3333-4444-555555555555");
    expect(manifest.bots[0]).toMatchObject({ botId: manifest.id, scopes: ["personal"], supportsFiles: true });
    expect(manifest.bots[0]?.commandLists[0]?.commands.map((c) => c.title)).toEqual([
      "new",
      "compact",
      "stop",
      "yolo",
      "link",
      "unlink",
      "sessions",
      "status",
      "help",
      "model",
    ]);
    const missing = await run(["teams", "manifest"]);
    expect(missing.code).toBe(2);
    const unknown = await run(["teams", "nothing"]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain("parley teams manifest");
  });
});

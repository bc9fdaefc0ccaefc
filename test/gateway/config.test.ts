/**
 * Configuration: composed from the registry (a typo in any channel section is named), one
 * precedence rule (secrets only from the environment; an environment setting wins over the file),
 * and the trust boundary: security keys never come from the working directory.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/gateway/config.js";

function dirs(files: { home?: unknown; cwd?: unknown; named?: unknown }) {
  const home = mkdtempSync(join(tmpdir(), "parley-config-"));
  const cwd = join(home, "project");
  mkdirSync(cwd);
  if (files.home !== undefined) writeFileSync(join(home, "config.json"), JSON.stringify(files.home));
  if (files.cwd !== undefined) writeFileSync(join(cwd, "parley.config.json"), JSON.stringify(files.cwd));
  if (files.named !== undefined) writeFileSync(join(cwd, "named.json"), JSON.stringify(files.named));
  return { home, cwd, env: { PARLEY_HOME: home } };
}

describe("configuration", () => {
  it.each([
    [{ approvalMode: "auto" }, '"approvalMode"'],
    [{ agent: { command: "evil" } }, '"agent"'],
    [{ telegram: { apiRoot: "http://attacker.example" } }, '"telegram.apiRoot"'],
    [{ telegram: { allowedUserIds: [1] } }, '"telegram.allowedUserIds"'],
    [{ discord: { owner: "200000000000000001" } }, '"discord.owner"'],
    [{ webchat: { host: "0.0.0.0", allowRemote: true } }, '"webchat.host", "webchat.allowRemote"'],
    [{ store: { url: "postgres://attacker.example/db" } }, '"store"'],
    [{ cluster: { leaseSeconds: 20 } }, '"cluster"'],
  ])(
    "a working-directory file that sets %j is refused, naming the key and where it belongs",
    (cwd, named) => {
      const d = dirs({ cwd });
      expect(() => loadConfig({ cwd: d.cwd, processEnv: d.env })).toThrow(
        new RegExp(
          `sets ${named.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: security settings .* read only from ${join(d.home, "config.json").replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} or a file named with --config`,
        ),
      );
    },
  );

  it("the shared store: a postgres URL and a lease of at most 20 s (default 15), nothing else", () => {
    const ok = dirs({ home: { store: { url: "postgresql://parley@db:5432/parley" } } });
    const loaded = loadConfig({ cwd: ok.cwd, processEnv: ok.env }).config;
    expect(loaded.store.url).toBe("postgresql://parley@db:5432/parley");
    expect(loaded.cluster.leaseSeconds).toBe(15);
    const none = dirs({});
    expect(loadConfig({ cwd: none.cwd, processEnv: none.env }).config.store.url).toBeUndefined();
    for (const bad of [{ store: { url: "mysql://db/parley" } }, { cluster: { leaseSeconds: 25 } }]) {
      const d = dirs({ home: bad });
      expect(() => loadConfig({ cwd: d.cwd, processEnv: d.env })).toThrow(/store\.url|cluster\.leaseSeconds/);
    }
  });

  it("the same keys are accepted from the home file and from a file named with --config", () => {
    const fromHome = dirs({ home: { approvalMode: "trust", telegram: { allowedUserIds: [42] } } });
    expect(loadConfig({ cwd: fromHome.cwd, processEnv: fromHome.env }).config.approvalMode).toBe("trust");
    const named = dirs({ named: { approvalMode: "trust-reads" } });
    expect(
      loadConfig({ cwd: named.cwd, processEnv: named.env, configPath: "named.json" }).config.approvalMode,
    ).toBe("trust-reads");
  });

  it("a working-directory file may still set what is not a security key, over the home file", () => {
    const d = dirs({
      home: { queueMode: "steer", telegram: { allowedUserIds: [42] } },
      cwd: { queueMode: "queue", telegram: { dmScope: "unified" } },
    });
    const loaded = loadConfig({ cwd: d.cwd, processEnv: d.env });
    expect(loaded.config.queueMode).toBe("queue");
    expect(loaded.config.channels.telegram).toMatchObject({ allowedUserIds: ["42"], dmScope: "unified" });
    expect(loaded.present.has("telegram")).toBe(true);
    expect(loaded.present.has("discord")).toBe(false);
  });

  it("a typo in a channel section is named with its path", () => {
    const d = dirs({ home: { telegram: { alowedUserIds: [42] } } });
    expect(() => loadConfig({ cwd: d.cwd, processEnv: d.env })).toThrow(
      /unknown key "telegram\.alowedUserIds"/,
    );
  });

  it("one precedence rule: an environment setting wins over the file; a secret is never a setting", () => {
    const d = dirs({ home: { discord: { apiBase: "https://file.example/api" } } });
    const loaded = loadConfig({
      cwd: d.cwd,
      processEnv: { ...d.env, DISCORD_API_BASE: "http://127.0.0.1:9/api" },
    });
    expect(loaded.config.channels.discord).toMatchObject({ apiBase: "http://127.0.0.1:9/api" });
    const withToken = dirs({ home: { discord: { token: "abc" } } });
    expect(() => loadConfig({ cwd: withToken.cwd, processEnv: withToken.env })).toThrow(
      /unknown key "discord\.token"/,
    );
  });
});

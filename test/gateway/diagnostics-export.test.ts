/**
 * `parley doctor --export FILE`: credentials planted in the environment, $PARLEY_HOME/.env, the
 * config and the service log never reach the bundle, while what a bug report needs does (versions,
 * doctor's lines, the config's shape, the audit counts, the last 1,000 log lines).
 */
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CliIo } from "../../src/gateway/cli.js";
import { runCli } from "../../src/gateway/cli.js";
import { EXPORT_LOG_LINES } from "../../src/gateway/diagnostics.js";
import { parleyVersion } from "../../src/gateway/version.js";

/** Each credential's body: none of these strings may appear anywhere in the bundle. */
const PLANTED = {
  // Channel secrets, in the process environment and in .env.
  telegramEnv: "7312345678:AAHq3Zx9Wv8Ut7Sr6Qp5On4Ml3Kj2Ih1GfE",
  discordDotenv: "MTIzNDU2Nzg5MDEyMzQ1Njc4.GhIjKl.Mn0pQrStUvWxYz1234567890AbCdEfGh",
  // Not a channel's: caught by its name (…_API_KEY) in the environment.
  openaiEnv: "sk-proj-Wq8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXcVbNm",
  // In .env under a harmless name and of no known shape: everything in .env counts as secret.
  plainDotenv: "quietly-opaque-value-4c7e91b2d0",
  // In the config: the agent's environment (a key named like a secret) and its arguments (a shape).
  configKey: "Lk9Jh8Gf7Ds6Ap5Oi4Uy3Tr2Ew1QzXcVb",
  configArg: "ghp_Zx9Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz2Xc4V",
  configUrlPassword: "Pw4rdN0tInBundle99x",
  // Only in log lines: a bearer token and a key/value secret.
  logBearer: "Ab3dEf6hIj9kLm2nOp5qRs8tUv7wXy",
  logKeyValue: "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1",
};

function sandbox() {
  const root = mkdtempSync(join(tmpdir(), "parley-export-"));
  const home = join(root, "data");
  mkdirSync(join(home, "logs"), { recursive: true });
  writeFileSync(
    join(home, ".env"),
    `DISCORD_BOT_TOKEN=${PLANTED.discordDotenv}\nWEBHOOK_CALLBACK="${PLANTED.plainDotenv}"\n`,
    { mode: 0o600 },
  );
  writeFileSync(
    join(home, "config.json"),
    JSON.stringify({
      agent: {
        // Absent on purpose: doctor reports it at once instead of starting an agent.
        command: join(root, "no-such-agent"),
        args: ["--github", PLANTED.configArg],
        env: { UPSTREAM_API_KEY: PLANTED.configKey, MODE: "fast" },
      },
      store: { url: `postgres://parley:${PLANTED.configUrlPassword}@127.0.0.1:1/parley` },
    }),
    { mode: 0o600 },
  );
  // More lines than the bundle keeps: the first ones must be left out.
  const total = EXPORT_LOG_LINES + 500;
  const lines = Array.from({ length: total }, (_, n) =>
    JSON.stringify({ level: 30, app: "parley", msg: `log line ${n}` }),
  );
  lines.splice(
    total - 10,
    3,
    JSON.stringify({ level: 50, msg: `telegram failed with token ${PLANTED.telegramEnv}` }),
    JSON.stringify({ level: 50, msg: `request had Authorization: Bearer ${PLANTED.logBearer}` }),
    JSON.stringify({
      level: 40,
      msg: `agent stderr: password=${PLANTED.logKeyValue} discord ${PLANTED.discordDotenv}`,
    }),
  );
  writeFileSync(join(home, "logs", "parley.log"), `${lines.join("\n")}\n`);
  writeFileSync(
    join(home, "audit.jsonl"),
    [
      { ts: "2026-12-01T10:00:00.000Z", operation: "inbound", outcome: "denied", fields: { user: "42" } },
      {
        ts: "2026-12-01T10:01:00.000Z",
        operation: "inbound",
        outcome: "denied",
        fields: { note: PLANTED.plainDotenv },
      },
      { ts: "2026-12-01T10:02:00.000Z", operation: "tool", outcome: "allowed", fields: {} },
    ]
      .map((r) => JSON.stringify(r))
      .join("\n")
      .concat("\n"),
  );
  const env = {
    HOME: root,
    PARLEY_HOME: home,
    PATH: process.env.PATH ?? "",
    TELEGRAM_BOT_TOKEN: PLANTED.telegramEnv,
    OPENAI_API_KEY: PLANTED.openaiEnv,
  };
  return { root, home, env };
}

async function exportBundle(env: Record<string, string>, cwd: string, file: string) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    env,
    cwd,
    stopSignal: () => new Promise(() => {}),
  };
  const code = await runCli(["doctor", "--export", file], io);
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("parley doctor --export", () => {
  it("writes a bundle with versions, doctor, config, audit summary and the last 1,000 log lines, and no planted credential", async () => {
    const { root, home, env } = sandbox();
    const file = join(root, "bundle.txt");
    const run = await exportBundle(env, root, file);
    // The missing agent makes doctor unhealthy; the bundle is written all the same.
    expect(run.code).toBe(1);
    expect(run.out).toContain(`diagnostics written to ${file}`);
    const bundle = readFileSync(file, "utf8");
    expect(statSync(file).mode & 0o777).toBe(0o600);

    for (const [where, secret] of Object.entries(PLANTED)) {
      expect(bundle.includes(secret), `${where} leaked into the bundle`).toBe(false);
      expect(run.out.includes(secret), `${where} leaked into doctor's output`).toBe(false);
    }

    expect(bundle).toContain(`parley ${parleyVersion()}`);
    expect(bundle).toContain(`node ${process.version}`);
    expect(bundle).toContain("no-such-agent");
    expect(bundle).toContain("## doctor");
    // The config's shape survives; its secret-named key is censored, not dropped.
    expect(bundle).toMatch(/"UPSTREAM_API_KEY": "\[(redacted|REDACTED: credential)\]"/);
    expect(bundle).toContain('"MODE": "fast"');
    expect(bundle).toContain("OPENAI_API_KEY");
    expect(bundle).toContain(`${join(home, "audit.jsonl")}: 3 rows`);
    expect(bundle).toContain("inbound denied: 2");
    expect(bundle).toContain("tool allowed: 1");

    const log = bundle.slice(bundle.indexOf("## log"));
    const kept = log.split("\n").filter((l) => l.startsWith("{"));
    expect(kept).toHaveLength(EXPORT_LOG_LINES);
    expect(log).toContain(`log line ${EXPORT_LOG_LINES + 499}`);
    expect(log).not.toContain('"log line 499"');
    // The line is kept, its credential cut out.
    expect(log).toContain("request had [REDACTED");
  });

  it("says where logs are when the data home has no log file", async () => {
    const { root, home, env } = sandbox();
    writeFileSync(join(home, "logs", "parley.log"), "");
    const none = join(root, "no-log-home");
    mkdirSync(none);
    const file = join(root, "bundle.txt");
    await exportBundle({ ...env, PARLEY_HOME: none }, root, file);
    const bundle = readFileSync(file, "utf8");
    expect(bundle).toContain(`no log file at ${join(none, "logs", "parley.log")}`);
    expect(bundle).toContain(`no audit file at ${join(none, "audit.jsonl")}`);
  });
});

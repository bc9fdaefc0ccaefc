/**
 * `parley doctor --export FILE`: one text file a user can attach to a bug report. It holds the
 * versions, doctor's report, the configuration, which setting NAMES the environment sets, an audit
 * summary (counts, no rows) and the last lines of the service log ($PARLEY_HOME/logs/parley.log,
 * where the service units send parley's output). Every line of it passes one scrubber before it is
 * written: the values of every secret parley knows of (the channels' secret settings, everything in
 * $PARLEY_HOME/.env, any variable named like a secret) are cut out verbatim, then the project's
 * credential redaction runs; configuration keys named like secrets are censored whatever they hold.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { arch, platform, release } from "node:os";
import { join } from "node:path";
import type { ChannelEntry, Env } from "../messaging/channel/contract.js";
import type { LoadedConfig } from "./config.js";
import { parseDotenv } from "./config.js";
import { LOG_SECRET_MARKER, logScrubber } from "./logging.js";
import { serviceLogPath } from "./service.js";

/** How many of the log's last lines go into the bundle: enough for the run up to a failure. */
export const EXPORT_LOG_LINES = 1000;

/** A variable or key named like this holds a credential (or a URL that may carry one). */
const SECRET_NAME =
  /token|secret|passw|pwd|credential|auth|cookie|dsn|database_url|private|signing|apikey|api_key|(^|_)key$/i;

export interface DiagnosticsInput {
  loaded: LoadedConfig;
  channels: readonly ChannelEntry[];
  /** doctor's lines, as printed. */
  doctorLines: readonly string[];
  healthy: boolean;
  version: string;
  nowIso: string;
}

/** Every secret value parley could hold for this configuration, for verbatim removal. */
export function knownSecrets(loaded: LoadedConfig, channels: readonly ChannelEntry[]): string[] {
  const env: Env = loaded.env;
  const named = channels.flatMap((c) => c.secretEnv);
  const fromNames = Object.entries(env)
    .filter(([name]) => named.includes(name) || SECRET_NAME.test(name))
    .map(([, value]) => value ?? "");
  // Everything the .env file holds is treated as secret: it is where parley's secrets live.
  const dotenv = join(loaded.home, ".env");
  const fromFile = existsSync(dotenv) ? Object.values(parseDotenv(readFileSync(dotenv, "utf8"))) : [];
  return [...fromNames, ...fromFile].filter((v) => v.length > 0);
}

/** The configuration with every secret-named key censored (before the text scrub). */
export function censorConfig(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(censorConfig);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    out[key] = SECRET_NAME.test(key) && v !== undefined && v !== null ? LOG_SECRET_MARKER : censorConfig(v);
  }
  return out;
}

/** The last `n` lines of a file (a trailing newline ends the last line, it does not add one). */
export function lastLines(text: string, n: number): string[] {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines.slice(-n);
}

/** "operation outcome: count" per pair in audit.jsonl, with the time span; no row's fields. */
export function auditSummary(home: string): string[] {
  const path = join(home, "audit.jsonl");
  if (!existsSync(path)) return [`no audit file at ${path} (audit.jsonl off, or nothing audited yet)`];
  const counts = new Map<string, number>();
  let first: string | undefined;
  let last: string | undefined;
  let unreadable = 0;
  for (const line of lastLines(readFileSync(path, "utf8"), Number.POSITIVE_INFINITY)) {
    let row: { ts?: unknown; operation?: unknown; outcome?: unknown };
    try {
      row = JSON.parse(line) as typeof row;
    } catch {
      // Counted and reported: a torn last line (a crash mid-write) is worth knowing about.
      unreadable += 1;
      continue;
    }
    const key = `${String(row.operation)} ${String(row.outcome)}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    if (typeof row.ts === "string") {
      first ??= row.ts;
      last = row.ts;
    }
  }
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  return [
    `${path}: ${total} row${total === 1 ? "" : "s"}${first ? ` from ${first} to ${last}` : ""}`,
    ...[...counts.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `  ${k}: ${n}`),
    ...(unreadable > 0 ? [`  unreadable lines: ${unreadable}`] : []),
  ];
}

/** The bundle's text, every line scrubbed. */
export function diagnosticsText(i: DiagnosticsInput): string {
  const { loaded } = i;
  const scrub = logScrubber(knownSecrets(loaded, i.channels));
  const text = (s: string) => String(scrub(s));
  const setNames = Object.keys(loaded.env)
    .filter(
      (name) =>
        name.startsWith("PARLEY_") ||
        SECRET_NAME.test(name) ||
        i.channels.some(
          (c) => c.secretEnv.includes(name) || Object.values(c.settingEnv ?? {}).includes(name),
        ),
    )
    .sort();
  const log = serviceLogPath(loaded.home);
  const logLines = existsSync(log)
    ? [`last ${EXPORT_LOG_LINES} lines of ${log}:`, ...lastLines(readFileSync(log, "utf8"), EXPORT_LOG_LINES)]
    : [
        `no log file at ${log}: parley writes its log to stderr; the service units (parley service install) send it there`,
      ];
  const sections: [string, string[]][] = [
    [
      "versions",
      [`parley ${i.version}`, `node ${process.version}`, `os ${platform()} ${release()} ${arch()}`],
    ],
    ["doctor", [...i.doctorLines, `healthy: ${i.healthy ? "yes" : "no"}`]],
    [
      "config",
      [
        `sources: ${loaded.sources.length ? loaded.sources.join(" + ") : "defaults (no config file)"}`,
        JSON.stringify(censorConfig(loaded.config), null, 2),
      ],
    ],
    ["environment (names only)", [setNames.length ? setNames.join(", ") : "none of parley's settings"]],
    ["audit summary", auditSummary(loaded.home)],
    ["log", logLines],
  ];
  const body = sections.flatMap(([title, lines]) => [`## ${title}`, ...lines, ""]);
  return [`# parley diagnostics, ${i.nowIso}`, "", ...body].map(text).join("\n");
}

export function writeDiagnostics(file: string, i: DiagnosticsInput): void {
  // Owner-only: scrubbed, but it still holds user ids and paths.
  writeFileSync(file, diagnosticsText(i), { mode: 0o600 });
}

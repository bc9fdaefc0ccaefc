/**
 * The `parley` command: start | channel-server | agent-tools | doctor | status | transcripts purge |
 * service | --version | --help.
 * Exit codes: 0 ok, 1 unhealthy (doctor, status), a startup or purge failure, 2 usage or
 * configuration error, 3 not running (status).
 */

import { resolve } from "node:path";
import type { Readable, Writable } from "node:stream";
import { parseArgs } from "node:util";
import { runAgentToolsBridge } from "../mcp/agent-bridge.js";
import { runChannelServer } from "../mcp/channel-server.js";
import { ParleyError } from "../messaging/base/errors.js";
import type { ChannelEntry, GrantControl } from "../messaging/channel/contract.js";
import { loadConfig, loadEnv, parleyHome, parseAgentCommand } from "./config.js";
import { writeDiagnostics } from "./diagnostics.js";
import { doctor } from "./doctor.js";
import { fromLoaded, Gateway } from "./gateway.js";
import { acquireHomeLock } from "./home-lock.js";
import { createLogger, logScrubber } from "./logging.js";
import { statusCommand } from "./ops/status-cli.js";
import { CHANNELS } from "./registry.js";
import { serviceCommand } from "./service-cli.js";
import { purgeScope, purgeTranscripts } from "./transcripts-cli.js";
import { parleyVersion } from "./version.js";

export const HELP = `parley: make an AI agent reachable from the chat apps people already use

Usage:
  parley start [--config FILE] [--host H] [--port N] [--agent "COMMAND ARGS…"] [--allow-remote]
  parley channel-server [--config FILE] [--host H] [--port N] [--allow-remote]
  parley doctor [--config FILE] [--export FILE]
  parley status [--json]
  parley transcripts purge (--session KEY | --before DATE | --all)
  parley service (install | uninstall | status) [--print]
${channelUsage()}  parley --version
  parley --help

start    Run the gateway. With no configuration it serves the web chat on
         http://127.0.0.1:8787 with the bundled demo agent and prints the URL (with its token).
channel-server
         Serve an agent host that is already running (Claude Code, pi with channels.tools) as
         its stdio MCP channel server: the configured chat channels, allow-lists and store, with
         the host as the agent. stdout carries only the protocol (docs/channel-server.md).
doctor   Run the agent's ACP handshake (initialize, session/new, close) and report its name,
         version and capabilities or its first error; report, per channel, whether it is
         configured, incomplete (naming the missing setting) or disabled, and the store (path,
         schema, size, integrity, messages not yet answered). Never prints a secret.
         --export FILE also writes a diagnostics bundle for a bug report (versions, this report,
         the config, an audit summary, the last 1,000 log lines), every secret removed.
status   Ask the running gateway of this data home (over its owner-only socket in
         $PARLEY_HOME/run/) for its channels and their state, conversations working or
         waiting for approval, the agent pool and the messages not yet answered. Exits 0
         running and healthy, 1 degraded (a channel down, the store not answering), 3 not
         running. --json prints one JSON object for scripts. docs/operations.md.
transcripts purge
         Delete conversation history: one session's (--session KEY, as /sessions lists it), lines
         older than a date (--before 2024-05-01), or all of it (--all). Stop parley first.
         History is also pruned on its own after transcripts.retainDays (default 30).
service  Run parley as a per-user service (a systemd user unit on Linux, a launchd agent on
         macOS) that restarts when it dies and logs to $PARLEY_HOME/logs/parley.log. install
         writes the unit (--print shows it instead) and prints the commands that start it;
         uninstall removes it; status says what is installed. docs/operations.md.
${channelHelp()}
Options:
  --config FILE     Config file (default: ./parley.config.json, over $PARLEY_HOME/config.json)
  --host H          Web chat host (default 127.0.0.1; a non-loopback host needs --allow-remote)
  --port N          Web chat port (default 8787; 0 picks a free port)
  --agent "CMD…"    The ACP agent to run, e.g. --agent "gemini --acp"
  --allow-remote    Allow binding the web chat to a non-loopback host
`;

export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  /** Resolves when the process is asked to stop (SIGINT/SIGTERM). */
  stopSignal: () => Promise<string>;
  grant?: GrantControl;
  /** The OS whose service manager `parley service` writes for (default: this process's). */
  platform?: NodeJS.Platform;
  /** The protocol streams of `channel-server` and `agent-tools` (default: this process's). */
  stdio?: { stdin: Readable; stdout: Writable };
}

/** `parley <channel> <subcommand> …` lines, from the channels that declare subcommands. */
function channelUsage(): string {
  return CHANNELS.flatMap((c) =>
    Object.values(c.cli ?? {}).map((cmd) => `  parley ${c.name} ${cmd.usage} [--config FILE]\n`),
  ).join("");
}

function channelHelp(): string {
  return CHANNELS.flatMap((c) =>
    Object.entries(c.cli ?? {}).map(([name, cmd]) => `${c.name} ${name}\n         ${cmd.help}\n`),
  ).join("");
}
const COMMANDS = new Set([
  "start",
  "doctor",
  "status",
  "transcripts",
  "channel-server",
  "agent-tools",
  "service",
]);
/** Commands that take a subcommand word after them. */
const WITH_SUBCOMMAND = new Set(["transcripts", "service"]);

export async function runCli(argv: string[], io: CliIo): Promise<number> {
  // `parley whatsapp link`: a channel's own subcommands take their own arguments.
  const owner = CHANNELS.find((c) => c.cli !== undefined && c.name === argv[0]);
  if (owner) return channelCommand(owner, argv.slice(1), io);
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    io.err(`parley: ${(error as Error).message}\n\n${HELP}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const command = positionals[0];
  if (values.version && !command) {
    io.out(parleyVersion());
    return 0;
  }
  if (values.help || !command || command === "help") {
    io.out(HELP);
    return command || values.help ? 0 : 2;
  }
  if (!COMMANDS.has(command)) {
    io.err(`parley: unknown command "${command}"\n\n${HELP}`);
    return 2;
  }
  // `transcripts` and `service` take their own subcommand; start and doctor take none.
  if (positionals.length > 1 && !WITH_SUBCOMMAND.has(command)) {
    // Silently ignoring it once turned `parley start doctor` into a gateway start.
    io.err(`parley: unexpected argument "${positionals[1]}" after ${command}\n\n${HELP}`);
    return 2;
  }
  const stdio = io.stdio ?? { stdin: process.stdin, stdout: process.stdout };
  // Spawned by the ACP agent with only its environment: it needs no configuration.
  if (command === "agent-tools") return runAgentToolsBridge({ env: io.env, ...stdio, err: io.err });
  // Needs only the data home: a broken config must not stop an uninstall.
  if (command === "service") return serviceCommand(positionals.slice(1), values.print === true, io);
  // Needs only the data home too: it asks the running gateway, whose configuration is its own.
  if (command === "status") return statusCommand(parleyHome(loadEnv(io.env)), values.json === true, io);
  let loaded: ReturnType<typeof loadConfig>;
  try {
    loaded = loadConfig({
      cwd: io.cwd,
      processEnv: io.env,
      overrides: commandLineSettings(values),
      ...(values.config ? { configPath: values.config } : {}),
    });
  } catch (error) {
    io.err(`parley: ${error instanceof ParleyError ? error.message : String(error)}`);
    return 2;
  }
  if (command === "doctor") {
    const report = await doctor(loaded, { cwd: io.cwd });
    // The credential redaction only (a channel line names its tenant on purpose): a configured
    // agent line can carry a token in its arguments.
    const scrubDoctor = logScrubber([]);
    for (const line of report.lines) io.out(String(scrubDoctor(line)));
    if (values.export) {
      const file = resolve(io.cwd, values.export);
      try {
        writeDiagnostics(file, {
          loaded,
          channels: CHANNELS,
          doctorLines: report.lines,
          healthy: report.healthy,
          version: parleyVersion(),
          nowIso: new Date().toISOString(),
        });
      } catch (error) {
        io.err(`parley: cannot write ${file}: ${(error as Error).message}`);
        return 1;
      }
      io.out(`diagnostics written to ${file} (secrets removed; read it before you attach it)`);
    }
    return report.healthy ? 0 : 1;
  }
  if (command === "transcripts") return transcripts(positionals.slice(1), values, loaded.home, io);
  // The secret values parley holds are cut out of every log line verbatim, whatever their shape.
  const secrets = CHANNELS.flatMap((c) => c.secretEnv).flatMap((name) => loaded.env[name] ?? []);
  const logger = createLogger(loaded.config.logLevel, process.stderr, { secrets });
  const scrub = logScrubber(secrets);
  if (command === "channel-server")
    return runChannelServer(loaded, {
      ...stdio,
      err: (line) => io.err(String(scrub(line))),
      // The web chat's URL carries its token on purpose: the operator opens it.
      announce: io.err,
      logger,
      stopSignal: io.stopSignal,
    });
  let gateway: Gateway;
  try {
    gateway = await Gateway.start({
      ...fromLoaded(loaded),
      logger,
      announce: io.out,
      ...(io.grant ? { grant: io.grant } : {}),
    });
  } catch (error) {
    io.err(`parley: failed to start: ${scrub(String(error))}`);
    return 1;
  }
  if (gateway.running.length === 0) {
    io.err("parley: no channel started; run `parley doctor` to see why");
    await gateway.shutdown();
    return 1;
  }
  const signal = await io.stopSignal();
  logger.info(`received ${signal}; shutting down`);
  await gateway.shutdown();
  return 0;
}

async function transcripts(
  rest: string[],
  values: ReturnType<typeof parse>["values"],
  home: string,
  io: CliIo,
): Promise<number> {
  if (rest[0] !== "purge" || rest.length > 1) {
    io.err(`parley: "transcripts" takes one subcommand: purge\n\n${HELP}`);
    return 2;
  }
  let scope: ReturnType<typeof purgeScope>;
  try {
    scope = purgeScope({ session: values.session, before: values.before, all: values.all });
  } catch (error) {
    io.err(`parley: ${(error as Error).message}`);
    return 2;
  }
  try {
    const n = await purgeTranscripts(home, scope);
    io.out(`purged ${n} transcript line${n === 1 ? "" : "s"}`);
    return 0;
  } catch (error) {
    io.err(`parley: purge failed: ${error instanceof ParleyError ? error.message : String(error)}`);
    return 1;
  }
}

async function channelCommand(entry: ChannelEntry, rest: string[], io: CliIo): Promise<number> {
  const [sub = "", ...words] = rest;
  const command = entry.cli?.[sub];
  if (!command) {
    const known = Object.keys(entry.cli ?? {}).join(", ");
    io.err(`parley: "${entry.name}" takes one subcommand: ${known}\n\n${HELP}`);
    return 2;
  }
  // --config is the one option every command shares; the rest belong to the subcommand.
  const args: string[] = [];
  let configPath: string | undefined;
  for (let i = 0; i < words.length; i += 1) {
    const word = words[i] ?? "";
    if (word === "--config") configPath = words[++i];
    else if (word.startsWith("--config=")) configPath = word.slice("--config=".length);
    else args.push(word);
  }
  let loaded: ReturnType<typeof loadConfig>;
  try {
    loaded = loadConfig({ cwd: io.cwd, processEnv: io.env, ...(configPath ? { configPath } : {}) });
  } catch (error) {
    io.err(`parley: ${error instanceof ParleyError ? error.message : String(error)}`);
    return 2;
  }
  // A subcommand that works on the channel's state in the data home (WhatsApp's keys) never runs
  // beside a running gateway, which holds the same state open; one that only reads settings may.
  let lock: Awaited<ReturnType<typeof acquireHomeLock>> | undefined;
  if (!command.readsSettingsOnly) {
    try {
      lock = await acquireHomeLock(loaded.home);
    } catch (error) {
      io.err(`parley: ${error instanceof ParleyError ? error.message : String(error)}`);
      return 1;
    }
  }
  try {
    return await command.run({
      settings: loaded.config.channels[entry.name] ?? {},
      env: loaded.env,
      home: loaded.home,
      args,
      out: io.out,
      err: io.err,
      stopSignal: io.stopSignal,
    });
  } catch (error) {
    io.err(`parley: ${entry.name} ${sub} failed: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  } finally {
    await lock?.release();
  }
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: "string" },
      host: { type: "string" },
      port: { type: "string" },
      agent: { type: "string" },
      "allow-remote": { type: "boolean" },
      session: { type: "string" },
      before: { type: "string" },
      all: { type: "boolean" },
      export: { type: "string" },
      print: { type: "boolean" },
      json: { type: "boolean" },
      version: { type: "boolean", short: "v" },
      help: { type: "boolean", short: "h" },
    },
  });
}

/** The command line's settings, as raw config laid over every file (the operator typed them). */
function commandLineSettings(values: ReturnType<typeof parse>["values"]): Record<string, unknown> {
  const webchat: Record<string, unknown> = {};
  if (values.host) webchat.host = values.host;
  if (values.port !== undefined) {
    const port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw new ParleyError("CONFIG_INVALID", `--port must be an integer 0-65535, got "${values.port}"`);
    }
    webchat.port = port;
  }
  if (values["allow-remote"]) webchat.allowRemote = true;
  return {
    ...(Object.keys(webchat).length > 0 ? { webchat } : {}),
    // The command line names the agent; its pool settings (processes, idle time) stay configured.
    ...(values.agent ? { agent: parseAgentCommand(values.agent) } : {}),
  };
}

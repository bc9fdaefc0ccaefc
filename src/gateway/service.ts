/**
 * `parley service install | uninstall | status`: parley as a per-user service that starts at login
 * and restarts when it dies. Linux: a systemd user unit; macOS: a launchd agent (iMessage runs on
 * the Mac). The unit names only the data home, the node binary, the installed `parley` and PATH:
 * secrets stay in the environment file parley reads itself ($PARLEY_HOME/.env), never in the unit.
 * Output goes to $PARLEY_HOME/logs/parley.log, which `parley doctor --export` reads.
 * install and uninstall only write and remove the file; the service manager is told by the
 * operator, with the commands printed (a test or a dry run never starts a real service).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ParleyError } from "../messaging/base/errors.js";

/** The first line of every unit parley writes: how install and uninstall know a file is theirs. */
export const SERVICE_MARKER = "Written by `parley service install`; `parley service uninstall` removes it.";
/** The systemd unit's name and the launchd job's label. */
export const SERVICE_NAME = "parley";
/** Seconds between a crash and the restart: a crash loop does not spin a core. */
export const RESTART_DELAY_SECONDS = 5;

export type ServicePlatform = "systemd" | "launchd";

export interface ServiceInputs {
  platform: ServicePlatform;
  /** The data home ($PARLEY_HOME), absolute. */
  home: string;
  /** The node binary that runs parley (process.execPath at install time). */
  node: string;
  /** The installed `parley` entry (bin/parley.mjs of this package). */
  parley: string;
  /** The PATH the agent command is looked up on (the installing shell's). */
  path: string;
}

/** Where parley's service output goes; `doctor --export` reads it. */
export function serviceLogPath(home: string): string {
  return join(home, "logs", "parley.log");
}

/** bin/parley.mjs of the package this module belongs to (src/ or dist/, two levels down). */
export function installedParley(): string {
  return fileURLToPath(new URL("../../bin/parley.mjs", import.meta.url));
}

/** The service kind for an OS, or undefined where parley has none. */
export function servicePlatformOf(os: NodeJS.Platform): ServicePlatform | undefined {
  if (os === "linux") return "systemd";
  if (os === "darwin") return "launchd";
  return undefined;
}

/** Where the unit lives for the user whose HOME (and XDG_CONFIG_HOME) is given. */
export function unitPath(
  platform: ServicePlatform,
  env: Readonly<Record<string, string | undefined>>,
): string {
  const home = env.HOME;
  if (!home)
    throw new ParleyError("CONFIG_INVALID", "HOME is not set: cannot tell where the service unit goes");
  if (platform === "launchd") return join(home, "Library", "LaunchAgents", `${SERVICE_NAME}.plist`);
  // An XDG_CONFIG_HOME that is not absolute is invalid per the XDG spec and is ignored.
  const config = env.XDG_CONFIG_HOME?.startsWith("/") ? env.XDG_CONFIG_HOME : join(home, ".config");
  return join(config, "systemd", "user", `${SERVICE_NAME}.service`);
}

/** Control characters would end a unit line or an XML text early: no path carries one. */
function checkValue(name: string, value: string): string {
  if (/[\u0000-\u001f\u007f]/.test(value))
    throw new ParleyError("CONFIG_INVALID", `${name} contains a control character: ${JSON.stringify(value)}`);
  return value;
}

/** One systemd word: quoted, with backslash and quote escaped and % doubled (specifiers). */
function systemdWord(value: string): string {
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/%/g, "%%")}"`;
}

function systemdPath(value: string): string {
  return value.replace(/%/g, "%%");
}

export function systemdUnit(i: ServiceInputs): string {
  const log = serviceLogPath(i.home);
  const lines = [
    `# ${SERVICE_MARKER}`,
    "[Unit]",
    "Description=parley chat gateway",
    "",
    "[Service]",
    "Type=simple",
    // Secrets are read by parley from $PARLEY_HOME/.env; only the data home and PATH are set here.
    `Environment=${systemdWord(`PARLEY_HOME=${checkValue("data home", i.home)}`)}`,
    `Environment=${systemdWord(`PATH=${checkValue("PATH", i.path)}`)}`,
    // A path setting takes the rest of the line as it is (no quotes); only specifiers need %%.
    `WorkingDirectory=${systemdPath(i.home)}`,
    `ExecStart=${systemdWord(checkValue("node", i.node))} ${systemdWord(checkValue("parley", i.parley))} start`,
    "Restart=always",
    `RestartSec=${RESTART_DELAY_SECONDS}`,
    // append: keeps earlier runs' lines (a crash's last words survive the restart).
    `StandardOutput=append:${systemdPath(log)}`,
    `StandardError=append:${systemdPath(log)}`,
    "",
    "[Install]",
    "WantedBy=default.target",
    "",
  ];
  return lines.join("\n");
}

function xml(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

export function launchdPlist(i: ServiceInputs): string {
  const log = xml(serviceLogPath(checkValue("data home", i.home)));
  const string = (v: string) => `<string>${xml(v)}</string>`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    `<!-- ${SERVICE_MARKER} -->`,
    '<plist version="1.0">',
    "<dict>",
    `  <key>Label</key>${string(SERVICE_NAME)}`,
    "  <key>ProgramArguments</key>",
    `  <array>${string(checkValue("node", i.node))}${string(checkValue("parley", i.parley))}${string("start")}</array>`,
    // Secrets are read by parley from $PARLEY_HOME/.env; only the data home and PATH are set here.
    "  <key>EnvironmentVariables</key>",
    `  <dict><key>PARLEY_HOME</key>${string(i.home)}<key>PATH</key>${string(checkValue("PATH", i.path))}</dict>`,
    `  <key>WorkingDirectory</key>${string(i.home)}`,
    "  <key>RunAtLoad</key><true/>",
    "  <key>KeepAlive</key><true/>",
    // launchd's restart delay: it waits this long before running a job that exited again.
    `  <key>ThrottleInterval</key><integer>${RESTART_DELAY_SECONDS}</integer>`,
    `  <key>StandardOutPath</key><string>${log}</string>`,
    `  <key>StandardErrorPath</key><string>${log}</string>`,
    "</dict>",
    "</plist>",
    "",
  ].join("\n");
}

export function serviceUnit(i: ServiceInputs): string {
  return i.platform === "systemd" ? systemdUnit(i) : launchdPlist(i);
}

/** Whether the file at `path` is one parley wrote (its marker is in its first lines). */
export function writtenByParley(text: string): boolean {
  return text.split("\n", 4).some((line) => line.includes(SERVICE_MARKER));
}

/** What the operator runs next; parley never drives the service manager itself. */
export function activationCommands(platform: ServicePlatform, path: string): string[] {
  return platform === "systemd"
    ? [
        "systemctl --user daemon-reload",
        `systemctl --user enable --now ${SERVICE_NAME}.service`,
        // A user unit otherwise stops at logout and starts only at the next login.
        'loginctl enable-linger "$USER"   # keep it running without a login session',
      ]
    : [`launchctl bootstrap gui/$(id -u) ${shellWord(path)}`];
}

export function deactivationCommands(platform: ServicePlatform, path: string): string[] {
  return platform === "systemd"
    ? [`systemctl --user disable --now ${SERVICE_NAME}.service`, "systemctl --user daemon-reload"]
    : [`launchctl bootout gui/$(id -u) ${shellWord(path)}`];
}

function shellWord(value: string): string {
  return /^[A-Za-z0-9_./-]+$/.test(value) ? value : `'${value.replace(/'/g, "'\\''")}'`;
}

export interface InstallResult {
  path: string;
  /** True when an earlier unit of parley's was replaced. */
  replaced: boolean;
}

/** Write the unit (creating the log folder); refuse to replace a file parley did not write. */
export function installService(i: ServiceInputs, path: string): InstallResult {
  const replaced = existsSync(path);
  if (replaced && !writtenByParley(readFileSync(path, "utf8")))
    throw new ParleyError(
      "REFUSED",
      `${path} exists and was not written by parley; move it away or remove it first (it is left untouched)`,
    );
  mkdirSync(dirname(serviceLogPath(i.home)), { recursive: true, mode: 0o700 });
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, serviceUnit(i), { mode: 0o644 });
  return { path, replaced };
}

/** Remove the unit parley wrote; false when there was none. A foreign file is refused. */
export function uninstallService(path: string): boolean {
  if (!existsSync(path)) return false;
  if (!writtenByParley(readFileSync(path, "utf8")))
    throw new ParleyError("REFUSED", `${path} was not written by parley; it is left untouched`);
  rmSync(path);
  return true;
}

export interface ServiceStatus {
  path: string;
  state: "absent" | "foreign" | "installed";
  /** The `parley` the unit runs, when it is parley's. */
  runs?: string;
  /** Whether that file still exists (an uninstalled or moved package leaves a unit that cannot start). */
  runsExists?: boolean;
}

export function serviceStatus(platform: ServicePlatform, path: string): ServiceStatus {
  if (!existsSync(path)) return { path, state: "absent" };
  const text = readFileSync(path, "utf8");
  if (!writtenByParley(text)) return { path, state: "foreign" };
  const runs = platform === "systemd" ? execStartParley(text) : plistParley(text);
  return runs === undefined
    ? { path, state: "installed" }
    : { path, state: "installed", runs, runsExists: existsSync(runs) };
}

/** The second word of ExecStart (node, then parley), unquoted. */
function execStartParley(unit: string): string | undefined {
  const line = unit.split("\n").find((l) => l.startsWith("ExecStart="));
  const words = line?.match(/"((?:[^"\\]|\\.)*)"/g) ?? [];
  const word = words[1];
  return word === undefined ? undefined : word.slice(1, -1).replace(/\\(.)/g, "$1").replace(/%%/g, "%");
}

/** The second <string> of ProgramArguments, unescaped. */
function plistParley(plist: string): string | undefined {
  const args = /<key>ProgramArguments<\/key>\s*<array>(.*?)<\/array>/s.exec(plist)?.[1] ?? "";
  const word = [...args.matchAll(/<string>(.*?)<\/string>/gs)][1]?.[1];
  return word
    ?.replace(/&quot;/g, '"')
    .replace(/&gt;/g, ">")
    .replace(/&lt;/g, "<")
    .replace(/&amp;/g, "&");
}

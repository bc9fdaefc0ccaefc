/** `parley service install | uninstall | status [--print]`: the CLI face of service.ts. */
import { ParleyError } from "../messaging/base/errors.js";
import type { CliIo } from "./cli.js";
import { loadEnv, parleyHome } from "./config.js";
import {
  activationCommands,
  deactivationCommands,
  installedParley,
  installService,
  type ServiceInputs,
  serviceLogPath,
  servicePlatformOf,
  serviceStatus,
  serviceUnit,
  uninstallService,
  unitPath,
} from "./service.js";

const SUBCOMMANDS = ["install", "uninstall", "status"];

export async function serviceCommand(rest: string[], print: boolean, io: CliIo): Promise<number> {
  const [sub] = rest;
  if (sub === undefined || !SUBCOMMANDS.includes(sub) || rest.length > 1) {
    io.err(`parley: "service" takes one subcommand: ${SUBCOMMANDS.join(", ")}`);
    return 2;
  }
  if (print && sub !== "install") {
    io.err("parley: --print goes with service install");
    return 2;
  }
  const os = io.platform ?? process.platform;
  const platform = servicePlatformOf(os);
  if (!platform) {
    io.err(`parley: no service manager support on ${os}; run \`parley start\` under your own supervisor`);
    return 2;
  }
  const env = loadEnv(io.env);
  const inputs: ServiceInputs = {
    platform,
    home: parleyHome(env),
    node: process.execPath,
    parley: installedParley(),
    path: io.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
  };
  try {
    const path = unitPath(platform, io.env);
    if (sub === "install" && print) {
      io.out(serviceUnit(inputs));
      return 0;
    }
    if (sub === "install") {
      const done = installService(inputs, path);
      io.out(`${done.replaced ? "updated" : "wrote"} ${path}`);
      io.out(
        `it runs ${inputs.parley} with PARLEY_HOME=${inputs.home}; logs go to ${serviceLogPath(inputs.home)}`,
      );
      io.out("start it now and at every login with:");
      for (const line of activationCommands(platform, path)) io.out(`  ${line}`);
      return 0;
    }
    if (sub === "uninstall") {
      // Printed first: the manager must stop the job before its file is gone.
      if (!uninstallService(path)) {
        io.out(`no service unit at ${path}; nothing to remove`);
        return 0;
      }
      io.out(`removed ${path}; stop the running service (if any) with:`);
      for (const line of deactivationCommands(platform, path)) io.out(`  ${line}`);
      return 0;
    }
    const status = serviceStatus(platform, path);
    if (status.state === "absent") {
      io.out(`not installed: no unit at ${path} (parley service install writes one)`);
      return 1;
    }
    if (status.state === "foreign") {
      io.out(`${path} exists but was not written by parley; install will not replace it`);
      return 1;
    }
    io.out(`installed: ${path}`);
    if (status.runs !== undefined) {
      io.out(
        `runs: ${status.runs}${status.runsExists ? "" : " (MISSING: reinstall parley, then parley service install)"}`,
      );
    }
    io.out(`logs: ${serviceLogPath(inputs.home)}`);
    io.out(
      platform === "systemd"
        ? "running state: systemctl --user status parley.service"
        : "running state: launchctl print gui/$(id -u)/parley",
    );
    return status.runsExists === false ? 1 : 0;
  } catch (error) {
    io.err(`parley: service ${sub}: ${error instanceof ParleyError ? error.message : String(error)}`);
    return 1;
  }
}

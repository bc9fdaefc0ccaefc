/**
 * `parley service install | uninstall | status`: the systemd user unit (checked by Debian's
 * systemd-analyze where it is installed) and the launchd plist (checked by parsing its XML), the
 * install/uninstall round trip in a temporary HOME, and the refusal to replace a foreign unit.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CliIo } from "../../src/gateway/cli.js";
import { runCli } from "../../src/gateway/cli.js";
import { installedParley, SERVICE_MARKER } from "../../src/gateway/service.js";

interface Run {
  code: number;
  out: string;
  err: string;
}

function sandbox() {
  const root = mkdtempSync(join(tmpdir(), "parley-service-"));
  const env = {
    HOME: join(root, "home with space"),
    XDG_CONFIG_HOME: join(root, "xdg"),
    // A space and a % in the data home: the unit must quote and escape them (specifiers).
    PARLEY_HOME: join(root, "data 100%"),
    PATH: "/usr/local/bin:/usr/bin:/bin",
  };
  mkdirSync(env.HOME, { recursive: true });
  // A secret in the data home's .env: the unit must name the file's home, never carry its values.
  mkdirSync(env.PARLEY_HOME, { recursive: true });
  writeFileSync(
    join(env.PARLEY_HOME, ".env"),
    "TELEGRAM_BOT_TOKEN=123456789:AAE-planted-service-secret-zz\n",
  );
  const run = async (argv: string[], platform: NodeJS.Platform): Promise<Run> => {
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIo = {
      out: (l) => out.push(l),
      err: (l) => err.push(l),
      env,
      cwd: root,
      platform,
      stopSignal: () => new Promise(() => {}),
    };
    const code = await runCli(argv, io);
    return { code, out: out.join("\n"), err: err.join("\n") };
  };
  return { root, env, run };
}

/** A small strict XML reader: elements, text, comments, the prolog; throws on anything malformed. */
type XmlNode = { name: string; children: XmlNode[]; text: string };
function parseXml(source: string): XmlNode {
  let i = 0;
  const skipMisc = () => {
    for (;;) {
      const rest = source.slice(i);
      const ws = /^\s+/.exec(rest);
      if (ws) i += ws[0].length;
      else if (rest.startsWith("<?")) i = source.indexOf("?>", i) + 2;
      else if (rest.startsWith("<!--")) i = source.indexOf("-->", i) + 3;
      else if (rest.startsWith("<!DOCTYPE")) i = source.indexOf(">", i) + 1;
      else return;
      if (i < 2) throw new Error("unterminated markup");
    }
  };
  const entities = (t: string) => {
    if (/&(?!(amp|lt|gt|quot|apos);)/.test(t)) throw new Error(`bad entity in ${t}`);
    return t
      .replace(/&lt;/g, "<")
      .replace(/&gt;/g, ">")
      .replace(/&quot;/g, '"')
      .replace(/&apos;/g, "'")
      .replace(/&amp;/g, "&");
  };
  const element = (): XmlNode => {
    const open = /^<([A-Za-z][\w.-]*)((?:\s+[\w.-]+="[^"<]*")*)\s*(\/?)>/.exec(source.slice(i));
    if (!open) throw new Error(`expected an element at ${i}: ${source.slice(i, i + 30)}`);
    i += open[0].length;
    const node: XmlNode = { name: open[1] as string, children: [], text: "" };
    if (open[3] === "/") return node;
    for (;;) {
      const text = /^[^<]*/.exec(source.slice(i))?.[0] ?? "";
      node.text += entities(text);
      i += text.length;
      if (source.startsWith("<!--", i)) {
        i = source.indexOf("-->", i) + 3;
      } else if (source.startsWith("</", i)) {
        const close = `</${node.name}>`;
        if (!source.startsWith(close, i)) throw new Error(`expected ${close} at ${i}`);
        i += close.length;
        return node;
      } else if (i >= source.length) throw new Error(`unclosed <${node.name}>`);
      else node.children.push(element());
    }
  };
  skipMisc();
  const root = element();
  skipMisc();
  if (i !== source.length) throw new Error("content after the root element");
  return root;
}

/** A plist <dict> as key → node. */
function dict(node: XmlNode): Map<string, XmlNode> {
  expect(node.name).toBe("dict");
  const out = new Map<string, XmlNode>();
  for (let k = 0; k < node.children.length; k += 2) {
    const key = node.children[k] as XmlNode;
    expect(key.name).toBe("key");
    out.set(key.text, node.children[k + 1] as XmlNode);
  }
  return out;
}

describe("parley service on Linux (systemd user unit)", () => {
  it("--print writes a unit that systemd-analyze verify accepts, with the data home and the installed parley and no secret", async () => {
    const { root, env, run } = sandbox();
    const printed = await run(["service", "install", "--print"], "linux");
    expect(printed.code).toBe(0);
    const unit = printed.out;
    expect(unit).toContain("Restart=always");
    expect(unit).toMatch(/^RestartSec=\d+$/m);
    // systemd reads % as a specifier: a literal one is written %%.
    const escaped = env.PARLEY_HOME.replace(/%/g, "%%");
    expect(unit).toContain(`Environment="PARLEY_HOME=${escaped}"`);
    expect(unit).toContain(`"${installedParley()}" start`);
    expect(unit).toContain(`StandardError=append:${join(escaped, "logs", "parley.log")}`);
    expect(unit).not.toContain("planted-service-secret");
    // --print writes nothing.
    expect(existsSync(join(env.XDG_CONFIG_HOME, "systemd", "user", "parley.service"))).toBe(false);

    const analyze = spawnSync("systemd-analyze", ["--version"], { encoding: "utf8" });
    if (analyze.error) {
      // Runtime branch, said aloud: CI installs systemd (.ci/run); a bare machine may lack it.
      console.warn(
        `systemd-analyze verify not run: systemd-analyze is not installed (${analyze.error.message})`,
      );
      return;
    }
    const file = join(root, "verify", "parley.service");
    mkdirSync(dirname(file), { recursive: true });
    mkdirSync(join(env.PARLEY_HOME, "logs"), { recursive: true });
    writeFileSync(file, unit);
    const verify = spawnSync("systemd-analyze", ["verify", file], { encoding: "utf8" });
    expect(verify.status, `systemd-analyze verify:\n${verify.stdout}${verify.stderr}`).toBe(0);
    // verify exits 0 on some warnings too: none may name our unit.
    expect(`${verify.stdout}${verify.stderr}`).not.toMatch(/parley\.service:\d+/);
  });

  it("install, status, uninstall round-trip under XDG_CONFIG_HOME", async () => {
    const { env, run } = sandbox();
    const path = join(env.XDG_CONFIG_HOME, "systemd", "user", "parley.service");
    expect((await run(["service", "status"], "linux")).code).toBe(1);

    const install = await run(["service", "install"], "linux");
    expect(install.code).toBe(0);
    expect(install.out).toContain(`wrote ${path}`);
    expect(install.out).toContain("systemctl --user enable --now parley.service");
    expect(readFileSync(path, "utf8").split("\n")[0]).toBe(`# ${SERVICE_MARKER}`);
    expect(existsSync(join(env.PARLEY_HOME, "logs"))).toBe(true);

    const status = await run(["service", "status"], "linux");
    expect(status.code).toBe(0);
    expect(status.out).toContain(`installed: ${path}`);
    expect(status.out).toContain(`runs: ${installedParley()}`);

    // A second install replaces parley's own unit (a moved package is fixed this way).
    expect((await run(["service", "install"], "linux")).out).toContain(`updated ${path}`);

    const removed = await run(["service", "uninstall"], "linux");
    expect(removed.code).toBe(0);
    expect(removed.out).toContain("systemctl --user disable --now parley.service");
    expect(existsSync(path)).toBe(false);
    expect((await run(["service", "uninstall"], "linux")).out).toContain("nothing to remove");
  });

  it("refuses to overwrite or remove a unit it did not write, and leaves it as it was", async () => {
    const { env, run } = sandbox();
    const path = join(env.XDG_CONFIG_HOME, "systemd", "user", "parley.service");
    mkdirSync(dirname(path), { recursive: true });
    const foreign = "[Service]\nExecStart=/usr/bin/someone-elses-parley\n";
    writeFileSync(path, foreign);

    const install = await run(["service", "install"], "linux");
    expect(install.code).toBe(1);
    expect(install.err).toContain("was not written by parley");
    expect((await run(["service", "uninstall"], "linux")).code).toBe(1);
    const status = await run(["service", "status"], "linux");
    expect(status.out).toContain("not written by parley");
    expect(readFileSync(path, "utf8")).toBe(foreign);
  });
});

describe("parley service on macOS (launchd agent)", () => {
  it("--print writes a plist that parses as XML with KeepAlive, the restart delay and logs in the data home", async () => {
    const { env, run } = sandbox();
    const printed = await run(["service", "install", "--print"], "darwin");
    expect(printed.code).toBe(0);
    const root = parseXml(printed.out);
    expect(root.name).toBe("plist");
    const plist = dict(root.children[0] as XmlNode);
    expect(plist.get("Label")?.text).toBe("parley");
    expect(plist.get("KeepAlive")?.name).toBe("true");
    expect(plist.get("RunAtLoad")?.name).toBe("true");
    expect(Number(plist.get("ThrottleInterval")?.text)).toBeGreaterThan(0);
    const args = plist.get("ProgramArguments")?.children.map((c) => c.text);
    expect(args).toEqual([process.execPath, installedParley(), "start"]);
    const vars = dict(plist.get("EnvironmentVariables") as XmlNode);
    expect(vars.get("PARLEY_HOME")?.text).toBe(env.PARLEY_HOME);
    expect([...vars.keys()].sort()).toEqual(["PARLEY_HOME", "PATH"]);
    const log = join(env.PARLEY_HOME, "logs", "parley.log");
    expect(plist.get("StandardOutPath")?.text).toBe(log);
    expect(plist.get("StandardErrorPath")?.text).toBe(log);
    expect(printed.out).not.toContain("planted-service-secret");
  });

  it("install, status, uninstall round-trip in ~/Library/LaunchAgents; a foreign plist is refused", async () => {
    const { env, run } = sandbox();
    const path = join(env.HOME, "Library", "LaunchAgents", "parley.plist");
    const install = await run(["service", "install"], "darwin");
    expect(install.code).toBe(0);
    expect(install.out).toContain("launchctl bootstrap gui/$(id -u)");
    parseXml(readFileSync(path, "utf8"));
    const status = await run(["service", "status"], "darwin");
    expect(status.out).toContain(`runs: ${installedParley()}`);
    expect((await run(["service", "uninstall"], "darwin")).code).toBe(0);
    expect(existsSync(path)).toBe(false);

    const foreign = '<?xml version="1.0"?><plist version="1.0"><dict/></plist>\n';
    writeFileSync(path, foreign);
    expect((await run(["service", "install"], "darwin")).code).toBe(1);
    expect(readFileSync(path, "utf8")).toBe(foreign);
  });

  it("says so on a platform with no service manager support, and rejects stray words", async () => {
    const { run } = sandbox();
    expect((await run(["service", "install"], "win32")).code).toBe(2);
    expect((await run(["service"], "linux")).code).toBe(2);
    expect((await run(["service", "restart"], "linux")).code).toBe(2);
    expect((await run(["service", "status", "--print"], "linux")).code).toBe(2);
  });
});

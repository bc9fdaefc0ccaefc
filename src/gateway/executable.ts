/** Where a command would be found when spawned (without a shell): a path, or a PATH lookup. */
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    // Missing, unreadable or not executable: all mean "would not start".
    return false;
  }
}

/** The file `command` resolves to, or undefined. A command with a slash is a path (from `cwd`). */
export function findExecutable(command: string, pathVar: string, cwd: string): string | undefined {
  if (command === "") return undefined;
  if (command.includes("/")) {
    const path = isAbsolute(command) ? command : resolve(cwd, command);
    return isExecutableFile(path) ? path : undefined;
  }
  for (const dir of pathVar.split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, command);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

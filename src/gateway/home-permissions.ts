/**
 * The data home holds the bot tokens' file ($PARLEY_HOME/.env), the session store and the audit
 * log: readable by this user alone. `0700`/`0600` used to apply only to what parley itself created;
 * now a start tightens whatever it finds (and says so), and doctor reports what is loose without
 * changing anything. Group- or world-readable means any other account on the machine reads tokens.
 */
import { chmodSync, existsSync, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";

export interface LoosePath {
  path: string;
  mode: number;
  want: number;
}

/** Only the owner may read or write: anything in the group or other bits is loose. */
const LOOSE = 0o077;
/** Nested folders (trust/, routing/, a channel's auth state) are checked this deep. */
const MAX_DEPTH = 3;

/** Every path under the home (the home included) with group or other permission bits set. */
export function loosePaths(home: string): LoosePath[] {
  if (!existsSync(home)) return [];
  const out: LoosePath[] = [];
  const visit = (path: string, depth: number) => {
    const st = lstatSync(path);
    // A symlink's own mode means nothing; what it points to is not ours to change.
    if (st.isSymbolicLink()) return;
    const mode = st.mode & 0o777;
    // Only group and other lose their bits: the owner keeps what it had (a script's execute bit).
    if (mode & LOOSE) out.push({ path, mode, want: mode & ~LOOSE });
    if (st.isDirectory() && depth < MAX_DEPTH)
      for (const name of readdirSync(path)) visit(join(path, name), depth + 1);
  };
  visit(home, 0);
  return out;
}

/** Tighten every loose path; returns what was changed (for one warning line each). */
export function secureHome(home: string): LoosePath[] {
  const loose = loosePaths(home);
  for (const p of loose) chmodSync(p.path, p.want);
  return loose;
}

export const octal = (mode: number) => `0${mode.toString(8)}`;

/**
 * The processes a parley started, read from /proc (Linux): every live descendant of a pid, with
 * its resident memory. Agents run in process groups of their own, so they are found through the
 * parent chain, not the group. Shared by the chat-level acceptance tests and the load bench.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";

export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** Resident set size in KiB. */
  rssKib: number;
  /** The command line, arguments joined by spaces. */
  cmdline: string;
}

function read(pid: number): ProcessInfo | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // fields: state ppid pgrp ...; a zombie is not a running process.
    if (fields[0] === "Z") return null;
    const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
    return { pid, ppid: Number(fields[1]), rssKib: Number(rss?.[1] ?? 0), cmdline };
  } catch {
    return null; // exited while scanning
  }
}

/** Every live descendant of `root` (children, their children, …). Empty off Linux. */
export function descendants(root: number): ProcessInfo[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const all = entries.filter((e) => /^\d+$/.test(e)).flatMap((e) => read(Number(e)) ?? []);
  const children = new Map<number, ProcessInfo[]>();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const out: ProcessInfo[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift() as number) ?? []) {
      out.push(child);
      queue.push(child.pid);
    }
  }
  return out;
}

/** Resident memory of one process in KiB (0 when it is gone). */
export function rssKib(pid: number): number {
  return read(pid)?.rssKib ?? 0;
}

/** The process still has a /proc entry: running, or dead but not yet reaped by its parent (a zombie). */
export function unreaped(pid: number): boolean {
  return existsSync(`/proc/${pid}`);
}

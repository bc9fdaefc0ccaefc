/**
 * `feishu.domain`: which platform parley talks to, and the ONE origin the app secret and tenant
 * token go to (REST calls and the long connection's endpoint discovery both). `feishu` and `lark`
 * name the two public platforms; anything else must be an https origin (a proxy, a private
 * deployment). Plain http is accepted only on the loopback interface (a local proxy, the test fake):
 * a credential must never cross a network in clear text.
 */
import { z } from "zod";

export const FEISHU_ORIGINS = {
  feishu: "https://open.feishu.cn",
  lark: "https://open.larksuite.com",
} as const;

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

export interface ResolvedDomain {
  /** scheme://host[:port], no trailing slash: what the SDK joins its paths to. */
  origin: string;
  /** How doctor and the logs name it: "Feishu", "Lark" or the origin itself. */
  label: string;
}

/** Why `value` is not a usable domain, or null when it is. */
export function domainProblem(value: string): string | null {
  const name = value.trim().toLowerCase();
  if (name === "feishu" || name === "lark") return null;
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return 'not "feishu", "lark" or an https origin';
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && LOOPBACK.has(url.hostname)))
    return "not https (plain http is accepted on the loopback interface only)";
  if (url.username || url.password) return "an origin must not carry credentials";
  if ((url.pathname !== "/" && url.pathname !== "") || url.search || url.hash)
    return "an origin has no path, query or fragment (scheme://host[:port])";
  return null;
}

/** The origin a valid domain setting names (see `domainProblem`). */
export function resolveDomain(value: string): ResolvedDomain {
  const name = value.trim().toLowerCase();
  if (name === "feishu") return { origin: FEISHU_ORIGINS.feishu, label: "Feishu" };
  if (name === "lark") return { origin: FEISHU_ORIGINS.lark, label: "Lark" };
  const origin = new URL(value.trim()).origin;
  return { origin, label: origin };
}

/** The zod form: a bad value is a configuration error naming the key and why. */
export const domainSetting = z
  .string()
  .trim()
  .superRefine((value, ctx) => {
    const problem = domainProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .default("feishu");

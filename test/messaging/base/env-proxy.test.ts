/** The one per-URL proxy decision: scheme picks the variable, NO_PROXY and loopback go direct. */
import { describe, expect, it } from "vitest";
import {
  describeProxy,
  envProxyFor,
  isLoopbackHost,
  noProxyMatches,
} from "../../../src/messaging/base/env-proxy.js";

const via = (url: string, env: Record<string, string>) => envProxyFor(url, env)?.href ?? null;

describe("envProxyFor", () => {
  it("HTTPS_PROXY for https and wss, HTTP_PROXY for http and ws; lowercase first", () => {
    const env = { HTTPS_PROXY: "http://secure.proxy:3128", HTTP_PROXY: "http://plain.proxy:8080" };
    expect(via("https://webexapis.com/v1", env)).toBe("http://secure.proxy:3128/");
    expect(via("wss://mercury.wbx2.com/socket", env)).toBe("http://secure.proxy:3128/");
    expect(via("http://example.com/", env)).toBe("http://plain.proxy:8080/");
    expect(via("ws://example.com/", env)).toBe("http://plain.proxy:8080/");
    expect(
      via("https://webexapis.com/v1", { https_proxy: "http://lower:1", HTTPS_PROXY: "http://upper:2" }),
    ).toBe("http://lower:1/");
    expect(via("https://webexapis.com/v1", { HTTP_PROXY: "http://plain.proxy:8080" })).toBeNull();
    expect(via("https://webexapis.com/v1", { HTTPS_PROXY: "  " })).toBeNull();
  });

  it("a proxy without a scheme is plain http; any other scheme is a clear error", () => {
    expect(via("https://webexapis.com/", { HTTPS_PROXY: "proxy.corp:3128" })).toBe("http://proxy.corp:3128/");
    expect(() => via("https://webexapis.com/", { HTTPS_PROXY: "socks5://proxy.corp:1080" })).toThrow(
      /HTTPS_PROXY must be an http:\/\/ or https:\/\/ proxy/,
    );
    expect(() => via("https://webexapis.com/", { HTTPS_PROXY: "http://[bad" })).toThrow(
      /HTTPS_PROXY is not a URL/,
    );
  });

  it("loopback always goes direct", () => {
    const env = { HTTPS_PROXY: "http://p:1", HTTP_PROXY: "http://p:1" };
    for (const url of [
      "http://127.0.0.1:9/",
      "https://127.8.9.10/",
      "http://[::1]:9/",
      "https://localhost/",
      "http://a.localhost/",
    ])
      expect(via(url, env), url).toBeNull();
    expect(isLoopbackHost("128.0.0.1")).toBe(false);
    expect(isLoopbackHost("localhost.example")).toBe(false);
  });

  it("NO_PROXY: names and their subdomains, a leading dot or *., ports, * for all", () => {
    expect(noProxyMatches("webex.com", "webex.com", "443")).toBe(true);
    expect(noProxyMatches("webex.com", "api.webex.com", "443")).toBe(true);
    expect(noProxyMatches(".webex.com", "api.webex.com", "443")).toBe(true);
    expect(noProxyMatches("*.webex.com", "api.webex.com", "443")).toBe(true);
    // A suffix match is on a label boundary only.
    expect(noProxyMatches("webex.com", "evilwebex.com", "443")).toBe(false);
    expect(noProxyMatches("webex.com:8443", "api.webex.com", "443")).toBe(false);
    expect(noProxyMatches("webex.com:443", "api.webex.com", "443")).toBe(true);
    expect(noProxyMatches("a.example, 10.0.0.5 webex.com", "webex.com", "443")).toBe(true);
    expect(noProxyMatches("10.0.0.5", "10.0.0.50", "443")).toBe(false);
    expect(noProxyMatches("*", "anything.example", "80")).toBe(true);
    expect(noProxyMatches("", "webex.com", "443")).toBe(false);
    const env = { HTTPS_PROXY: "http://p:1", no_proxy: ".wbx2.com" };
    expect(via("wss://mercury.wbx2.com/x", env)).toBeNull();
    expect(via("https://webexapis.com/v1", env)).toBe("http://p:1/");
  });

  it("a proxy is described without its credentials", () => {
    expect(describeProxy(new URL("http://user:secret@proxy.corp:3128"))).toBe("http://proxy.corp:3128");
  });
});

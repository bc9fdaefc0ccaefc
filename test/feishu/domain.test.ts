/** `feishu.domain`: the names of the two platforms, an https origin, and what is refused (and why). */
import { describe, expect, it } from "vitest";
import { domainProblem, resolveDomain } from "../../src/feishu/domain.js";

describe("feishu.domain", () => {
  it("feishu and lark name the two public platforms; an https origin is itself", () => {
    expect(resolveDomain("feishu")).toEqual({ origin: "https://open.feishu.cn", label: "Feishu" });
    expect(resolveDomain(" Lark ")).toEqual({ origin: "https://open.larksuite.com", label: "Lark" });
    expect(resolveDomain("https://feishu.example.com:8443/")).toEqual({
      origin: "https://feishu.example.com:8443",
      label: "https://feishu.example.com:8443",
    });
  });

  it("plain http only on loopback; no credentials, path, query or fragment", () => {
    expect(domainProblem("http://127.0.0.1:9000")).toBeNull();
    expect(domainProblem("http://open.feishu.cn")).toMatch(/not https/);
    expect(domainProblem("https://u:p@open.feishu.cn")).toMatch(/credentials/);
    expect(domainProblem("https://open.feishu.cn/open-apis")).toMatch(/no path/);
    expect(domainProblem("https://open.feishu.cn/?x=1")).toMatch(/no path/);
    expect(domainProblem("larksuite")).toMatch(/not "feishu", "lark"/);
  });
});

// Issue 11 §3: `spool compact` on tool input nested 5,000 deep printed a bare "Maximum call stack size
// exceeded"; it must name the message and write nothing.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const bin = new URL("../../dist/bin/main.js", import.meta.url).pathname;
const cwd = mkdtempSync(join(tmpdir(), "spool-hostile-compact-"));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

describe("Tool input nested 5,000 deep", () => {
  it("compact names the message index in one clear line, exits 2 and writes nothing to stdout", () => {
    const deep = '{"a":'.repeat(5000) + "{}" + "}".repeat(5000);
    const file = join(cwd, "deep.json");
    writeFileSync(
      file,
      `[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"bash","input":${deep}}]},` +
        `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"${"x".repeat(100_000)}"}]}]`,
    );
    const r = spawnSync(process.execPath, [bin, "compact", file], { cwd, encoding: "utf8" });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("message 1 is nested more than 1000 levels deep (at message[1].content[0].input.a.a");
    expect(r.stderr).not.toContain("Maximum call stack");
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it("input nested 900 deep (deep but real) still compacts", () => {
    const deep = '{"a":'.repeat(900) + "{}" + "}".repeat(900);
    const file = join(cwd, "ok.json");
    writeFileSync(
      file,
      `[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"bash","input":${deep}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"done"}]}]`,
    );
    const r = spawnSync(process.execPath, [bin, "compact", "--workspace", join(cwd, "ws"), file], { cwd, encoding: "utf8", maxBuffer: 64 << 20 });
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveLength(3);
  });
});

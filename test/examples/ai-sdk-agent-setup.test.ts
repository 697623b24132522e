// examples/ai-sdk-agent.mjs run without what it needs, as a user might: in a project without the
// provider package, and against an endpoint that does not answer. Each ends in one line saying what
// went wrong, not a stack trace (the module loader's, or the AI SDK's default onError printing the
// whole RetryError with every attempt's stack).
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { removeTempDirs, tempDir } from "../support/temp.js";

const ROOT_DIR = new URL("../../", import.meta.url).pathname;
afterAll(removeTempDirs);

function project(packages: string[]): string {
  const dir = tempDir("spool-agent-setup-");
  mkdirSync(join(dir, "node_modules", "@ai-sdk"), { recursive: true });
  symlinkSync(ROOT_DIR, join(dir, "node_modules", "spool"), "dir");
  for (const name of packages) symlinkSync(join(ROOT_DIR, "node_modules", name), join(dir, "node_modules", name), "dir");
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "user-project", type: "module", private: true }));
  copyFileSync(join(ROOT_DIR, "examples", "ai-sdk-agent.mjs"), join(dir, "agent.mjs"));
  return dir;
}

const run = (cwd: string) =>
  spawnSync(process.execPath, ["agent.mjs", "run the tests"], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, SPOOL_AGENT_BASE_URL: "http://127.0.0.1:1/v1", SPOOL_AGENT_VIEWER: "0" },
  });

it("without @ai-sdk/openai-compatible installed: one line naming it and the install command, exit 2", () => {
  const r = run(project(["ai"]));
  expect(r.stderr).toBe(
    "agent: @ai-sdk/openai-compatible is not installed; the agent needs ai and @ai-sdk/openai-compatible next to spool: npm install ai @ai-sdk/openai-compatible\n",
  );
  expect(r.status).toBe(2);
});

it("an endpoint that does not answer: the provider's error in one line, exit 1, no stack", () => {
  const r = run(project(["ai", "@ai-sdk/openai-compatible"]));
  expect(r.stderr).toMatch(/^spool: session \S+\nagent: Failed after 3 attempts\. Last error: AI_APICallError: Cannot connect to API: [^\n]+\n$/);
  expect(r.status).toBe(1);
}, 60_000);

// The README's AI SDK example, taken from README.md as it stands and run as a harness author would
// (`spool/ai-sdk` resolved through the package's exports, a real provider package) against a server
// that drops the connection mid-response. That failure does not come as an `error` part: it rejects the
// `for await` loop. The example as first written then never reached `close`: the process died with the
// session open, and `spool sessions` later found it interrupted by a dead writer, its reason lost.
import { execFile, spawn } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";
import { runSpool } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

const ROOT_DIR = new URL("../../", import.meta.url).pathname;
afterAll(removeTempDirs);

/** The README's TypeScript block that imports spool/ai-sdk, with `model` bound to the provider at BASE_URL. */
function readmeExample(): string {
  const readme = readFileSync(join(ROOT_DIR, "README.md"), "utf8");
  const start = readme.indexOf('```ts\nimport { streamText, isStepCount } from "ai";\nimport { createSpool } from "spool/ai-sdk";');
  expect(start, "the README's AI SDK example").toBeGreaterThanOrEqual(0);
  const body = readme.slice(start + "```ts\n".length, readme.indexOf("\n```", start + 5));
  const model =
    'import { createOpenAICompatible } from "@ai-sdk/openai-compatible";\n' +
    'const model = createOpenAICompatible({ name: "fake", baseURL: process.env.BASE_URL as string, apiKey: "k" }).chatModel("m");\n';
  return model + body;
}

it("the README's streamText example type-checks as a dependent project compiles it, and records a run whose connection dropped mid-response as failed, with the provider's error as its reason", async () => {
  const dir = tempDir("spool-readme-");
  mkdirSync(join(dir, "node_modules", "@ai-sdk"), { recursive: true });
  symlinkSync(ROOT_DIR, join(dir, "node_modules", "spool"), "dir");
  symlinkSync(join(ROOT_DIR, "node_modules", "ai"), join(dir, "node_modules", "ai"), "dir");
  symlinkSync(join(ROOT_DIR, "node_modules", "@ai-sdk", "openai-compatible"), join(dir, "node_modules", "@ai-sdk", "openai-compatible"), "dir");
  symlinkSync(join(ROOT_DIR, "node_modules", "@types"), join(dir, "node_modules", "@types"), "dir");
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "harness", type: "module", private: true }));
  writeFileSync(join(dir, "agent.ts"), readmeExample());
  // skipLibCheck: the AI SDK's own declarations name `json-schema` types it does not depend on.
  const tsc = join(ROOT_DIR, "node_modules", "typescript", "bin", "tsc");
  const flags = ["--noEmit", "--strict", "--skipLibCheck", "--target", "ES2022", "--module", "NodeNext", "--moduleResolution", "NodeNext", "--types", "node"];
  await promisify(execFile)(process.execPath, [tsc, ...flags, "agent.ts"], { cwd: dir });
  // A stream that starts an answer and then loses its connection.
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = {
        id: "c",
        created: 1_700_000_000,
        model: "m",
        object: "chat.completion.chunk",
        choices: [{ index: 0, delta: { role: "assistant", content: "Let me" }, finish_reason: null }],
      };
      res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      setTimeout(() => res.destroy(), 50);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const child = spawn(process.execPath, ["agent.ts"], {
      cwd: dir,
      env: { ...process.env, BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    // The example rethrows: the process fails, as it would without spool.
    expect(code, stderr).not.toBe(0);
    expect(stderr).toContain("AI_APICallError");
  } finally {
    server.closeAllConnections();
    server.close();
  }
  const sessions = JSON.parse(runSpool(["sessions", "--root", join(dir, ".spool"), "--json"], { cwd: dir }).stdout) as { status: string; reason?: string }[];
  expect(sessions).toHaveLength(1);
  expect(sessions[0]!.status).toBe("failed");
  expect(sessions[0]!.reason).toMatch(/^AI_APICallError/);
});

// A port the user named that another program holds, for every command that listens: `spool serve
// --port`, `spool run --serve=PORT`, `spool mcp --http PORT` and `spool mcp --serve=PORT`. Each says
// in one line which port and what to do, exits 2 (bad input, as `run --serve` already did) and records
// no session. `serve` exited 1 with no advice; `mcp --http` printed Node's "listen EADDRINUSE" after
// recording a session, exit 1.
import { existsSync, readdirSync } from "node:fs";
import { createServer, type Server } from "node:net";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startSpool } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

let blocker: Server;
let port: number;
beforeAll(async () => {
  blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
  port = (blocker.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => blocker.close(resolve));
  removeTempDirs();
});

const cases: [string, (p: number) => string[], string][] = [
  [
    "serve --port",
    (p) => ["serve", "--port", String(p)],
    "spool serve: port P on 127.0.0.1 is already in use by another program; pick another with --port N, or leave --port out for any free port",
  ],
  [
    "run --serve=PORT",
    (p) => ["run", `--serve=${p}`, "--exit", "--", "touch ran"],
    "spool run: port P on 127.0.0.1 is already in use by another program; pick another with --serve=PORT, or --serve for any free port (the command was not run)",
  ],
  [
    "mcp --http",
    (p) => ["mcp", "--http", String(p)],
    "spool mcp: port P on 127.0.0.1 is already in use by another program; pick another with --http PORT, or --http 0 for any free port",
  ],
  [
    "mcp --serve=PORT",
    (p) => ["mcp", `--serve=${p}`],
    "spool mcp: port P on 127.0.0.1 is already in use by another program; pick another with --serve=PORT, or --serve for any free port",
  ],
];

for (const [name, args, line] of cases) {
  it(`${name} on a port in use: one line saying which port and what to do, exit 2, no session`, async () => {
    const cwd = tempDir("spool-port-");
    const root = join(cwd, "root");
    const spool = startSpool([...args(port), "--root", root], { cwd, stdio: ["pipe", "pipe", "pipe"] });
    const code = await Promise.race([spool.exited, new Promise<"hung">((r) => setTimeout(() => r("hung"), 15_000))]);
    if (code === "hung") spool.child.kill("SIGKILL");
    expect(spool.err()).toBe(`${line.replace("P", String(port))}\n`);
    expect(code).toBe(2);
    expect(existsSync(join(cwd, "ran"))).toBe(false);
    const sessions = join(root, "sessions");
    expect(existsSync(sessions) ? readdirSync(sessions) : []).toEqual([]);
  });
}

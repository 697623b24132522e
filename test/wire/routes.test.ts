// The viewer server's routes under hostile input: one token rule for /v1 and /files, no
// symlink leaves a session directory, malformed percent-encoding is a 400, HEAD answers like GET, and
// JSON and SSE answers are never sniffed.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { startViewerServer, type ViewerServer } from "../../src/cli/viewer-server.js";
import { createStateHost } from "../../src/harness/index.js";

const root = mkdtempSync(join(tmpdir(), "spool-routes-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A sessions dir with session `s1` holding spill/out.log, and a server over it. */
async function setup(): Promise<{ viewer: ViewerServer; base: string; token: string; sessions: string }> {
  const sessions = mkdtempSync(join(root, "sessions-"));
  mkdirSync(join(sessions, "s1", "spill"), { recursive: true });
  writeFileSync(join(sessions, "s1", "spill", "out.log"), "spilled output\n");
  const host = createStateHost();
  host.state("lane", { n: 1 });
  const viewer = await startViewerServer({ states: host, sessionsDir: sessions });
  cleanups.push(() => viewer.close());
  return { viewer, base: viewer.server.url, token: viewer.server.token, sessions };
}

/** A raw request: fetch would normalise the path and refuse some of what an attacker can send. */
function raw(
  url: string,
  path: string,
  init: { method?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method: init.method ?? "GET", headers: init.headers ?? {} }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => {
        body += d;
        // An SSE stream never ends by itself: the headers and first event are enough.
        if (res.headers["content-type"]?.startsWith("text/event-stream")) req.destroy();
      });
      const done = () => resolve({ status: res.statusCode!, headers: res.headers, body });
      res.on("end", done);
      res.on("close", done);
    });
    req.on("error", (err) => (req.destroyed ? undefined : reject(err)));
    req.end();
  });
}

describe("one token check for every protected route", () => {
  it("a right ?token= with a wrong Authorization header is refused on /files and on /v1 alike", async () => {
    const { base, token } = await setup();
    const wrongHeader = { authorization: "Bearer not-the-token" };
    for (const path of [`/files/s1/spill/out.log?token=${token}`, `/v1/states?token=${token}`]) {
      const r = await raw(base, path, { headers: wrongHeader });
      expect(r.status, path).toBe(401);
      expect(JSON.parse(r.body).code).toBe("unauthorized");
    }
  });

  it("the token is accepted in either place, on /files and /v1 alike, and refused when missing or wrong", async () => {
    const { base, token } = await setup();
    for (const route of ["/files/s1/spill/out.log", "/v1/states"]) {
      expect((await raw(base, `${route}?token=${token}`)).status, route).toBe(200);
      expect((await raw(base, route, { headers: { authorization: `Bearer ${token}` } })).status, route).toBe(200);
      expect((await raw(base, route)).status, route).toBe(401);
      expect((await raw(base, `${route}?token=${token}x`)).status, route).toBe(401);
      expect((await raw(base, `${route}?token=${token}&token=wrong`)).status, route).toBe(401);
      expect((await raw(base, route, { headers: { authorization: `Basic ${token}` } })).status, route).toBe(401);
    }
    expect((await raw(base, `/files/s1/spill/out.log?token=${token}`)).body).toBe("spilled output\n");
  });
});

describe("symlinks never lead out of a session directory", () => {
  it("a symlink in spill/ to /etc/passwd is not served", async () => {
    const { base, token, sessions } = await setup();
    symlinkSync("/etc/passwd", join(sessions, "s1", "spill", "passwd"));
    const r = await raw(base, `/files/s1/spill/passwd?token=${token}`);
    expect(r.status).toBe(404);
    expect(r.body).not.toContain("root:");
  });

  it("a session directory that is a symlink is not served", async () => {
    const { base, token, sessions } = await setup();
    const elsewhere = mkdtempSync(join(root, "elsewhere-"));
    mkdirSync(join(elsewhere, "spill"));
    writeFileSync(join(elsewhere, "spill", "secret.log"), "not in any session\n");
    symlinkSync(elsewhere, join(sessions, "s2"));
    const r = await raw(base, `/files/s2/spill/secret.log?token=${token}`);
    expect(r.status).toBe(404);
    expect(r.body).not.toContain("not in any session");
  });

  it("a spill/ that is a symlink out of the session is not served, a link that stays inside is", async () => {
    const { base, token, sessions } = await setup();
    const elsewhere = mkdtempSync(join(root, "outside-"));
    mkdirSync(join(elsewhere, "spill"));
    writeFileSync(join(elsewhere, "spill", "x.log"), "outside\n");
    mkdirSync(join(sessions, "s3"));
    symlinkSync(join(elsewhere, "spill"), join(sessions, "s3", "spill"));
    expect((await raw(base, `/files/s3/spill/x.log?token=${token}`)).status).toBe(404);
    symlinkSync("out.log", join(sessions, "s1", "spill", "alias.log"));
    const inside = await raw(base, `/files/s1/spill/alias.log?token=${token}`);
    expect(inside.status).toBe(200);
    expect(inside.body).toBe("spilled output\n");
  });

  it("a directory in spill/ is not served", async () => {
    const { base, token, sessions } = await setup();
    mkdirSync(join(sessions, "s1", "spill", "adir"));
    expect((await raw(base, `/files/s1/spill/adir?token=${token}`)).status).toBe(404);
  });
});

describe("malformed input and methods", () => {
  it("malformed percent-encoding answers 400, not 500", async () => {
    const { base, token } = await setup();
    const state = await raw(base, `/v1/state/%E0%A4%A?token=${token}`);
    expect(state.status).toBe(400);
    expect(JSON.parse(state.body).code).toBe("bad_request");
    expect((await raw(base, `/files/%E0%A4%A/spill/x?token=${token}`)).status).toBe(400);
    expect((await raw(base, `/files/s1/spill/%ZZ?token=${token}`)).status).toBe(400);
  });

  it("HEAD / answers like GET /, without a body", async () => {
    const { base } = await setup();
    const get = await raw(base, "/");
    const head = await raw(base, "/", { method: "HEAD" });
    expect(get.status).not.toBe(404);
    expect(head.status).toBe(get.status);
    expect(head.headers["content-type"]).toBe(get.headers["content-type"]);
    expect(head.headers["content-length"]).toBe(get.headers["content-length"]);
    expect(head.body).toBe("");
  });

  it("HEAD on the API and on a spill file answers like GET, without a body", async () => {
    const { base, token } = await setup();
    for (const path of [`/v1/states?token=${token}`, `/files/s1/spill/out.log?token=${token}`]) {
      const [get, head] = [await raw(base, path), await raw(base, path, { method: "HEAD" })];
      expect(head.status, path).toBe(200);
      expect(head.headers["content-type"], path).toBe(get.headers["content-type"]);
      expect(head.headers["content-length"], path).toBe(get.headers["content-length"]);
      expect(head.body, path).toBe("");
    }
  });

  it("JSON and SSE responses carry X-Content-Type-Options: nosniff", async () => {
    const { base, token } = await setup();
    const responses = [
      await raw(base, `/v1/states?token=${token}`),
      await raw(base, `/v1/state/lane?token=${token}`),
      await raw(base, `/v1/state/nope?token=${token}`),
      await raw(base, "/v1/states"),
      await raw(base, "/no/such/page"),
    ];
    expect(responses.map((r) => r.headers["content-type"]?.toString().split(";")[0])).toEqual([
      "application/json",
      "text/event-stream",
      "application/json",
      "application/json",
      "application/json",
    ]);
    for (const r of responses) expect(r.headers["x-content-type-options"]).toBe("nosniff");
  });
});

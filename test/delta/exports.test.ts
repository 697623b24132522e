// The BUILT package is importable through package.json `exports` the way a user
// would do it — a real Node process resolving the bare specifier `spool/delta`. Assumes `npm run build`
// ran first (CI and `npm test` order: build, then test).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeTempDirs, tempDir } from "../support/temp.js";

const root = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
const PINNED = [
  "track",
  "apply",
  "applyImmutable",
  "encoder",
  "decoder",
  "isBase",
  "isReplace",
  "overlap",
  "assertValidOp",
  "assertValidWireOp",
  "PathError",
  "UnsafePathError",
  "NotJsonError",
  "toJsonPatch",
];

const PROBE = `
const d = await import("spool/delta");
const r = await import("spool");
const t = d.track({ out: "", xs: [] });
const enc = d.encoder(), dec = d.decoder();
let replica = d.apply(undefined, dec.decode(JSON.parse(JSON.stringify(enc.encode(t.flush())))));
t.state.out += "hi";
t.state.xs.push(1);
replica = d.apply(replica, dec.decode(JSON.parse(JSON.stringify(enc.encode(t.flush())))));
let deep = "reachable";
try { await import("spool/dist/delta/tracker.js"); } catch (e) { deep = e.code; }
console.log(JSON.stringify({
  names: Object.keys(d).sort(),
  types: Object.fromEntries(Object.entries(d).map(([k, v]) => [k, typeof v])),
  rootDelta: Object.keys(r.delta ?? {}).sort(),
  sameTrack: r.delta?.track === d.track,
  replica,
  notJsonIsSpoolError: new d.NotJsonError([], "x") instanceof (await import("spool")).SpoolError && new d.NotJsonError([], "x").code === "SPOOL_DELTA_NOT_JSON",
  deep,
}));
`;

type ProbeResult = {
  names: string[];
  types: Record<string, string>;
  rootDelta: string[];
  sameTrack: boolean;
  replica: unknown;
  notJsonIsSpoolError: boolean;
  deep: string;
};

const run = (cwd: string, file?: string): ProbeResult => {
  const args = file ? [file] : ["--input-type=module", "-e", PROBE];
  return JSON.parse(execFileSync(process.execPath, args, { cwd, encoding: "utf8", timeout: 30_000 })) as ProbeResult;
};

describe("package exports (built dist, resolved by Node)", () => {
  let consumer = "";
  beforeAll(() => {
    expect(existsSync(join(root, "dist/delta/index.js")), "run `npm run build` before the tests").toBe(true);
    // A separate project that depends on spool: node_modules/spool -> this checkout.
    consumer = tempDir("spool-consumer-");
    mkdirSync(join(consumer, "node_modules"));
    symlinkSync(root, join(consumer, "node_modules", "spool"), "dir");
    writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "consumer", type: "module", private: true }));
    writeFileSync(join(consumer, "probe.mjs"), PROBE);
  });
  afterAll(removeTempDirs);

  const check = (res: ProbeResult) => {
    for (const name of PINNED) expect(res.names, name).toContain(name);
    for (const fn of PINNED) expect(res.types[fn], fn).toBe("function");
    expect(res.rootDelta).toEqual(res.names);
    expect(res.sameTrack).toBe(true);
    expect(res.replica).toEqual({ out: "hi", xs: [1] });
    expect(res.notJsonIsSpoolError).toBe(true);
    expect(res.deep).toBe("ERR_PACKAGE_PATH_NOT_EXPORTED");
  };

  it("a dependent project imports spool/delta and spool through exports and gets every pinned name", () => {
    check(run(consumer, "probe.mjs"));
  });

  it("the package resolves itself by name (self-reference through exports)", () => {
    check(run(root));
  });

  it("the exports entry for spool/delta points at built JS and its type declarations", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      exports: Record<string, { types: string; default: string }>;
    };
    const entry = pkg.exports["./delta"]!;
    expect(existsSync(join(root, entry.default))).toBe(true);
    const dts = readFileSync(join(root, entry.types), "utf8");
    for (const name of PINNED) expect(dts, name).toMatch(new RegExp(`\\b${name}\\b`));
    for (const type of ["Op", "WireOp", "Path", "Seg", "Tracker"]) expect(dts, type).toMatch(new RegExp(`\\b${type}\\b`));
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { detectContentKind } from "../../src/context/index.js";

describe("detectContentKind — samples of each kind", () => {
  it.each([
    ['{"name": "spool", "version": 1}', "JSON"],
    ['[\n  {"id": 1},\n  {"id": 2}\n]', "JSON"],
    ['package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println(1)\n}\n', "Go source"],
    ["import os\n\ndef main():\n    print(os.getcwd())\n", "Python source"],
    ["function add(a, b) {\n  return a + b;\n}\nmodule.exports = add;\n", "JavaScript source"],
    ["diff --git a/x.go b/x.go\nindex 1..2 100644\n--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-a\n+b\n", "diff"],
    ["--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n-old\n+new\n", "diff"],
    ["commit 3f2a1b4c5d6e7f8091a2b3c4d5e6f708192a3b4c\nAuthor: A <a@b.c>\nDate:   Mon\n\n    fix\n", "git log"],
    ["hello world, nothing special here\njust words\n", "text"],
  ])("%j → %s", (text, kind) => {
    expect(detectContentKind(text)).toBe(kind);
  });
});

describe("detectContentKind — order: a diff or git log is never labelled as source", () => {
  it("a diff of a Go file whose first lines mention package and func is a diff", () => {
    const diff = 'diff --git a/main.go b/main.go\n--- a/main.go\n+++ b/main.go\n@@ -1,3 +1,3 @@\n package main\n-import "fmt"\n+import "os"\n func main() {}\n';
    expect(detectContentKind(diff)).toBe("diff");
  });
  it("a git log whose messages say def and function is a git log", () => {
    const log = "commit a1b2c3d4e5f60718293a4b5c6d7e8f9012345678\nAuthor: x\n\n    def helper: add function parse\n    import cleanup\n";
    expect(detectContentKind(log)).toBe("git log");
  });
  it("a one-line-per-commit log is a git log", () => {
    expect(detectContentKind("a1b2c3d fix parser\nb2c3d4e add def for function\nc3d4e5f import cleanup\n")).toBe("git log");
  });
});

describe("detectContentKind — more kinds", () => {
  it.each([
    ["src/a.ts:12:  const x = 1;\nsrc/b.ts:40:  const y = 2;\nsrc/c.ts:7:function z() {}\n", "search results"],
    ["2026-11-29T10:00:00Z INFO start\n2026-11-29T10:00:01Z WARN slow\n2026-11-29T10:00:02Z ERROR boom\n", "log"],
    ["export interface Point {\n  x: number;\n}\nexport function f(p: Point): number { return p.x; }\n", "TypeScript source"],
    ["#!/usr/bin/env bash\nset -e\necho hi\n", "shell script"],
    ["<!DOCTYPE html>\n<html><body>x</body></html>", "HTML"],
    ['<?xml version="1.0"?>\n<a/>', "XML"],
    ['use std::io;\n\nfn main() {\n    println!("hi");\n}\n', "Rust source"],
    ["#include <stdio.h>\nint main(void) { return 0; }\n", "C/C++ source"],
    ["# Title\n\nSome text.\n\n- item\n- item\n", "Markdown"],
    ["a,b,c\n1,2,3\n4,5,6\n", "CSV"],
    ["[INFO] a log line, not JSON\n[INFO] another\n", "log"],
    ["", "text"],
  ])("%j → %s", (text, kind) => {
    expect(detectContentKind(text)).toBe(kind);
  });

  it("reads only a head sample: source code far past the first 4 KB does not change the label", () => {
    const text = "plain words without structure\n".repeat(400_000) + "package main\n\nfunc main() {}\n";
    expect(detectContentKind(text)).toBe("text");
  });

  it("never throws on arbitrary text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 3000 }), (s) => typeof detectContentKind(s) === "string"),
      { numRuns: 500 },
    );
  });
});

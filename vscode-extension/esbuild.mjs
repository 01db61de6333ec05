// Bundles the extension (dist/extension.js) or, with --tests, each unit test with a stubbed
// `vscode` module (out/test/*.test.js).
import * as esbuild from "esbuild";
import { readdirSync } from "node:fs";

const tests = process.argv.includes("--tests");
const common = { bundle: true, platform: "node", target: "node20", format: "cjs", sourcemap: true, logLevel: "warning" };

if (tests) {
  await esbuild.build({
    ...common,
    entryPoints: readdirSync("test").filter((f) => f.endsWith(".test.ts")).map((f) => `test/${f}`),
    outdir: "out/test",
    alias: { vscode: "./test/vscode-stub.ts" },
  });
} else {
  await esbuild.build({
    ...common,
    entryPoints: ["src/extension.ts"],
    outfile: "dist/extension.js",
    external: ["vscode"],
    minify: process.argv.includes("--minify"),
  });
}

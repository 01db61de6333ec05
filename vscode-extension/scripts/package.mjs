// Packages the extension as bloatlens-linux-x64.vsix: the minified bundle plus the linux-x64
// server binary (BLOATLENS_SERVER, else $CARGO_TARGET_DIR/release/bloatlens-lsp, else
// ../target/release/bloatlens-lsp), with its debug info stripped. Build the server first
// (`cargo build --release -p bloatlens-lsp`).
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, statSync } from "node:fs";
import * as path from "node:path";

const here = path.resolve(import.meta.dirname, "..");
const target = process.env.CARGO_TARGET_DIR ? path.resolve(here, "..", process.env.CARGO_TARGET_DIR) : path.join(here, "..", "target");
const server = process.env.BLOATLENS_SERVER ?? path.join(target, "release", "bloatlens-lsp");
if (!existsSync(server)) {
  console.error(`package: no server binary at ${server}; build it with \`cargo build --release -p bloatlens-lsp\` (or set BLOATLENS_SERVER)`);
  process.exit(1);
}
const run = (cmd, args) => execFileSync(cmd, args, { cwd: here, stdio: "inherit" });

run(process.execPath, ["esbuild.mjs", "--minify"]);
mkdirSync(path.join(here, "server"), { recursive: true });
const bundled = path.join(here, "server", "bloatlens-lsp");
copyFileSync(server, bundled);
chmodSync(bundled, 0o755);
try {
  execFileSync("strip", ["--strip-debug", bundled]);
} catch {
  console.warn("package: `strip` is missing; the server keeps its debug info");
}
const out = path.join(here, "bloatlens-linux-x64.vsix");
run(path.join(here, "node_modules", ".bin", "vsce"), [
  "package", "--target", "linux-x64", "--no-dependencies", "--allow-missing-repository", "--out", out,
]);
console.log(`package: ${out} (${(statSync(out).size / 1e6).toFixed(1)} MB)`);
